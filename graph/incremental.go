package graph

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
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/generated"
	"github.com/workspacenet/facade/graph/livetransport"
	"github.com/workspacenet/facade/graph/overhttp"
	"github.com/workspacenet/facade/graph/paging"
	"github.com/workspacenet/facade/internal/base/accesslog"
)

// Incremental delivery (@defer, @stream) on gqlgen's execution.
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
//     (callPriority) and are marked with the part in the call report
//     (callPart), which comes in the last payload.
//   - Lookahead: what a resolver reads of its selection to decide what to
//     load (an embedded summary that suffices, cursors, pages: lookahead)
//     includes the deferred fragments' fields, so the object a part
//     completes is the one the query without @defer resolves, with the
//     same calls.
//   - Negotiation: a client that accepts no incremental format
//     (overhttp.AcceptsIncremental), and any operation but a query, runs the
//     operation with its @defer directives removed: the whole result in one
//     ordinary response.
//   - @stream on a connection's nodes or edges (stream): the first
//     initialCount items in the initial payload, the others resolved apart
//     once it is written, delivered in order in runs as they complete; a
//     negative initialCount is BAD_USER_INPUT.
//   - Delivery: the parts in the order they complete, each with hasNext,
//     the call report in the last; incrementalSpec=v0.2: each part announced
//     (pending: id, path, label) in the payload that makes it known, each id
//     completed once.
//   - The operation holds its admission units until its last part is
//     written (admission.Keep); the call cap, cost limit, response size cap
//     and deadline are the request's, for all its parts.
type incremental struct {
	schema   graphql.ExecutableSchema // for the parts' objects and @stream's items (generated.Objects)
	maxBytes int                      // the response size cap, over all parts (0: none)
	// The server's: the parts on the query root resolve on a response
	// context of their own, outside gqlgen's execution.
	present graphql.ErrorPresenterFunc
	recover graphql.RecoverFunc
}

var (
	_ graphql.OperationContextMutator = incremental{}
	_ graphql.OperationInterceptor    = incremental{}
)

func (incremental) ExtensionName() string                   { return "IncrementalDelivery" }
func (incremental) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext refuses a negative @stream initialCount, and sets
// up the operation's deferral, or removes its @defer directives when it
// cannot be delivered in parts (@stream is then ignored: it runs only in a
// deferral).
func (x incremental) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Doc == nil || oc.Operation == nil || !strings.Contains(oc.RawQuery, "defer") && !strings.Contains(oc.RawQuery, "stream") && oc.RawQuery != "" {
		return nil
	}
	if !hasIncremental(oc.Doc, oc.Operation.SelectionSet, map[string]bool{}) {
		return nil
	}
	if err := checkStreams(oc.Doc, oc.Operation.SelectionSet, oc.Variables, map[string]bool{}); err != nil {
		return err
	}
	format := overhttp.AcceptsIncremental(oc.Headers).Format
	if livetransport.IsLive(ctx) {
		// A query over a WebSocket: graphql-transport-ws has one result
		// per query, whatever the upgrade request's Accept said.
		format = overhttp.NotIncremental
	}
	if oc.Operation.Operation != ast.Query || format == overhttp.NotIncremental {
		withoutDefer(oc)
		return nil
	}
	req := requestFrom(ctx)
	if req.Context == nil {
		return nil // not a request of the handler
	}
	d := &deferral{req: req, schema: x.schema, present: x.present, recover: x.recover, maxBytes: x.maxBytes,
		sent: make(chan struct{}), events: make(chan event, 4), v02: format == overhttp.IncrementalV02}
	d.mark(oc)
	req.deferral = d
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
	req     *request
	schema  graphql.ExecutableSchema
	present graphql.ErrorPresenterFunc
	recover graphql.RecoverFunc
	doc     *ast.QueryDocument // the operation's, its deferred fragments marked
	objects *generated.Objects // set as the operation starts executing
	v02     bool               // the incrementalSpec=v0.2 format: parts announced
	sent    chan struct{}      // closed once the initial payload is written
	events  chan event         // the parts' payloads, as they complete

	vars  map[string]any
	marks map[ast.Selection]string // the deferred fragments of doc (marked): their label

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
	pages   map[string]nextPage // by the path of a connection streamed by page
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

