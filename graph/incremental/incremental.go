// Package incremental delivers a query in parts (@defer, @stream) on
// gqlgen's execution: the handler installs its Extension and names what it
// gives it in one type, Host.
package incremental

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/admission"
	"github.com/workspacenet/facade/graph/generated"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/overhttp"
	"github.com/workspacenet/facade/graph/paging"
	"github.com/workspacenet/facade/internal/base/accesslog"
)

// Extension is incremental delivery (@defer, @stream) on gqlgen's execution.
//
// The facade delivers @defer itself, gqlgen's executor resolving each
// payload's fields:
//
//   - The initial payload: the operation runs on a copy of its document in
//     which every deferred fragment (@defer, its if true, spread on an
//     object type) is marked skipped (a @skip(if: true) put first on it).
//     gqlgen's executor leaves its fields out, whatever their kind: the
//     initial payload has none of them (as the incremental delivery RFC
//     says), and resolves nothing beneath them.
//   - The parts: when a field resolves to an object (or a list of them)
//     whose selection has deferred fragments, the resolver middleware
//     registers a part per object and label (the fragments of one label on
//     one object make one part): the object, its path, the fragments'
//     selections. A deferred fragment on the query root is a part at the
//     path [] ({"field": value}). A part runs once the payload that
//     announces it is written (the initial payload, or the part or
//     @stream run that brought its object): the generated marshaller of the
//     object's type (generated.Objects) resolves the fragments' fields on
//     the object, loads at any depth beneath them included, and their
//     deferred fragments become parts in turn. So every upstream call of a
//     payload goes after the payload that announces its part is written; in
//     the client's rate budget a part's calls rank after the initial ones
//     (the handler ranks calls by InPart) and are marked with the part in
//     the call report (Deferral.CallPart), which comes in the last payload.
//   - Lookahead: what a resolver reads of its selection to decide what to
//     load (an embedded summary that suffices, cursors, pages: Lookahead)
//     includes the deferred fragments' fields, so the object a part
//     completes is the one the query without @defer resolves, with the
//     same calls.
//   - Negotiation: a client that accepts no incremental format
//     (overhttp.AcceptsIncremental), and any operation but a query, runs the
//     operation with its @defer directives removed: the whole result in one
//     ordinary response.
//   - @stream on a connection's nodes or edges (stream.go): the first
//     initialCount items in the initial payload, the others resolved apart
//     once it is written and sent by one writer (streamWriter): in order,
//     in runs as they complete, or a page at a time when the connection
//     fetches its later pages as the stream goes (StreamsPages); a
//     negative initialCount is BAD_USER_INPUT.
//   - Delivery: the parts in the order they complete, each with hasNext,
//     the call report in the last; incrementalSpec=v0.2: each part announced
//     (pending: id, path, label) in the payload that makes it known, each id
//     completed once.
//   - The operation holds its admission units until its last part is
//     written (admission.Keep); the call cap, cost limit, response size cap
//     and deadline are the request's, for all its parts.
type Extension struct {
	Host     Host                     // the handler, as incremental delivery knows it
	Schema   graphql.ExecutableSchema // for the parts' objects and @stream's items (generated.Objects)
	MaxBytes int                      // the response size cap, over all parts (0: none)
	// The server's: the parts on the query root resolve on a response
	// context of their own, outside gqlgen's execution.
	Present graphql.ErrorPresenterFunc
	Recover graphql.RecoverFunc
}

// Host is what incremental delivery needs of the handler, for the request
// a context is served in: the one type it knows the handler by.
type Host interface {
	// Attach gives the request of ctx d, the deferral of its operation;
	// false outside the handler's requests (d is then not used).
	Attach(ctx context.Context, d *Deferral) bool
	// Deferral returns what Attach gave the request of ctx (nil: none).
	Deferral(ctx context.Context) *Deferral
	// OneResult reports whether the transport of ctx answers a query with
	// one result whatever the client accepts (graphql-transport-ws over a
	// WebSocket).
	OneResult(ctx context.Context) bool
	// FirstPayload records that the initial payload of the request of ctx
	// is written (the call report's timing).
	FirstPayload(ctx context.Context)
	// CallReport returns the upstream call report of the request of ctx,
	// for its last payload; nil when it did not ask for one.
	CallReport(ctx context.Context) any
}

