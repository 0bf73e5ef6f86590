package graph

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/admission"
	"github.com/workspacenet/facade/graph/generated"
	"github.com/workspacenet/facade/graph/overhttp"
	"github.com/workspacenet/facade/graph/paging"
	"github.com/workspacenet/facade/internal/accesslog"
)

// Incremental delivery (@defer, @stream) on gqlgen's execution.
//
// gqlgen defers the resolver fields of an object selected under @defer: it
// resolves them after the object, apart, and its executor's response
// handler returns each deferred part (the object's path, the label, the
// fields' data) after the initial payload, in the order the parts complete.
// The initial payload has the deferred fields as null; a client merges each
// part over it. The facade adds:
//
//   - Root fields: a root field selected only under @defer (and nullable, as
//     every Query field is) is resolved apart too, its part at the path []
//     ({"alias": value}), its errors in that part.
//   - The budget: no deferred field starts before the initial payload is
//     sent, so the initial payload's upstream calls all go before any
//     deferred part's; a deferred part's calls then rank after the initial
//     ones in the client's rate budget (callPriority) and are marked with the
//     part in the call report (callPart), which comes in the last payload.
//   - Negotiation: a client that accepts no incremental format
//     (overhttp.AcceptsIncremental), and any operation but a query, runs the
//     operation with its @defer directives removed: the whole result in one
//     ordinary response.
//   - @stream on a connection's nodes or edges (stream): the first
//     initialCount items in the initial payload, the others resolved apart
//     once it is sent, delivered in order in runs as they complete.
//   - incrementalSpec=v0.2: every part is announced (pending: id, path,
//     label) in the first payload that makes it known: the initial payload
//     for those known once the initial result is complete (gqlgen's parts
//     foreseen as the objects resolve: expectIn; the deferred root fields;
//     the streams), the payload of a part for the parts nested in it; each
//     id is completed once (the last payload completes any left open).
//   - The operation holds its admission units until its last part is
//     written (admission.Keep); the call cap, cost limit and deadline are
//     the request's, for all its parts.
type incremental struct {
	schema   graphql.ExecutableSchema // for @stream's items (generated.Stream)
	maxBytes int                      // the response size cap, over all parts (0: none)
}

var (
	_ graphql.OperationContextMutator = incremental{}
	_ graphql.OperationInterceptor    = incremental{}
)

func (incremental) ExtensionName() string                   { return "IncrementalDelivery" }
func (incremental) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext sets up the operation's deferral, or removes its
// @defer directives when it cannot be delivered in parts (@stream is then
// ignored: it runs only in a deferral).
func (x incremental) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Doc == nil || oc.Operation == nil || !strings.Contains(oc.RawQuery, "defer") && !strings.Contains(oc.RawQuery, "stream") && oc.RawQuery != "" {
		return nil
	}
	if !hasIncremental(oc.Doc, oc.Operation.SelectionSet, map[string]bool{}) {
		return nil
	}
	format := overhttp.AcceptsIncremental(oc.Headers).Format
	if oc.Operation.Operation != ast.Query || format == overhttp.NotIncremental {
		withoutDefer(oc)
		return nil
	}
	req := requestFrom(ctx)
	if req.Context == nil {
		return nil // not a request of the handler
	}
	d := &deferral{sent: make(chan struct{}), events: make(chan event, 4), out: make(chan event, 4), req: req, doc: oc.Doc, maxBytes: x.maxBytes}
	req.deferral = d
	fields, roots := oc.ResolverMiddleware, oc.RootResolverMiddleware
	if format == overhttp.IncrementalV02 {
		d.parts, d.labels = map[string]*pend{}, map[*ast.Field][]string{}
	}
	oc.ResolverMiddleware = func(ctx context.Context, next graphql.Resolver) (res any, err error) {
		fc := graphql.GetFieldContext(ctx)
		if fc != nil && fc.Field.Field != nil {
			if dir := fc.Field.Directives.ForName("stream"); dir != nil {
				res, err = d.stream(ctx, x.schema, fc, dir, oc.Variables, func(ctx context.Context) (any, error) { return fields(ctx, next) })
				d.expectIn(ctx, oc, fc, res)
				return res, err
			}
		}
		if fc != nil && fc.IsResolver && fc.Field.IsDeferred() {
			// A field gqlgen resolves apart: it starts once the initial
			// payload is sent.
			if !d.wait(ctx) {
				return nil, ctx.Err()
			}
		}
		res, err = fields(ctx, next)
		if err == nil {
			d.expectIn(ctx, oc, fc, res)
		}
		return res, err
	}
	oc.RootResolverMiddleware = func(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
		rc := graphql.GetRootFieldContext(ctx)
		if rc == nil || !rc.Field.IsDeferred() || rc.Field.Definition == nil || rc.Field.Definition.Type.NonNull {
			return roots(ctx, next)
		}
		d.root(ctx, rc.Field, func(ctx context.Context) graphql.Marshaler { return roots(ctx, next) })
		return graphql.Null // the part brings the value
	}
	return nil
}