// mark gives oc a copy of its document and operation whose deferred
// fragments (@defer, if true, on an object type) are marked skipped, and
// without the other @defer directives (rewriteDefer).
func (d *deferral) mark(oc *graphql.OperationContext) {
	skip := &ast.Directive{Name: "skip", Definition: d.schema.Schema().Directives["skip"],
		Arguments: ast.ArgumentList{{Name: "if", Value: &ast.Value{Kind: ast.BooleanValue, Raw: "true"}}}}
	d.marks = map[ast.Selection]string{}
	rewriteDefer(oc, skip, d.marks)
	d.doc, d.vars = oc.Doc, oc.Variables
}

// groupsOf returns the deferred fragments that apply to an object of type
// typ selected with sel (directly or through fragments that are not
// deferred), by label, in the order of their first fragment.
func (d *deferral) groupsOf(sel ast.SelectionSet, typ string) []group {
	if len(d.marks) == 0 || len(sel) == 0 {
		return nil
	}
	k := keyOf(sel, typ)
	d.mu.Lock()
	gs, ok := d.groups[k]
	d.mu.Unlock()
	if ok {
		return gs
	}
	vars := d.vars
	seen := map[string]bool{}
	add := func(label string, ss ast.SelectionSet) {
		for i := range gs {
			if gs[i].label == label {
				gs[i].sel = append(slices.Clip(gs[i].sel), ss...)
				return
			}
		}
		gs = append(gs, group{label: label, sel: ss})
	}
	var walk func(ast.SelectionSet)
	walk = func(ss ast.SelectionSet) {
		for _, s := range ss {
			var dirs ast.DirectiveList
			var cond string
			var inner ast.SelectionSet
			switch s := s.(type) {
			case *ast.InlineFragment:
				dirs, cond, inner = s.Directives, s.TypeCondition, s.SelectionSet
			case *ast.FragmentSpread:
				f := d.doc.Fragments.ForName(s.Name)
				if f == nil {
					continue
				}
				dirs, cond, inner = s.Directives, f.TypeCondition, f.SelectionSet
				if _, marked := d.marks[s]; !marked {
					if seen[s.Name] {
						continue
					}
					seen[s.Name] = true
				}
			default:
				continue
			}
			if !d.applies(cond, typ) {
				continue
			}
			if label, marked := d.marks[s]; marked {
				if included(dirs[1:], vars) {
					add(label, inner)
				}
				continue
			}
			if included(dirs, vars) {
				walk(inner)
			}
		}
	}
	walk(sel)
	d.mu.Lock()
	if d.groups == nil {
		d.groups = map[selKey][]group{}
	}
	d.groups[k] = gs
	d.mu.Unlock()
	return gs
}

// applies reports whether a fragment with the type condition cond applies
// to an object of type typ.
func (d *deferral) applies(cond, typ string) bool {
	if cond == "" || cond == typ {
		return true
	}
	s := d.schema.Schema()
	t, c := s.Types[typ], s.Types[cond]
	if t == nil || c == nil {
		return false
	}
	return slices.ContainsFunc(s.GetPossibleTypes(c), func(p *ast.Definition) bool { return p.Name == typ })
}

// included reports whether @skip and @include of dirs let a selection in.
func included(dirs ast.DirectiveList, vars map[string]any) bool {
	for _, dir := range dirs {
		if dir.Name != "skip" && dir.Name != "include" {
			continue
		}
		arg := dir.Arguments.ForName("if")
		if arg == nil {
			continue
		}
		v, _ := arg.Value.Value(vars)
		if on, _ := v.(bool); on == (dir.Name == "skip") {
			return false
		}
	}
	return true
}