var (
	_ graphql.OperationContextMutator = Extension{}
	_ graphql.OperationInterceptor    = Extension{}
)

func (Extension) ExtensionName() string                   { return "IncrementalDelivery" }
func (Extension) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext refuses a negative @stream initialCount, and sets
// up the operation's deferral, or removes its @defer directives when it
// cannot be delivered in parts (@stream is then ignored: it runs only in a
// deferral).
func (x Extension) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Doc == nil || oc.Operation == nil || !strings.Contains(oc.RawQuery, "defer") && !strings.Contains(oc.RawQuery, "stream") && oc.RawQuery != "" {
		return nil
	}
	found, err := scan(oc.Doc, oc.Operation.SelectionSet, oc.Variables)
	if !found || err != nil {
		return err
	}
	format := overhttp.AcceptsIncremental(oc.Headers).Format
	if x.Host.OneResult(ctx) {
		format = overhttp.NotIncremental
	}
	if oc.Operation.Operation != ast.Query || format == overhttp.NotIncremental {
		withoutDefer(oc)
		return nil
	}
	d := &Deferral{host: x.Host, ctx: ctx, schema: x.Schema, present: x.Present, recover: x.Recover, maxBytes: x.MaxBytes,
		sent: make(chan struct{}), events: make(chan event, 4), v02: format == overhttp.IncrementalV02}
	if !x.Host.Attach(ctx, d) {
		return nil // not a request of the handler
	}
	d.mark(oc)
	fields := oc.ResolverMiddleware
	oc.ResolverMiddleware = func(ctx context.Context, next graphql.Resolver) (any, error) {
		fc := graphql.GetFieldContext(ctx)
		if fc == nil || fc.Field.Field == nil {
			return fields(ctx, next)
		}
		var res any
		var err error
		if dir := fc.Field.Directives.ForName("stream"); dir != nil {
			res, err = d.stream(ctx, fc, dir, oc.Variables, func(ctx context.Context) (any, error) { return fields(ctx, next) })
		} else {
			res, err = fields(ctx, next)
		}
		if err == nil && res != nil {
			d.deferIn(ctx, fc, res)
		}
		return res, err
	}
	return nil
}

// InterceptOperation delivers the parts of a deferred operation in order of
// completion, the upstream call report in the last.
func (x Extension) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	d := x.Host.Deferral(ctx)
	if d == nil {
		return next(ctx)
	}
	admission.Keep(ctx)
	return d.handler(next(ctx))
}

// Deferral is the state of one operation delivered in parts.
type Deferral struct {
	host    Host
	ctx     context.Context // the request's, as the operation starts
	schema  graphql.ExecutableSchema
	present graphql.ErrorPresenterFunc
	recover graphql.RecoverFunc
	doc     *ast.QueryDocument        // the operation's, its deferred fragments marked
	plain   *graphql.OperationContext // the operation's document as sent, for lookahead
	objects *generated.Objects        // set as the operation starts executing
	v02     bool                      // the incrementalSpec=v0.2 format: parts announced
	sent    chan struct{}             // closed once the initial payload is written
	events  chan event                // the parts' payloads, as they complete

	vars  map[string]any
	marks map[ast.Selection]string        // the deferred fragments of doc (marked): their label
	orig  map[ast.Selection]ast.Selection // the selections of doc rewritten: what they were

	maxBytes int // the response size cap over all payloads' data (0: none)
	size     int // the data sent so far

	mu sync.Mutex
	// The deferred fragments of a selection set by label, and lookahead's
	// selection sets: gqlgen caches the fields it collects from a selection
	// set by its address, so those made here live as long as the operation.
	groups  map[selKey][]group
	looks   map[selKey]ast.SelectionSet
	parts   []*part             // in the order they were registered
	waiting map[partAt][]*part  // the parts not started, by what resolved their object
	open    int                 // parts registered whose last payload is not out yet
	pages   map[string]NextPage // by the path of a connection streamed by page
	nextID  int                 // v0.2: the next part id
	done    map[*part]int       // the parts whose payload is written: 1, a stream's: the items written
}