// InterceptOperation delivers the parts of a deferred operation in order of
// completion, the upstream call report in the last.
func (incremental) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	d := requestFrom(ctx).deferral
	if d == nil {
		return next(ctx)
	}
	admission.Keep(ctx)
	return d.handler(next(ctx))
}

// deferral is the state of one operation delivered in parts.
type deferral struct {
	req  *request
	doc  *ast.QueryDocument
	sent chan struct{} // closed once the initial payload is sent
	once sync.Once
	// gate holds the context gqlgen executes the operation on, which may
	// outlive the request's (gate.end).
	gate *execGate

	roots  atomic.Int32 // deferred root fields
	events chan event   // to the pump: gqlgen's parts, root parts, idle polls
	out    chan event   // to the transport: the payloads after the initial

	pageSources map[string]nextPage // by the path of a connection streamed by page (under mu)

	maxBytes int // the response size cap over all payloads' data (0: none)
	size     int // the data sent so far

	// The parts as the incrementalSpec=v0.2 format announces them (nil in
	// the 2022 format), by part key (partKey).
	mu     sync.Mutex
	parts  map[string]*pend
	labels map[*ast.Field][]string // the @defer labels gqlgen makes parts of, in a field's objects
	order  []*pend                 // in the order they became known
	nextID int
}

// pend is a part of the response announced (pending) before its data.
type pend struct {
	overhttp.Pending
	owners    []string // the parts whose payload makes it known ("" the initial)
	announced bool
	completed bool
}

type event struct {
	resp *graphql.Response // nil: gqlgen had nothing more (idle)
	key  string            // the part's key (partKey); "" for gqlgen's
	// refused: the part was replaced by the response size cap's error,
	// which ends the response and every part still open.
	refused bool
	root    bool
	nested  bool // a root part whose selection has @defer inside
	// more: gqlgen's part: gqlgen had more pending; a stream's run or an
	// item's deferred part: more parts of the same stream follow.
	more bool
	// partial: a stream's run that its stream's next runs continue (its
	// part is not completed).
	partial bool
}

// wait waits until the initial payload is sent; false if ctx or the
// request ends first.
func (d *deferral) wait(ctx context.Context) bool {
	select {
	case <-d.sent:
		return true
	case <-ctx.Done():
		return false
	case <-d.gate.end.Done():
		return false
	}
}

// root resolves the deferred root field f apart with resolve, once the
// initial payload is sent, and sends its part to the pump.
func (d *deferral) root(ctx context.Context, f graphql.CollectedField, resolve func(context.Context) graphql.Marshaler) {
	d.roots.Add(1)
	label := f.Deferrables[0].Label
	d.expect(rootKey(f.Alias), ast.Path{}, label, []string{""})
	nested := hasDefer(d.doc, f.Selections, map[string]bool{})
	go func() {
		if !d.wait(ctx) {
			return
		}
		rctx := graphql.WithFreshResponseContext(context.WithValue(ctx, deferredRootKey{}, true))
		m := resolve(rctx)
		var b bytes.Buffer
		b.WriteString(`{` + strconv.Quote(f.Alias) + `:`)
		m.MarshalGQL(&b)
		b.WriteByte('}')
		resp := &graphql.Response{Data: b.Bytes(), Path: ast.Path{}, Label: label, Errors: graphql.GetErrors(rctx)}
		select {
		case d.events <- event{resp: resp, key: rootKey(f.Alias), root: true, nested: nested}:
		case <-ctx.Done():
		}
	}()
}

type streamKey struct{}