// deferIn registers the parts of the deferred fragments in the selection
// of the field of fc, which resolved to res: one per object and label.
func (d *deferral) deferIn(ctx context.Context, fc *graphql.FieldContext, res any) {
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
func (d *deferral) deferItem(ctx context.Context, listPath ast.Path, typ string, list reflect.Value, i, index int, groups []group) {
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
func (d *deferral) register(ctx context.Context, path ast.Path, typ string, obj any, groups []group) {
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

// openStream registers the stream of the list at listPath: its part (the
// label, else "stream <path>", as calls name it).
func (d *deferral) openStream(ctx context.Context, listPath ast.Path, label string) *part {
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

// writtenLocked reports whether the payload that carries what resolves at
// k is written (d.mu held): the initial payload (k.p nil), a deferred
// group's, or a stream's run that holds item k.item.
func (d *deferral) writtenLocked(k partAt) bool {
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
func (d *deferral) keysOf(ev event, f func(partAt)) {
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
func (d *deferral) written(ev event) {
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
			if d.req.calls != nil {
				d.req.calls.FirstPayload()
			}
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
func (d *deferral) run(p *part) {
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
func (d *deferral) wait(ctx context.Context) bool {
	select {
	case <-d.sent:
		return true
	case <-ctx.Done():
		return false
	}
}

// stream resolves the list field of fc with resolve and, when @stream (dir)
// is on and the list has more than its initialCount items of a type
// generated.Streams marshals, returns the first initialCount for the
// initial payload and resolves the others apart once it is written, all at
// once: each part is a run of them (a JSON array at the path of its first
// item), sent as soon as it and every item before it are complete, so the
// items arrive in order, as their links load. A list inside a deferred
// part (or a stream's items) comes whole in it: its stream would have to
// start after the payload that holds the list.
func (d *deferral) stream(ctx context.Context, fc *graphql.FieldContext, dir *ast.Directive, vars map[string]any, resolve func(context.Context) (any, error)) (any, error) {
	res, err := resolve(ctx)
	args := dir.ArgumentMap(vars)
	if on, _ := args["if"].(bool); err != nil || !on || d.schema == nil || inDeferredPart(ctx) {
		return res, err
	}
	n, _ := args["initialCount"].(int64)
	label, _ := args["label"].(string)
	list := reflect.ValueOf(res)
	if src := d.pagesOf(fc); src != nil && n >= 0 && list.Kind() == reflect.Slice {
		return d.streamPages(ctx, fc, int(n), label, list, src)
	}
	if n < 0 || list.Kind() != reflect.Slice || int64(list.Len()) <= n {
		return res, err
	}
	if !generated.Streams(res) {
		return res, err // not a connection's list
	}
	first, total := int(n), list.Len()
	listPath, sel, typ := fc.Path(), fc.Field.Selections, fc.Field.Definition.Type.Name()
	sp := d.openStream(ctx, listPath, label)
	go func() {
		if !d.wait(ctx) {
			return
		}
		groups := d.groupsOf(sel, typ)
		// Each item resolves on a response context of its own (ictxs):
		// a run's errors are its items', read once the run is marshalled.
		items := make([]graphql.Marshaler, total)
		ictxs := make([]context.Context, total)
		done := make(chan int, total-first)
		for i := first; i < total; i++ {
			go func() {
				ictx := graphql.WithFreshResponseContext(context.WithValue(ctx, partKey{}, partAt{p: sp, item: i}))
				d.deferItem(ictx, listPath, typ, list, i, i, groups)
				items[i], _ = d.objects.Item(ictx, sel, res, i, i)
				ictxs[i] = ictx
				done <- i
			}()
		}
		complete := make([]bool, total)
		next := first
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
			runCtxs := ictxs[from:next]
			if slices.Contains(run, graphql.Marshaler(graphql.Null)) {
				data, next = graphql.Null, total // an item that cannot be null is: the rest is not sent
			}
			resp := payload(data, append(slices.Clip(listPath), ast.PathIndex(from)), label, runCtxs...)
			select {
			case d.events <- event{resp: resp, p: sp, last: next == total, to: next}:
			case <-ctx.Done():
				return
			}
			if next == total {
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
// under @stream, and nothing else (pageInfo needs the last page; a deferred
// fragment on it, every page). The connection then registers its later pages
// (deferral.registerPages).
func streamsPages(ctx context.Context, first *int) (d *deferral, list string) {
	d = requestFrom(ctx).deferral
	if d == nil || first == nil || *first <= paging.UpstreamMaxLimit || inDeferredPart(ctx) {
		return nil, ""
	}
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil {
		return nil, ""
	}
	typ := fc.Field.Definition.Type.Name()
	if len(d.groupsOf(fc.Field.Selections, typ)) > 0 {
		return nil, "" // a deferred part completes the connection: it needs every page
	}
	oc := graphql.GetOperationContext(ctx)
	for _, f := range graphql.CollectFields(oc, fc.Field.Selections, []string{typ}) {
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

// registerPages registers next as the source of the later pages of the
// connection ctx resolves, for the stream of its list.
func (d *deferral) registerPages(ctx context.Context, next nextPage) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pages == nil {
		d.pages = map[string]nextPage{}
	}
	d.pages[graphql.GetFieldContext(ctx).Path().String()] = next
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
	next := d.pages[key]
	delete(d.pages, key)
	return next
}

// streamPages is stream for a connection's list whose later pages src
// fetches (streamsPages): list holds the first page's items. The initial
// payload has the first initialCount items (with as many pages fetched as
// they need); once it is written, the rest of the page is sent, then each
// later page's items as soon as that page is fetched and its items' links
// are loaded, one part per page, in order.
func (d *deferral) streamPages(ctx context.Context, fc *graphql.FieldContext, n int, label string, list reflect.Value, src nextPage) (any, error) {
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
	listPath, sel, typ := fc.Path(), fc.Field.Selections, fc.Field.Definition.Type.Name()
	sp := d.openStream(ctx, listPath, label)
	go func() {
		if !d.wait(ctx) {
			return
		}
		groups := d.groupsOf(sel, typ)
		chunk, index := list.Slice(n, list.Len()), n
		for {
			if chunk.Len() > 0 || last {
				// The run of a page: its items resolve on a response context
				// of its own, whose errors are read once the run is
				// marshalled.
				rctx := graphql.WithFreshResponseContext(ctx)
				items := make([]graphql.Marshaler, chunk.Len())
				var wg sync.WaitGroup
				for i := range items {
					wg.Go(func() {
						ictx := context.WithValue(rctx, partKey{}, partAt{p: sp, item: index + i})
						d.deferItem(ictx, listPath, typ, chunk, i, index+i, groups)
						items[i], _ = d.objects.Item(ictx, sel, chunk.Interface(), i, index+i)
					})
				}
				wg.Wait()
				var data graphql.Marshaler = graphql.Array(items)
				if slices.Contains(items, graphql.Marshaler(graphql.Null)) {
					data, last = graphql.Null, true // an item that cannot be null is: the rest is not sent
				}
				resp := payload(data, append(slices.Clip(listPath), ast.PathIndex(index)), label, rctx)
				index += chunk.Len()
				select {
				case d.events <- event{resp: resp, p: sp, last: last, to: index}:
				case <-ctx.Done():
					return
				}
				if last {
					return
				}
			}
			fctx := graphql.WithFreshResponseContext(context.WithValue(ctx, partKey{}, partAt{p: sp, item: index}))
			more, l, err := src(fctx)
			if err != nil {
				graphql.AddError(fctx, err)
				resp := payload(graphql.Null, append(slices.Clip(listPath), ast.PathIndex(index)), label, fctx)
				select {
				case d.events <- event{resp: resp, p: sp, last: true, to: index}:
				case <-ctx.Done():
				}
				return
			}
			chunk, last = reflect.ValueOf(more), l
		}
	}()
	return list.Slice(0, n).Interface(), nil
}

// handler returns the operation's response handler over gqlgen's: the
// initial payload, then the parts as they complete. Each call after the
// first means the payload the previous one returned is written: the parts
// it announced start.
func (d *deferral) handler(inner graphql.ResponseHandler) graphql.ResponseHandler {
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
				r := &graphql.Response{Data: []byte("null"), Errors: gqlerror.List{tooLarge(d.size, d.maxBytes)}}
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
	d.report(r)
	return r
}

// annotate gives the transport the incrementalSpec=v0.2 entries of resp, the
// initial payload or the payload of ev: the parts it makes known (those it
// brings the objects of), the part it delivers and whether it completes it,
// and, in the last, the parts still open.
func (d *deferral) annotate(ctx context.Context, resp *graphql.Response, ev event, initial bool) {
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
func (d *deferral) report(resp *graphql.Response) {
	if req := d.req; req.trace && req.calls != nil {
		if resp.Extensions == nil {
			resp.Extensions = map[string]any{}
		}
		resp.Extensions["upstream"] = req.calls.Report()
	}
}

// codes gives the access log the error codes of a part (the initial
// payload passes through upstreamReport).
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
// or the label of the deferred part or stream (when it has none,
// "deferred <path>" or "stream <path>").
func callPart(ctx context.Context) string {
	if requestFrom(ctx).deferral == nil {
		return ""
	}
	if p, _ := partOf(ctx); p != nil {
		return p.name
	}
	return "initial"
}

// inDeferredPart reports whether ctx resolves what a payload after the
// initial one brings (a deferred part, or a stream's later items).
func inDeferredPart(ctx context.Context) bool {
	p, _ := partOf(ctx)
	return p != nil
}

// lookahead returns the fields the query selects on what the field of ctx
// resolves to, as gqlgen collects them (satisfies: the object types, nil
// for any), the fields of its deferred fragments included: what a
// resolver loads must be what the query without @defer loads.
func lookahead(ctx context.Context, satisfies []string) []graphql.CollectedField {
	fc := graphql.GetFieldContext(ctx)
	d := requestFrom(ctx).deferral
	if d == nil || len(d.marks) == 0 || fc == nil {
		return graphql.CollectFieldsCtx(ctx, satisfies)
	}
	return graphql.CollectFields(graphql.GetOperationContext(ctx), d.lookaheadSet(fc.Field.Selections), satisfies)
}

// lookaheadSet returns sel with its deferred fragments unmarked, and the
// fragments it spreads that hold one inline.
func (d *deferral) lookaheadSet(sel ast.SelectionSet) ast.SelectionSet {
	k := keyOf(sel, "")
	d.mu.Lock()
	out, ok := d.looks[k]
	d.mu.Unlock()
	if ok {
		return out
	}
	var rewrite func(ss ast.SelectionSet) (ast.SelectionSet, bool)
	rewrite = func(ss ast.SelectionSet) (ast.SelectionSet, bool) {
		var out ast.SelectionSet
		for i, s := range ss {
			_, marked := d.marks[s]
			var n ast.Selection
			switch s := s.(type) {
			case *ast.InlineFragment:
				sub, changed := rewrite(s.SelectionSet)
				if changed || marked {
					c := *s
					c.SelectionSet = sub
					if marked {
						c.Directives = c.Directives[1:]
					}
					n = &c
				}
			case *ast.FragmentSpread:
				f := d.doc.Fragments.ForName(s.Name)
				if f == nil {
					continue
				}
				sub, changed := rewrite(f.SelectionSet)
				if changed || marked {
					dirs := s.Directives
					if marked {
						dirs = dirs[1:]
					}
					n = &ast.InlineFragment{TypeCondition: f.TypeCondition, Directives: dirs, SelectionSet: sub, ObjectDefinition: f.Definition, Position: s.Position}
				}
			}
			if n == nil {
				continue
			}
			if out == nil {
				out = slices.Clone(ss)
			}
			out[i] = n
		}
		if out == nil {
			return ss, false
		}
		return out, true
	}
	out, _ = rewrite(sel)
	d.mu.Lock()
	if d.looks == nil {
		d.looks = map[selKey]ast.SelectionSet{}
	}
	d.looks[k] = out
	d.mu.Unlock()
	return out
}

// checkStreams refuses a @stream whose initialCount is negative
// (BAD_USER_INPUT, before anything runs), in ss and the fragments it
// spreads.
func checkStreams(doc *ast.QueryDocument, ss ast.SelectionSet, vars map[string]any, seen map[string]bool) *gqlerror.Error {
	for _, sel := range ss {
		switch s := sel.(type) {
		case *ast.Field:
			if dir := s.Directives.ForName("stream"); dir != nil && dir.Definition != nil {
				if n, _ := dir.ArgumentMap(vars)["initialCount"].(int64); n < 0 {
					e := gqlerror.ErrorPosf(dir.Position, "@stream on %s: initialCount must be 0 or more, got %d", s.Alias, n)
					e.Extensions = map[string]any{"code": errcode.BadUserInput, "field": "initialCount"}
					return e
				}
			}
			if err := checkStreams(doc, s.SelectionSet, vars, seen); err != nil {
				return err
			}
		case *ast.InlineFragment:
			if err := checkStreams(doc, s.SelectionSet, vars, seen); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			if f := doc.Fragments.ForName(s.Name); f != nil {
				if err := checkStreams(doc, f.SelectionSet, vars, seen); err != nil {
					return err
				}
			}
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
// directives.
func withoutDefer(oc *graphql.OperationContext) { rewriteDefer(oc, nil, nil) }

// rewriteDefer gives oc a copy of its document and operation in which each
// fragment with @defer, if true, spread on an object type generated.Objects
// marshals, has skip put first among its directives (the copy recorded in
// marks with its label), and every other @defer is removed; with skip nil,
// every @defer is removed. The cached document is shared by other
// requests: the nodes on the way to a @defer are copied, the rest shared.
func rewriteDefer(oc *graphql.OperationContext, skip *ast.Directive, marks map[ast.Selection]string) {
	r := rewriter{vars: oc.Variables, skip: skip, marks: marks}
	doc := *oc.Doc
	doc.Fragments = make(ast.FragmentDefinitionList, len(oc.Doc.Fragments))
	for i, f := range oc.Doc.Fragments {
		if ss, changed := r.selections(f.SelectionSet, f.TypeCondition); changed {
			c := *f
			c.SelectionSet = ss
			f = &c
		}
		doc.Fragments[i] = f
	}
	op := *oc.Operation
	root := map[ast.Operation]string{ast.Query: "Query", ast.Mutation: "Mutation", ast.Subscription: "Subscription"}[op.Operation]
	op.SelectionSet, _ = r.selections(op.SelectionSet, root)
	doc.Operations = make(ast.OperationList, len(oc.Doc.Operations))
	for i, o := range oc.Doc.Operations {
		if o == oc.Operation {
			o = &op
		}
		doc.Operations[i] = o
	}
	oc.Doc, oc.Operation = &doc, &op
}

type rewriter struct {
	vars  map[string]any
	skip  *ast.Directive
	marks map[ast.Selection]string
}

// selections rewrites ss, the selections of an object of type typ.
func (r rewriter) selections(ss ast.SelectionSet, typ string) (ast.SelectionSet, bool) {
	var out ast.SelectionSet
	for i, sel := range ss {
		var n ast.Selection
		label, marked := "", false
		switch s := sel.(type) {
		case *ast.Field:
			if s.Definition == nil || len(s.SelectionSet) == 0 {
				continue
			}
			if sub, changed := r.selections(s.SelectionSet, s.Definition.Type.Name()); changed {
				c := *s
				c.SelectionSet = sub
				n = &c
			}
		case *ast.InlineFragment:
			inner := typ
			if s.TypeCondition != "" {
				inner = s.TypeCondition
			}
			sub, changed := r.selections(s.SelectionSet, inner)
			var dirs ast.DirectiveList
			var dropped bool
			dirs, dropped, label, marked = r.directives(s.Directives, typ)
			if changed || dropped {
				c := *s
				c.SelectionSet, c.Directives = sub, dirs
				n = &c
			}
		case *ast.FragmentSpread:
			if dirs, dropped, l, m := r.directives(s.Directives, typ); dropped {
				c := *s
				c.Directives = dirs
				n, label, marked = &c, l, m
			}
		}
		if n == nil {
			continue
		}
		if out == nil {
			out = slices.Clone(ss)
		}
		out[i] = n
		if marked {
			r.marks[n] = label
		}
	}
	if out == nil {
		return ss, false
	}
	return out, true
}

// directives returns the directives dirs of a fragment spread on an object
// of type typ rewritten (changed: false when it has no @defer): skip first
// (marked, with the @defer's label) or without @defer.
func (r rewriter) directives(dirs ast.DirectiveList, typ string) (out ast.DirectiveList, changed bool, label string, marked bool) {
	dir := dirs.ForName("defer")
	if dir == nil {
		return dirs, false, "", false
	}
	args := dir.ArgumentMap(r.vars)
	if on, ok := args["if"].(bool); r.skip != nil && (!ok || on) && generated.IsObject(typ) {
		label, _ = args["label"].(string)
		return append(ast.DirectiveList{r.skip}, dirs...), true, label, true
	}
	out = make(ast.DirectiveList, 0, len(dirs)-1)
	for _, d := range dirs {
		if d.Name != "defer" {
			out = append(out, d)
		}
	}
	return out, true, "", false
}