// group is the deferred fragments of one label on an object: their
// selections.
type group struct {
	label string
	sel   ast.SelectionSet
}

type selKey struct {
	ptr uintptr
	n   int
	typ string
}

func keyOf(sel ast.SelectionSet, typ string) selKey {
	var p uintptr
	if len(sel) > 0 {
		p = reflect.ValueOf(sel).Pointer()
	}
	return selKey{p, len(sel), typ}
}

// part is one deferred part of the response: a group of deferred fragments
// on one object, or a @stream's later items.
type part struct {
	path  ast.Path
	label string
	name  string // in the call report: the label, else "deferred <path>" or "stream <path>"
	// owner is the part whose payload makes this one known (nil: the
	// initial payload); in a stream, item is the index of the item that
	// holds it (-1 otherwise).
	owner  *part
	item   int
	stream bool
	// A deferred group's object: its field context, type and selections.
	ctx context.Context
	typ string
	sel ast.SelectionSet
	obj any
	// incrementalSpec=v0.2
	id        string
	announced bool
	completed bool
}

// partKey is the context key of the part (and, in a stream, the item) a
// context resolves for.
type partKey struct{}

// partAt is what a context resolves for, the value of partKey: a part
// (nil: the initial payload) and, in a stream, the item (-1 otherwise).
type partAt struct {
	p    *part
	item int
}

// partOf returns the part ctx resolves for and, in a stream, the item (-1
// otherwise); nil for the initial payload.
func partOf(ctx context.Context) (*part, int) {
	if v, ok := ctx.Value(partKey{}).(partAt); ok {
		return v.p, v.item
	}
	return nil, -1
}

type event struct {
	resp *graphql.Response
	p    *part
	// last: the part's last payload (a deferred group has one; a stream
	// one per run, the last ending it).
	last bool
	// to: a stream's run: the index after its last item.
	to int
	// refused: the part was replaced by the response size cap's error,
	// which ends the response and every part still open.
	refused bool
}

// deferIn registers the parts of the deferred fragments in the selection
// of the field of fc, which resolved to res: one per object and label.
func (d *Deferral) deferIn(ctx context.Context, fc *graphql.FieldContext, res any) {
	if fc.Field.Definition == nil || len(fc.Field.Selections) == 0 {
		return
	}
	typ := fc.Field.Definition.Type
	groups := d.groupsOf(fc.Field.Selections, typ.Name())
	if len(groups) == 0 {
		return
	}
	if typ.Elem == nil {
		if v := reflect.ValueOf(res); v.Kind() == reflect.Pointer && v.IsNil() {
			return
		}
		d.register(ctx, fc.Path(), typ.Name(), res, groups)
		return
	}
	list := reflect.ValueOf(res)
	if typ.Elem.Elem != nil || list.Kind() != reflect.Slice {
		return // lists of lists: none in the schema
	}
	path := fc.Path()
	for i := range list.Len() {
		d.deferItem(ctx, path, typ.Name(), list, i, i, groups)
	}
}

// deferItem registers the parts of groups on the element i of list, at
// index (its index in the whole list) under the list's path.
func (d *Deferral) deferItem(ctx context.Context, listPath ast.Path, typ string, list reflect.Value, i, index int, groups []group) {
	e := list.Index(i)
	switch {
	case e.Kind() == reflect.Pointer && e.IsNil():
		return
	case e.Kind() != reflect.Pointer && e.CanAddr():
		e = e.Addr()
	}
	obj := e.Interface()
	ictx := graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &index, Result: obj})
	d.register(ictx, append(slices.Clip(listPath), ast.PathIndex(index)), typ, obj, groups)
}

// register adds a part for each group on the object obj of type typ at
// path, resolved at ctx, known with the payload ctx resolves for; it runs
// once that payload is written.
func (d *Deferral) register(ctx context.Context, path ast.Path, typ string, obj any, groups []group) {
	if len(groups) == 0 {
		return
	}
	owner, item := partOf(ctx)
	key := partAt{p: owner, item: item}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, g := range groups {
		p := &part{path: path, label: g.label, owner: owner, item: item, ctx: ctx, typ: typ, sel: g.sel, obj: obj}
		p.name = g.label
		if p.name == "" {
			p.name = "deferred " + path.String()
		}
		d.parts = append(d.parts, p)
		d.open++
		if d.writtenLocked(key) {
			go d.run(p)
			continue
		}
		if d.waiting == nil {
			d.waiting = map[partAt][]*part{}
		}
		d.waiting[key] = append(d.waiting[key], p)
	}
}