// openStream announces the stream of the list at listPath: its part (the
// label, else "stream <path>", as calls name it) and its part key.
func (d *deferral) openStream(ctx context.Context, listPath ast.Path, label string) (part, key string) {
	part = label
	if part == "" {
		part = "stream " + listPath.String()
	}
	d.roots.Add(1)
	key = "stream\x00" + listPath.String()
	d.expect(key, listPath, label, d.owners(ctx))
	return part, key
}

// stream resolves the list field of fc with resolve and, when @stream (dir)
// is on and the list has more than its initialCount items of a type
// generated.Stream marshals, returns the first initialCount for the
// initial payload and resolves the others apart once it is sent, all at
// once: each part is a run of them (a JSON array at the path of its first
// item), sent as soon as it and every item before it are complete, so the
// items arrive in order, as their links load.
func (d *deferral) stream(ctx context.Context, schema graphql.ExecutableSchema, fc *graphql.FieldContext, dir *ast.Directive, vars map[string]any, resolve func(context.Context) (any, error)) (any, error) {
	res, err := resolve(ctx)
	args := dir.ArgumentMap(vars)
	if on, _ := args["if"].(bool); err != nil || !on || schema == nil || inDeferredPart(ctx) {
		return res, err
	}
	n, _ := args["initialCount"].(int64)
	label, _ := args["label"].(string)
	list := reflect.ValueOf(res)
	if src := d.pagesOf(fc); src != nil && n >= 0 && list.Kind() == reflect.Slice {
		return d.streamPages(ctx, schema, fc, int(n), label, list, src)
	}
	if n < 0 || list.Kind() != reflect.Slice || int64(list.Len()) <= n {
		return res, err
	}
	if !generated.Streams(res) {
		return res, err // not a connection's list
	}
	first, total := int(n), list.Len()
	listPath, sel := fc.Path(), fc.Field.Selections
	part, key := d.openStream(ctx, listPath, label)
	go func() {
		if !d.wait(ctx) {
			return
		}
		sctx := graphql.WithFreshResponseContext(context.WithValue(ctx, streamKey{}, part))
		st := generated.NewStream(sctx, schema)
		items := make([]graphql.Marshaler, total)
		done := make(chan int, total-first)
		for i := first; i < total; i++ {
			go func() {
				items[i], _ = st.Item(sctx, sel, res, i, i)
				done <- i
			}()
		}
		complete := make([]bool, total)
		next, emitted := first, 0
		for range total - first {
			var i int
			select {
			case i = <-done:
			case <-ctx.Done():
				return
			}
			complete[i] = true
			from := next
			for next < total && complete[next] {
				next++
			}
			if next == from {
				continue
			}
			run := graphql.Array(items[from:next])
			var data graphql.Marshaler = run
			nulled := false
			for _, m := range run {
				if m == graphql.Null { // an item that cannot be null is: the rest is not sent
					data, next, nulled = graphql.Null, total, true
					break
				}
			}
			var b bytes.Buffer
			data.MarshalGQL(&b)
			errs := graphql.GetErrors(sctx)
			resp := &graphql.Response{Data: b.Bytes(), Path: append(slices.Clip(listPath), ast.PathIndex(from)), Label: label, Errors: errs[min(emitted, len(errs)):]}
			emitted = len(errs)
			tail := next == total && !nulled && st.Pending() > 0 // the items' deferred parts follow
			select {
			case d.events <- event{resp: resp, key: key, root: true, more: next < total || tail, partial: next < total}:
			case <-ctx.Done():
				return
			}
			if next == total {
				if tail {
					d.streamDefers(ctx, st)
				}
				return
			}
		}
	}()
	return list.Slice(0, first).Interface(), nil
}

// nextPage fetches the next page of a streamed connection's list: its
// items (a slice of the list's type) and whether it was the last.
type nextPage func(ctx context.Context) (items any, last bool, err error)

// streamsPages reports, for the connection field ctx resolves, whether its
// list is streamed page by page: the operation is delivered in parts, the
// connection may take more than one upstream page (first above
// paging.UpstreamMaxLimit), and it selects one list, nodes or edges (list),
// under @stream, and nothing else that needs the last page (pageInfo).
// The connection then registers its later pages (deferral.pages).
func streamsPages(ctx context.Context, first *int) (d *deferral, list string) {
	d = requestFrom(ctx).deferral
	if d == nil || first == nil || *first <= paging.UpstreamMaxLimit || inDeferredPart(ctx) {
		return nil, ""
	}
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil {
		return nil, ""
	}
	oc := graphql.GetOperationContext(ctx)
	for _, f := range graphql.CollectFields(oc, fc.Field.Selections, []string{fc.Field.Definition.Type.Name()}) {
		switch f.Name {
		case "__typename":
		case "nodes", "edges":
			dir := f.Directives.ForName("stream")
			if list != "" || dir == nil {
				return nil, ""
			}
			if on, _ := dir.ArgumentMap(oc.Variables)["if"].(bool); !on {
				return nil, ""
			}
			list = f.Name
		default:
			return nil, ""
		}
	}
	if list == "" {
		return nil, ""
	}
	return d, list
}

