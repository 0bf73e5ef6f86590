package incremental

import (
	"context"
	"reflect"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/workspacenet/facade/graph/generated"
)

// stream resolves the list field of fc with resolve and, when @stream (dir)
// is on, the list has more than its initialCount items and generated.Streams
// marshals its type (or the connection streams its later pages:
// StreamsPages), returns the first initialCount for the initial payload and
// sends the others once it is written (streamWriter). A list inside a
// deferred part (or a stream's items) comes whole in it: its stream would
// have to start after the payload that holds the list.
func (d *Deferral) stream(ctx context.Context, fc *graphql.FieldContext, dir *ast.Directive, vars map[string]any, resolve func(context.Context) (any, error)) (any, error) {
	res, err := resolve(ctx)
	args := dir.ArgumentMap(vars)
	if on, _ := args["if"].(bool); err != nil || !on || d.schema == nil || InPart(ctx) {
		return res, err
	}
	n, _ := args["initialCount"].(int64)
	label, _ := args["label"].(string)
	list := reflect.ValueOf(res)
	src := d.pagesOf(fc)
	if n < 0 || list.Kind() != reflect.Slice {
		return res, err
	}
	first, last := int(n), src == nil
	if src != nil {
		// The initial payload's items, with as many pages fetched as they
		// need.
		for list.Len() <= first && !last {
			more, l, err := src(ctx)
			if err != nil {
				return list.Interface(), err
			}
			list, last = reflect.AppendSlice(list, reflect.ValueOf(more)), l
		}
	} else if !generated.Streams(res) {
		return res, err // not a connection's list
	}
	if last && list.Len() <= first {
		return list.Interface(), nil
	}
	w := &streamWriter{d: d, ctx: ctx, sp: d.openStream(ctx, fc.Path(), label), label: label,
		listPath: fc.Path(), sel: fc.Field.Selections, typ: fc.Field.Definition.Type.Name()}
	go w.write(list, first, src, last)
	return list.Slice(0, first).Interface(), nil
}

// openStream registers the stream of the list at listPath: its part (the
// label, else "stream <path>", as calls name it).
func (d *Deferral) openStream(ctx context.Context, listPath ast.Path, label string) *part {
	owner, item := partOf(ctx)
	p := &part{path: listPath, label: label, name: label, owner: owner, item: item, stream: true}
	if p.name == "" {
		p.name = "stream " + listPath.String()
	}
	key := partAt{p: owner, item: item}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.parts = append(d.parts, p)
	d.open++
	if d.waiting == nil {
		d.waiting = map[partAt][]*part{}
	}
	d.waiting[key] = append(d.waiting[key], p) // to be announced; it runs itself
	return p
}

// streamWriter sends the later items of one @stream, by list or by page:
// the one writer of a stream's payloads.
type streamWriter struct {
	d        *Deferral
	ctx      context.Context // the list field's
	sp       *part
	label    string
	listPath ast.Path
	sel      ast.SelectionSet
	typ      string
	groups   []group // the deferred fragments on each item
}

// write sends the items of list from index first on once the initial
// payload is written, then, with src, each later page src fetches until
// the last (last: list has every item). Without src the items resolve all
// at once and go in runs as they complete, in order (send); with src, each
// page's items go in one payload as soon as that page is fetched and its
// items' links are loaded, in order.
func (w *streamWriter) write(list reflect.Value, first int, src NextPage, last bool) {
	if !w.d.wait(w.ctx) {
		return
	}
	w.groups = w.d.groupsOf(w.sel, w.typ)
	chunk, index := list.Slice(first, list.Len()), first
	for {
		if !w.send(chunk, index, last, src != nil) || last {
			return
		}
		index += chunk.Len()
		fctx := graphql.WithFreshResponseContext(context.WithValue(w.ctx, partKey{}, partAt{p: w.sp, item: index}))
		more, l, err := src(fctx)
		if err != nil {
			graphql.AddError(fctx, err)
			w.emit(payload(graphql.Null, w.at(index), w.label, fctx), true, index)
			return
		}
		chunk, last = reflect.ValueOf(more), l
	}
}

// send resolves the items of chunk (index: the index of its first in the
// whole list), each on a response context of its own, and sends them in
// order: a run as soon as it and every item before it are complete, or
// (whole) one run once all are; last: the chunk ends the stream. false when
// the stream ended or ctx did.
func (w *streamWriter) send(chunk reflect.Value, index int, last, whole bool) bool {
	n := chunk.Len()
	if n == 0 {
		return !last || w.run(nil, nil, index, index, index, true)
	}
	items := make([]graphql.Marshaler, n)
	ictxs := make([]context.Context, n)
	done := make(chan int, n)
	for i := range n {
		go func() {
			ictx := graphql.WithFreshResponseContext(context.WithValue(w.ctx, partKey{}, partAt{p: w.sp, item: index + i}))
			w.d.deferItem(ictx, w.listPath, w.typ, chunk, i, index+i, w.groups)
			items[i], _ = w.d.objects.Item(ictx, w.sel, chunk.Interface(), i, index+i)
			ictxs[i] = ictx
			done <- i
		}()
	}
	complete := make([]bool, n)
	sent, next := 0, 0 // the items sent; those complete with every one before them
	for range n {
		select {
		case i := <-done:
			complete[i] = true
		case <-w.ctx.Done():
			return false
		}
		for next < n && complete[next] {
			next++
		}
		if next == sent || whole && next < n {
			continue
		}
		if !w.run(items[sent:next], ictxs[sent:next], index+sent, index+next, index+n, last && next == n) {
			return false
		}
		sent = next
	}
	return true
}

// run sends the items [from, to) of the list, marshalled (their errors are
// those of ictxs, read once the run is marshalled), as one payload; last:
// it ends the stream. An item that cannot be null is: the payload's data is
// null, the rest is not sent, and the stream ends with every item resolved
// so far (those before end) counted as written, so the deferred parts
// their resolution registered still run. false when the stream ended or
// ctx did.
func (w *streamWriter) run(items []graphql.Marshaler, ictxs []context.Context, from, to, end int, last bool) bool {
	var data graphql.Marshaler = graphql.Array(items)
	if slices.Contains(items, graphql.Marshaler(graphql.Null)) {
		data, last, to = graphql.Null, true, end
	}
	return w.emit(payload(data, w.at(from), w.label, ictxs...), last, to) && !last
}

// emit hands resp, a payload of the stream bringing the items before to,
// to the response handler; false if ctx ended first.
func (w *streamWriter) emit(resp *graphql.Response, last bool, to int) bool {
	select {
	case w.d.events <- event{resp: resp, p: w.sp, last: last, to: to}:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// at is the path of the item at index.
func (w *streamWriter) at(index int) ast.Path {
	return append(slices.Clip(w.listPath), ast.PathIndex(index))
}