// writtenLocked reports whether the payload that carries what resolves at
// k is written (d.mu held): the initial payload (k.p nil), a deferred
// group's, or a stream's run that holds item k.item.
func (d *Deferral) writtenLocked(k partAt) bool {
	if k.p == nil {
		select {
		case <-d.sent:
			return true
		default:
			return false
		}
	}
	n := d.done[k.p]
	if k.p.stream {
		return k.item < n
	}
	return n > 0
}

// keysOf calls f with the key of each part ev's payload makes known: the
// initial payload's (the zero event), a deferred group's, each item of a
// stream's run (d.mu held).
func (d *Deferral) keysOf(ev event, f func(partAt)) {
	if ev.p == nil || !ev.p.stream {
		f(partAt{p: ev.p, item: -1})
		return
	}
	for i := d.done[ev.p]; i < ev.to; i++ {
		f(partAt{p: ev.p, item: i})
	}
}

// written records that the payload of ev (the initial one for the zero
// event) is written and starts the parts it made known.
func (d *Deferral) written(ev event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.keysOf(ev, func(k partAt) {
		for _, p := range d.waiting[k] {
			if !p.stream {
				go d.run(p)
			}
		}
		delete(d.waiting, k)
	})
	if ev.p == nil {
		select {
		case <-d.sent:
		default:
			d.host.FirstPayload(d.ctx)
			close(d.sent)
		}
		return
	}
	if d.done == nil {
		d.done = map[*part]int{}
	}
	d.done[ev.p] = max(d.done[ev.p], ev.to, 1)
}

// run resolves the fields of the deferred group p on its object and sends
// its payload; the deferred fragments among them become parts of their
// own, known with it.
func (d *Deferral) run(p *part) {
	ctx := graphql.WithFreshResponseContext(context.WithValue(p.ctx, partKey{}, partAt{p: p, item: -1}))
	d.register(ctx, p.path, p.typ, p.obj, d.groupsOf(p.sel, p.typ))
	m, ok := d.objects.Marshal(ctx, p.typ, p.sel, p.obj)
	if !ok {
		graphql.AddError(ctx, fmt.Errorf("graph: no marshaller for a deferred %s", p.typ))
		m = graphql.Null
	}
	resp := payload(m, p.path, p.label, ctx)
	select {
	case d.events <- event{resp: resp, p: p, last: true}:
	case <-p.ctx.Done():
	}
}

// payload marshals data, what a payload after the initial one brings at
// path, and returns that payload: its errors are those of the response
// contexts data resolved on (ctxs, each its own: a deferred group's, a
// streamed item's or a page's), read once data is marshalled, since a value
// can fail as it is written (an unreadable DateTime is null with its
// UPSTREAM_INVALID error, added then).
func payload(data graphql.Marshaler, path ast.Path, label string, ctxs ...context.Context) *graphql.Response {
	var b bytes.Buffer
	data.MarshalGQL(&b)
	var errs gqlerror.List
	for _, c := range ctxs {
		errs = append(errs, graphql.GetErrors(c)...)
	}
	return &graphql.Response{Data: b.Bytes(), Path: path, Label: label, Errors: errs}
}

// wait waits until the initial payload is written; false if ctx ends
// first.
func (d *Deferral) wait(ctx context.Context) bool {
	select {
	case <-d.sent:
		return true
	case <-ctx.Done():
		return false
	}
}

// NextPage fetches the next page of a streamed connection's list: its
// items (a slice of the list's type) and whether it was the last.
type NextPage func(ctx context.Context) (items any, last bool, err error)