// pages registers next as the source of the later pages of the connection
// ctx resolves, for the stream of its list.
func (d *deferral) pages(ctx context.Context, next nextPage) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pageSources == nil {
		d.pageSources = map[string]nextPage{}
	}
	d.pageSources[graphql.GetFieldContext(ctx).Path().String()] = next
}

// pagesOf returns (and forgets) the source of the later pages of the list
// whose field context is fc, nil when it has none.
func (d *deferral) pagesOf(fc *graphql.FieldContext) nextPage {
	if fc.Parent == nil {
		return nil
	}
	key := fc.Parent.Path().String()
	d.mu.Lock()
	defer d.mu.Unlock()
	next := d.pageSources[key]
	delete(d.pageSources, key)
	return next
}

// streamPages is stream for a connection's list whose later pages src
// fetches (streamsPages): list holds the first page's items. The initial
// payload has the first initialCount items (with as many pages fetched as
// they need); once it is sent, the rest of the page is sent, then each later
// page's items as soon as that page is fetched and its items' links are
// loaded, one part per page, in order.
func (d *deferral) streamPages(ctx context.Context, schema graphql.ExecutableSchema, fc *graphql.FieldContext, n int, label string, list reflect.Value, src nextPage) (any, error) {
	last := false
	for list.Len() <= n && !last {
		more, l, err := src(ctx)
		if err != nil {
			return list.Interface(), err
		}
		list, last = reflect.AppendSlice(list, reflect.ValueOf(more)), l
	}
	if last && list.Len() <= n {
		return list.Interface(), nil
	}
	listPath, sel := fc.Path(), fc.Field.Selections
	part, key := d.openStream(ctx, listPath, label)
	go func() {
		if !d.wait(ctx) {
			return
		}
		sctx := graphql.WithFreshResponseContext(context.WithValue(ctx, streamKey{}, part))
		st := generated.NewStream(sctx, schema)
		chunk, index, emitted := list.Slice(n, list.Len()), n, 0
		for {
			if chunk.Len() > 0 || last {
				items := make([]graphql.Marshaler, chunk.Len())
				var wg sync.WaitGroup
				for i := range items {
					wg.Go(func() { items[i], _ = st.Item(sctx, sel, chunk.Interface(), i, index+i) })
				}
				wg.Wait()
				var data graphql.Marshaler = graphql.Array(items)
				nulled := slices.Contains(items, graphql.Marshaler(graphql.Null))
				if nulled {
					data, last = graphql.Null, true // an item that cannot be null is: the rest is not sent
				}
				var b bytes.Buffer
				data.MarshalGQL(&b)
				errs := graphql.GetErrors(sctx)
				resp := &graphql.Response{Data: b.Bytes(), Path: append(slices.Clip(listPath), ast.PathIndex(index)), Label: label, Errors: errs[min(emitted, len(errs)):]}
				emitted = len(errs)
				tail := last && !nulled && st.Pending() > 0 // the items' deferred parts follow
				select {
				case d.events <- event{resp: resp, key: key, root: true, more: !last || tail, partial: !last}:
				case <-ctx.Done():
					return
				}
				if last {
					if tail {
						d.streamDefers(ctx, st)
					}
					return
				}
				index += chunk.Len()
			}
			more, l, err := src(sctx)
			if err != nil {
				graphql.AddError(sctx, err)
				errs := graphql.GetErrors(sctx)
				resp := &graphql.Response{Data: []byte("null"), Path: append(slices.Clip(listPath), ast.PathIndex(index)), Label: label, Errors: errs[min(emitted, len(errs)):]}
				select {
				case d.events <- event{resp: resp, key: key, root: true}:
				case <-ctx.Done():
				}
				return
			}
			chunk, last = reflect.ValueOf(more), l
		}
	}()
	return list.Slice(0, n).Interface(), nil
}