// StreamsPages reports, for the connection field ctx resolves, whether its
// list is streamed page by page (list: nodes or edges; "" if not): d (nil
// outside a deferred operation) is the operation's, the
// connection may take more than one upstream page (first above
// paging.UpstreamMaxLimit), and it selects one list, nodes or edges (list),
// under @stream, and nothing else (pageInfo needs the last page; a deferred
// fragment on it, every page). The connection then registers its later pages
// (RegisterPages).
func (d *Deferral) StreamsPages(ctx context.Context, first *int) (list string) {
	if d == nil || first == nil || *first <= paging.UpstreamMaxLimit || InPart(ctx) {
		return ""
	}
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil {
		return ""
	}
	typ := fc.Field.Definition.Type.Name()
	if len(d.groupsOf(fc.Field.Selections, typ)) > 0 {
		return "" // a deferred part completes the connection: it needs every page
	}
	oc := graphql.GetOperationContext(ctx)
	for _, f := range graphql.CollectFields(oc, fc.Field.Selections, []string{typ}) {
		switch f.Name {
		case "__typename":
		case "nodes", "edges":
			dir := f.Directives.ForName("stream")
			if list != "" || dir == nil {
				return ""
			}
			if on, _ := dir.ArgumentMap(oc.Variables)["if"].(bool); !on {
				return ""
			}
			list = f.Name
		default:
			return ""
		}
	}
	if list == "" {
		return ""
	}
	return list
}

// RegisterPages registers next as the source of the later pages of the
// connection ctx resolves, for the stream of its list.
func (d *Deferral) RegisterPages(ctx context.Context, next NextPage) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pages == nil {
		d.pages = map[string]NextPage{}
	}
	d.pages[graphql.GetFieldContext(ctx).Path().String()] = next
}

// pagesOf returns (and forgets) the source of the later pages of the list
// whose field context is fc, nil when it has none.
func (d *Deferral) pagesOf(fc *graphql.FieldContext) NextPage {
	if fc.Parent == nil {
		return nil
	}
	key := fc.Parent.Path().String()
	d.mu.Lock()
	defer d.mu.Unlock()
	next := d.pages[key]
	delete(d.pages, key)
	return next
}

// handler returns the operation's response handler over gqlgen's: the
// initial payload, then the parts as they complete. Each call after the
// first means the payload the previous one returned is written: the parts
// it announced start.
func (d *Deferral) handler(inner graphql.ResponseHandler) graphql.ResponseHandler {
	first := true
	var last event
	return func(ctx context.Context) *graphql.Response {
		if first {
			first = false
			// The parts on the query root, known before the initial
			// result executes.
			d.objects = generated.NewObjects(ctx, d.schema)
			op := graphql.GetOperationContext(ctx).Operation
			rctx := graphql.WithResponseContext(ctx, d.present, d.recover)
			d.register(rctx, ast.Path{}, "Query", nil, d.groupsOf(op.SelectionSet, "Query"))
			resp := inner(ctx)
			if resp == nil {
				return nil
			}
			if d.over(resp) {
				// The initial payload alone is too large: the refusal is the
				// whole answer, as for any operation.
				r := &graphql.Response{Data: []byte("null"), Errors: gqlerror.List{gqlerr.ResponseTooLarge(d.size, d.maxBytes)}}
				d.codes(r)
				d.report(r)
				return r
			}
			d.mu.Lock()
			open := d.open
			d.mu.Unlock()
			if open == 0 {
				// Nothing was deferred (@defer(if: false), no object under
				// a deferred fragment, a list shorter than initialCount):
				// one ordinary response.
				resp.HasNext = nil
				d.report(resp)
				return resp
			}
			t := true
			resp.HasNext = &t
			d.annotate(ctx, resp, event{}, true)
			return resp
		}
		d.written(last)
		var ev event
		select {
		case ev = <-d.events:
		case <-ctx.Done():
			return nil
		}
		d.mu.Lock()
		if ev.last {
			d.open--
		}
		more := d.open > 0
		d.mu.Unlock()
		if d.over(ev.resp) {
			ev.resp = d.refuse(ev.resp)
			ev.refused = true
		} else {
			ev.resp.HasNext = &more
			if !more {
				d.report(ev.resp)
			}
		}
		d.codes(ev.resp)
		d.annotate(ctx, ev.resp, ev, false)
		last = ev
		return ev.resp
	}
}

// over adds the size of resp's data to the operation's and reports whether
// the sum is above the response size cap.
func (d *Deferral) over(resp *graphql.Response) bool {
	d.size += len(resp.Data)
	return d.maxBytes > 0 && d.size > d.maxBytes
}