// streamDefers sends the deferred parts of a stream's items (a @defer
// inside them) as they complete, once the stream's last items are sent,
// the last of them ending the stream.
func (d *deferral) streamDefers(ctx context.Context, st *generated.Stream) {
	for st.Pending() > 0 {
		var r graphql.DeferredResult
		select {
		case r = <-st.Deferred:
		case <-ctx.Done():
			return
		}
		st.Received()
		var b bytes.Buffer
		r.Result.MarshalGQL(&b)
		resp := &graphql.Response{Data: b.Bytes(), Path: r.Path, Label: r.Label, Errors: r.Errors}
		select {
		case d.events <- event{resp: resp, root: true, more: st.Pending() > 0}:
		case <-ctx.Done():
			return
		}
	}
}

// handler returns the operation's response handler over gqlgen's: the
// initial payload, then the parts from the pump.
func (d *deferral) handler(inner graphql.ResponseHandler) graphql.ResponseHandler {
	first := true
	return func(ctx context.Context) *graphql.Response {
		if first {
			first = false
			var gctx context.Context
			gctx, d.gate = newExecGate(ctx)
			resp := inner(gctx)
			if resp == nil {
				d.gate.close()
				return nil
			}
			if d.over(resp) {
				// The initial payload alone is too large: the refusal is the
				// whole answer, as for any operation.
				d.gate.close()
				r := &graphql.Response{Data: []byte("null"), Errors: gqlerror.List{tooLarge(d.size, d.maxBytes)}}
				d.codes(r)
				d.report(r)
				return r
			}
			gq := overhttp.HasNext(resp)
			roots := int(d.roots.Load())
			if !gq && roots == 0 {
				// Nothing was deferred (@defer(if: false), or only on
				// fields resolved inline): one ordinary response.
				resp.HasNext = nil
				d.report(resp)
				d.gate.close()
				return resp
			}
			go d.pump(ctx, gctx, inner, gq, roots)
			t := true
			resp.HasNext = &t
			d.annotate(ctx, resp, event{}, true)
			return resp
		}
		// The transport asks for the next part: the initial one is sent.
		d.once.Do(func() { close(d.sent) })
		select {
		case ev, ok := <-d.out:
			if !ok {
				return nil
			}
			if d.over(ev.resp) {
				ev.resp = d.refuse(ev.resp)
				ev.more, ev.refused = false, true
			}
			d.annotate(ctx, ev.resp, ev, false)
			return ev.resp
		case <-ctx.Done():
			return nil
		}
	}
}

// pump merges gqlgen's deferred parts (polled from inner) and the root
// parts into d.out, in the order they complete, each with hasNext, the
// report on the last.
// ctx is the request's, gctx the one gqlgen executes the operation on.
func (d *deferral) pump(ctx, gctx context.Context, inner graphql.ResponseHandler, gq bool, roots int) {
	defer close(d.out)
	defer d.gate.close()
	poke := make(chan struct{}, 1)
	go func() { // polls gqlgen: one round per poke, until it has nothing pending
		for {
			select {
			case <-poke:
			case <-ctx.Done():
				return
			}
			for {
				if !d.gate.enter() {
					return
				}
				r := inner(gctx)
				if !d.gate.leave() {
					return
				}
				more := r != nil && overhttp.HasNext(r)
				if r != nil {
					select {
					case d.events <- event{resp: r, more: more}:
					case <-ctx.Done():
						return
					}
				}
				if !more {
					break
				}
			}
			select {
			case d.events <- event{}:
			case <-ctx.Done():
				return
			}
		}
	}()
	rounds := 0 // poll rounds asked for and not ended
	ask := func() {
		select {
		case poke <- struct{}{}:
			rounds++
		default: // a round not started yet will see what is pending now
		}
	}
	if gq {
		ask()
	}
	emit := func(ev event, more bool) bool {
		resp := ev.resp
		resp.HasNext = &more
		if !more {
			d.report(resp)
		}
		select {
		case d.out <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}
	lastMore := true
	for rounds > 0 || roots > 0 {
		var ev event
		select {
		case ev = <-d.events:
		case <-ctx.Done():
			return
		}
		switch {
		case ev.resp == nil: // a poll round ended
			rounds--
			if rounds == 0 && roots == 0 && lastMore {
				// The last part said more might follow: end the stream.
				emit(event{resp: &graphql.Response{}}, false)
				return
			}
			continue
		case ev.root:
			if !ev.more {
				roots-- // a stream's last run, or a root part
			}
			d.codes(ev.resp)
			if ev.nested {
				ask() // the root part may have deferred parts of its own
			}
			lastMore = rounds > 0 || roots > 0
		default:
			// gqlgen's part: HasNext says whether gqlgen has more pending;
			// if not, this round ends with it.
			lastMore = ev.more || rounds > 1 || roots > 0
		}
		if !emit(ev, lastMore) {
			return
		}
		if !lastMore {
			// The last part: the poller, if it still has a round's end to
			// send, stops when the request ends.
			return
		}
	}
}

// over adds the size of resp's data to the operation's and reports whether
// the sum is above the response size cap.
func (d *deferral) over(resp *graphql.Response) bool {
	d.size += len(resp.Data)
	return d.maxBytes > 0 && d.size > d.maxBytes
}

// refuse replaces resp, a part that brings the operation's data above the
// response size cap, by the last payload: the part, data null, with the
// RESPONSE_TOO_LARGE error (v0.2: its id and the other parts still open
// are completed with it), and the call report.
func (d *deferral) refuse(resp *graphql.Response) *graphql.Response {
	e := tooLarge(d.size, d.maxBytes)
	r := &graphql.Response{Data: []byte("null"), Path: resp.Path, Label: resp.Label, Errors: gqlerror.List{e}}
	if r.Path == nil {
		r.Path = ast.Path{}
	}
	done := false
	r.HasNext = &done
	d.codes(r)
	d.report(r)
	return r
}

// rootKey is the part key of the deferred root field alias.
func rootKey(alias string) string { return "root\x00" + alias }

// groupKey is the part key of gqlgen's deferred part of the object at path
// with label (gqlgen makes one part per object and label).
func groupKey(path ast.Path, label string) string { return path.String() + "\x00" + label }

// owners returns the keys of the parts whose payloads carry what is
// resolved at ctx: [""] for the initial payload, none in a stream's items
// (their @defer is not delivered).
func (d *deferral) owners(ctx context.Context) []string {
	if _, ok := ctx.Value(streamKey{}).(string); ok {
		return nil
	}
	fc := deferredField(ctx)
	if fc == nil {
		return []string{""}
	}
	path := fc.Path()
	if len(path) == 1 { // a root field
		return []string{rootKey(fc.Field.Alias)}
	}
	path = path[:len(path)-1]
	keys := make([]string, 0, len(fc.Field.Deferrables))
	for _, df := range fc.Field.Deferrables {
		keys = append(keys, groupKey(path, df.Label))
	}
	return keys
}

// expect records the part key (path, label) as known once a payload of
// one of owners is (IncrementalV02 only).
func (d *deferral) expect(key string, path ast.Path, label string, owners []string) {
	if d.parts == nil || len(owners) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.parts[key]; ok {
		return
	}
	p := &pend{Pending: overhttp.Pending{ID: strconv.Itoa(d.nextID), Path: slices.Clone(path), Label: label}, owners: owners}
	d.nextID++
	d.parts[key] = p
	d.order = append(d.order, p)
}

// expectIn records the deferred parts gqlgen will make of the objects the
// field of fc resolved to (res: one object or a list of them): one per
// object and label of its @defer fragments that select a field gqlgen
// resolves apart (generated.Concurrent) (IncrementalV02 only).
func (d *deferral) expectIn(ctx context.Context, oc *graphql.OperationContext, fc *graphql.FieldContext, res any) {
	if d.parts == nil || fc == nil || fc.Field.Field == nil || fc.Field.Definition == nil || res == nil || len(fc.Field.Selections) == 0 {
		return
	}
	typ := fc.Field.Definition.Type
	list := typ.Elem != nil
	if list && typ.Elem.Elem != nil {
		return // lists of lists: none in the schema
	}
	d.mu.Lock()
	labels, known := d.labels[fc.Field.Field]
	d.mu.Unlock()
	if !known {
		name := typ.Name()
		for _, f := range graphql.CollectFields(oc, fc.Field.Selections, []string{name}) {
			if !f.IsDeferred() || !generated.Concurrent(name, f.Name) {
				continue
			}
			for _, df := range f.Deferrables {
				if !slices.Contains(labels, df.Label) {
					labels = append(labels, df.Label)
				}
			}
		}
		d.mu.Lock()
		d.labels[fc.Field.Field] = labels
		d.mu.Unlock()
	}
	if len(labels) == 0 {
		return
	}
	owners := d.owners(ctx)
	path := fc.Path()
	at := func(p ast.Path) {
		for _, l := range labels {
			d.expect(groupKey(p, l), p, l, owners)
		}
	}
	v := reflect.ValueOf(res)
	if !list {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return
		}
		at(path)
		return
	}
	if v.Kind() != reflect.Slice {
		return
	}
	for i := range v.Len() {
		if e := v.Index(i); e.Kind() == reflect.Pointer && e.IsNil() {
			continue
		}
		at(append(slices.Clip(path), ast.PathIndex(i)))
	}
}