// refuse replaces resp, a part that brings the operation's data above the
// response size cap, by the last payload: the part, data null, with the
// RESPONSE_TOO_LARGE error (v0.2: its id and the other parts still open
// are completed with it), and the call report.
func (d *Deferral) refuse(resp *graphql.Response) *graphql.Response {
	e := gqlerr.ResponseTooLarge(d.size, d.maxBytes)
	r := &graphql.Response{Data: []byte("null"), Path: resp.Path, Label: resp.Label, Errors: gqlerror.List{e}}
	if r.Path == nil {
		r.Path = ast.Path{}
	}
	done := false
	r.HasNext = &done
	d.report(r)
	return r
}

// annotate gives the transport the incrementalSpec=v0.2 entries of resp, the
// initial payload or the payload of ev: the parts it makes known (those it
// brings the objects of), the part it delivers and whether it completes it,
// and, in the last, the parts still open.
func (d *Deferral) annotate(ctx context.Context, resp *graphql.Response, ev event, initial bool) {
	if !d.v02 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var pt overhttp.Part
	if !initial {
		p := ev.p
		pt.ID, pt.Completes = p.id, ev.last || ev.refused
		p.completed = p.completed || pt.Completes
	}
	var known []*part
	d.keysOf(ev, func(k partAt) { known = append(known, d.waiting[k]...) })
	slices.SortStableFunc(known, func(a, b *part) int {
		if c := comparePaths(a.path, b.path); c != 0 {
			return c
		}
		return strings.Compare(a.label, b.label)
	})
	for _, p := range known {
		p.announced, p.id = true, strconv.Itoa(d.nextID)
		d.nextID++
		pt.Pending = append(pt.Pending, overhttp.Pending{ID: p.id, Path: slices.Clone(p.path), Label: p.label})
	}
	if !initial && !overhttp.HasNext(resp) {
		for _, p := range d.parts {
			if p.announced && !p.completed && p != ev.p {
				p.completed = true
				pt.Completed = append(pt.Completed, p.id)
			}
		}
		if ev.refused {
			pt.CompletedErrors = resp.Errors
		}
	}
	overhttp.Annotate(ctx, resp, pt)
}

// comparePaths orders paths element by element, indexes as numbers.
func comparePaths(a, b ast.Path) int {
	for i := range min(len(a), len(b)) {
		ai, aIdx := a[i].(ast.PathIndex)
		bi, bIdx := b[i].(ast.PathIndex)
		switch {
		case aIdx && bIdx:
			if c := cmp.Compare(ai, bi); c != 0 {
				return c
			}
		case aIdx != bIdx:
			if aIdx {
				return 1
			}
			return -1
		default:
			if c := strings.Compare(string(a[i].(ast.PathName)), string(b[i].(ast.PathName))); c != 0 {
				return c
			}
		}
	}
	return cmp.Compare(len(a), len(b))
}

// report adds the upstream call report to the last payload, when asked for.
func (d *Deferral) report(resp *graphql.Response) {
	if r := d.host.CallReport(d.ctx); r != nil {
		if resp.Extensions == nil {
			resp.Extensions = map[string]any{}
		}
		resp.Extensions["upstream"] = r
	}
}

// codes gives the access log the error codes of a part (the initial
// payload passes through upstreamReport).
func (d *Deferral) codes(resp *graphql.Response) {
	entry := accesslog.From(d.ctx)
	for _, e := range resp.Errors {
		if c, ok := e.Extensions["code"].(string); ok {
			entry.AddCodes(c)
		}
	}
}

// CallPart names the part of the response an upstream call made with ctx
// serves, for the call report: "" outside a deferred operation (d nil),
// "initial", or the label of the deferred part or stream (when it has none,
// "deferred <path>" or "stream <path>").
func (d *Deferral) CallPart(ctx context.Context) string {
	if d == nil {
		return ""
	}
	if p, _ := partOf(ctx); p != nil {
		return p.name
	}
	return "initial"
}

// InPart reports whether ctx resolves what a payload after the initial one
// brings (a deferred part, or a stream's later items).
func InPart(ctx context.Context) bool {
	p, _ := partOf(ctx)
	return p != nil
}