// annotate gives the transport the incrementalSpec=v0.2 entries of resp, the
// initial payload or the payload of ev: the parts it makes known, the part
// it delivers and those it completes (all still open, in the last).
func (d *deferral) annotate(ctx context.Context, resp *graphql.Response, ev event, initial bool) {
	if d.parts == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var part overhttp.Part
	owner := ""
	if !initial && (len(resp.Data) > 0 || resp.Path != nil) {
		key := ev.key
		if key == "" {
			key = groupKey(resp.Path, resp.Label)
		}
		p := d.parts[key]
		if p == nil { // not foreseen: announced with its data
			p = &pend{Pending: overhttp.Pending{ID: strconv.Itoa(d.nextID), Path: slices.Clone(resp.Path), Label: resp.Label}}
			if len(resp.Path) > 0 && resp.Data[0] == '[' {
				p.Path = p.Path[:len(p.Path)-1]
			}
			d.nextID++
			d.parts[key] = p
			d.order = append(d.order, p)
		}
		if !p.announced {
			p.announced = true
			part.Pending = append(part.Pending, p.Pending)
		}
		part.ID = p.ID
		part.Completes = !ev.partial
		p.completed = p.completed || part.Completes
		owner = key
	}
	if initial || owner != "" {
		for _, p := range d.order {
			if !p.announced && slices.Contains(p.owners, owner) {
				p.announced = true
				part.Pending = append(part.Pending, p.Pending)
			}
		}
	}
	if !initial && !overhttp.HasNext(resp) {
		for _, p := range d.order {
			if p.announced && !p.completed && p.ID != part.ID {
				p.completed = true
				part.Completed = append(part.Completed, p.ID)
			}
		}
		if ev.refused {
			part.CompletedErrors = resp.Errors
		}
	}
	overhttp.Annotate(ctx, resp, part)
}

// report adds the upstream call report to the last payload, when asked for.
func (d *deferral) report(resp *graphql.Response) {
	if req := d.req; req.trace && req.calls != nil {
		if resp.Extensions == nil {
			resp.Extensions = map[string]any{}
		}
		resp.Extensions["upstream"] = req.calls.Report()
	}
}

// codes gives the access log the error codes of a root part (gqlgen's parts
// pass through upstreamReport).
func (d *deferral) codes(resp *graphql.Response) {
	entry := accesslog.From(d.req)
	for _, e := range resp.Errors {
		if c, ok := e.Extensions["code"].(string); ok {
			entry.AddCodes(c)
		}
	}
}

// callPart names the part of the response an upstream call made with ctx
// serves, for the call report: "" outside a deferred operation, "initial",
// or the label of the deferred part (its path when it has none).
func callPart(ctx context.Context) string {
	if requestFrom(ctx).deferral == nil {
		return ""
	}
	if p, ok := ctx.Value(streamKey{}).(string); ok {
		return p
	}
	if f := deferredField(ctx); f != nil {
		if l := f.Field.Deferrables[0].Label; l != "" {
			return l
		}
		return "deferred " + f.Path().String()
	}
	return "initial"
}

// deferredField is the innermost field above ctx's that gqlgen (or the
// root deferral) resolves apart, nil when none: ctx's calls serve a
// deferred part.
// deferredRootKey marks the context of a deferred root field's resolution.
type deferredRootKey struct{}

// inDeferredPart reports whether ctx resolves what a deferred part brings (a
// field of a deferred fragment, or a deferred root field). A list @stream
// marks there comes whole in that part: its stream would have to start
// after the part that holds the list, which the pump does not order.
func inDeferredPart(ctx context.Context) bool {
	if ctx.Value(deferredRootKey{}) != nil {
		return true
	}
	for fc := graphql.GetFieldContext(ctx); fc != nil; fc = fc.Parent {
		if fc.Field.Field != nil && fc.Field.IsDeferred() {
			return true
		}
	}
	return false
}

func deferredField(ctx context.Context) *graphql.FieldContext {
	for fc := graphql.GetFieldContext(ctx); fc != nil; fc = fc.Parent {
		if fc.IsResolver && fc.Field.Field != nil && fc.Field.IsDeferred() {
			return fc
		}
	}
	return nil
}

// hasIncremental reports whether ss, or a fragment it spreads, has @defer
// or @stream.
func hasIncremental(doc *ast.QueryDocument, ss ast.SelectionSet, seen map[string]bool) bool {
	return hasDefer(doc, ss, seen) || hasStream(doc, ss, map[string]bool{})
}

func hasStream(doc *ast.QueryDocument, ss ast.SelectionSet, seen map[string]bool) bool {
	for _, sel := range ss {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Directives.ForName("stream") != nil || hasStream(doc, s.SelectionSet, seen) {
				return true
			}
		case *ast.InlineFragment:
			if hasStream(doc, s.SelectionSet, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			if f := doc.Fragments.ForName(s.Name); f != nil && hasStream(doc, f.SelectionSet, seen) {
				return true
			}
		}
	}
	return false
}

// hasDefer reports whether ss, or a fragment it spreads, has @defer.
func hasDefer(doc *ast.QueryDocument, ss ast.SelectionSet, seen map[string]bool) bool {
	for _, sel := range ss {
		switch s := sel.(type) {
		case *ast.Field:
			if hasDefer(doc, s.SelectionSet, seen) {
				return true
			}
		case *ast.InlineFragment:
			if s.Directives.ForName("defer") != nil || hasDefer(doc, s.SelectionSet, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Directives.ForName("defer") != nil {
				return true
			}
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			if f := doc.Fragments.ForName(s.Name); f != nil && hasDefer(doc, f.SelectionSet, seen) {
				return true
			}
		}
	}
	return false
}

// withoutDefer gives oc a copy of its document and operation without @defer
// directives (the cached document is shared by other requests: the nodes on
// the way to a @defer are copied, the rest shared).
func withoutDefer(oc *graphql.OperationContext) {
	doc := *oc.Doc
	doc.Fragments = make(ast.FragmentDefinitionList, len(oc.Doc.Fragments))
	for i, f := range oc.Doc.Fragments {
		if ss, changed := stripDefer(f.SelectionSet); changed {
			c := *f
			c.SelectionSet = ss
			f = &c
		}
		doc.Fragments[i] = f
	}
	op := *oc.Operation
	op.SelectionSet, _ = stripDefer(op.SelectionSet)
	doc.Operations = make(ast.OperationList, len(oc.Doc.Operations))
	for i, o := range oc.Doc.Operations {
		if o == oc.Operation {
			o = &op
		}
		doc.Operations[i] = o
	}
	oc.Doc, oc.Operation = &doc, &op
}

func stripDefer(ss ast.SelectionSet) (ast.SelectionSet, bool) {
	var out ast.SelectionSet
	for i, sel := range ss {
		var n ast.Selection
		switch s := sel.(type) {
		case *ast.Field:
			if sub, changed := stripDefer(s.SelectionSet); changed {
				c := *s
				c.SelectionSet = sub
				n = &c
			}
		case *ast.InlineFragment:
			sub, changed := stripDefer(s.SelectionSet)
			dirs, dropped := dropDefer(s.Directives)
			if changed || dropped {
				c := *s
				c.SelectionSet, c.Directives = sub, dirs
				n = &c
			}
		case *ast.FragmentSpread:
			if dirs, dropped := dropDefer(s.Directives); dropped {
				c := *s
				c.Directives = dirs
				n = &c
			}
		}
		if n != nil && out == nil {
			out = make(ast.SelectionSet, len(ss))
			copy(out, ss)
		}
		if n != nil {
			out[i] = n
		}
	}
	if out == nil {
		return ss, false
	}
	return out, true
}

func dropDefer(dirs ast.DirectiveList) (ast.DirectiveList, bool) {
	if dirs.ForName("defer") == nil {
		return dirs, false
	}
	out := make(ast.DirectiveList, 0, len(dirs)-1)
	for _, d := range dirs {
		if d.Name != "defer" {
			out = append(out, d)
		}
	}
	return out, true
}
