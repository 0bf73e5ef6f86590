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
//   - The operation holds its admission units until its last part is
//     written (admission.Keep); the call cap, cost limit and deadline are
//     the request's, for all its parts.
type incremental struct {
	schema graphql.ExecutableSchema // for @stream's items (generated.StreamItem)
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
	if oc.Operation.Operation != ast.Query || overhttp.AcceptsIncremental(oc.Headers).Format == overhttp.NotIncremental {
		withoutDefer(oc)
		return nil
	}
	req := requestFrom(ctx)
	if req.Context == nil {
		return nil // not a request of the handler
	}
	d := &deferral{sent: make(chan struct{}), events: make(chan event, 4), out: make(chan *graphql.Response, 4), req: req, doc: oc.Doc}
	req.deferral = d
	fields, roots := oc.ResolverMiddleware, oc.RootResolverMiddleware
	oc.ResolverMiddleware = func(ctx context.Context, next graphql.Resolver) (any, error) {
		fc := graphql.GetFieldContext(ctx)
		if fc != nil && fc.Field.Field != nil {
			if dir := fc.Field.Directives.ForName("stream"); dir != nil {
				return d.stream(ctx, x.schema, fc, dir, oc.Variables, func(ctx context.Context) (any, error) { return fields(ctx, next) })
			}
		}
		if fc != nil && fc.IsResolver && fc.Field.IsDeferred() {
			// A field gqlgen resolves apart: it starts once the initial
			// payload is sent.
			if !d.wait(ctx) {
				return nil, ctx.Err()
			}
		}
		return fields(ctx, next)
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

	roots  atomic.Int32 // deferred root fields
	events chan event   // to the pump: gqlgen's parts, root parts, idle polls
	out    chan *graphql.Response
}

type event struct {
	resp   *graphql.Response // nil: gqlgen had nothing more (idle)
	root   bool
	nested bool // a root part whose selection has @defer inside
	// more: gqlgen's part: gqlgen had more pending; a stream's run: more
	// runs of the same list follow.
	more bool
}

// wait waits until the initial payload is sent; false if ctx ends first.
func (d *deferral) wait(ctx context.Context) bool {
	select {
	case <-d.sent:
		return true
	case <-ctx.Done():
		return false
	}
}

// root resolves the deferred root field f apart with resolve, once the
// initial payload is sent, and sends its part to the pump.
func (d *deferral) root(ctx context.Context, f graphql.CollectedField, resolve func(context.Context) graphql.Marshaler) {
	d.roots.Add(1)
	label := f.Deferrables[0].Label
	nested := hasDefer(d.doc, f.Selections, map[string]bool{})
	go func() {
		if !d.wait(ctx) {
			return
		}
		rctx := graphql.WithFreshResponseContext(ctx)
		m := resolve(rctx)
		var b bytes.Buffer
		b.WriteString(`{` + strconv.Quote(f.Alias) + `:`)
		m.MarshalGQL(&b)
		b.WriteByte('}')
		resp := &graphql.Response{Data: b.Bytes(), Path: ast.Path{}, Label: label, Errors: graphql.GetErrors(rctx)}
		select {
		case d.events <- event{resp: resp, root: true, nested: nested}:
		case <-ctx.Done():
		}
	}()
}

type streamKey struct{}

// stream resolves the list field of fc with resolve and, when @stream (dir)
// is on and the list has more than its initialCount items of a type
// generated.StreamItem marshals, returns the first initialCount for the
// initial payload and resolves the others apart once it is sent, all at
// once: each part is a run of them (a JSON array at the path of its first
// item), sent as soon as it and every item before it are complete, so the
// items arrive in order, as their links load.
func (d *deferral) stream(ctx context.Context, schema graphql.ExecutableSchema, fc *graphql.FieldContext, dir *ast.Directive, vars map[string]any, resolve func(context.Context) (any, error)) (any, error) {
	res, err := resolve(ctx)
	args := dir.ArgumentMap(vars)
	if on, _ := args["if"].(bool); err != nil || !on || schema == nil {
		return res, err
	}
	n, _ := args["initialCount"].(int64)
	label, _ := args["label"].(string)
	list := reflect.ValueOf(res)
	if n < 0 || list.Kind() != reflect.Slice || int64(list.Len()) <= n {
		return res, err
	}
	if _, ok := generated.StreamItem(ctx, schema, nil, res, list.Len(), 0); !ok {
		return res, err // not a connection's list
	}
	first, total := int(n), list.Len()
	listPath := fc.Path()
	sel := fc.Field.Selections
	part := label
	if part == "" {
		part = "stream " + listPath.String()
	}
	d.roots.Add(1)
	go func() {
		if !d.wait(ctx) {
			return
		}
		sctx := graphql.WithFreshResponseContext(context.WithValue(ctx, streamKey{}, part))
		items := make([]graphql.Marshaler, total)
		done := make(chan int, total-first)
		for i := first; i < total; i++ {
			go func() {
				items[i], _ = generated.StreamItem(sctx, schema, sel, res, i, i)
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
			for _, m := range run {
				if m == graphql.Null { // an item that cannot be null is: the rest is not sent
					data, next = graphql.Null, total
					break
				}
			}
			var b bytes.Buffer
			data.MarshalGQL(&b)
			errs := graphql.GetErrors(sctx)
			resp := &graphql.Response{Data: b.Bytes(), Path: append(slices.Clip(listPath), ast.PathIndex(from)), Label: label, Errors: errs[min(emitted, len(errs)):]}
			emitted = len(errs)
			select {
			case d.events <- event{resp: resp, root: true, more: next < total}:
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

// handler returns the operation's response handler over gqlgen's: the
// initial payload, then the parts from the pump.
func (d *deferral) handler(inner graphql.ResponseHandler) graphql.ResponseHandler {
	first := true
	return func(ctx context.Context) *graphql.Response {
		if first {
			first = false
			resp := inner(ctx)
			if resp == nil {
				return nil
			}
			gq := resp.HasNext != nil && *resp.HasNext
			roots := int(d.roots.Load())
			if !gq && roots == 0 {
				// Nothing was deferred (@defer(if: false), or only on
				// fields resolved inline): one ordinary response.
				resp.HasNext = nil
				d.report(resp)
				return resp
			}
			go d.pump(ctx, inner, gq, roots)
			t := true
			resp.HasNext = &t
			return resp
		}
		// The transport asks for the next part: the initial one is sent.
		d.once.Do(func() { close(d.sent) })
		select {
		case resp, ok := <-d.out:
			if !ok {
				return nil
			}
			return resp
		case <-ctx.Done():
			return nil
		}
	}
}

// pump merges gqlgen's deferred parts (polled from inner) and the root
// parts into d.out, in the order they complete, each with hasNext, the
// report on the last.
func (d *deferral) pump(ctx context.Context, inner graphql.ResponseHandler, gq bool, roots int) {
	defer close(d.out)
	poke := make(chan struct{}, 1)
	go func() { // polls gqlgen: one round per poke, until it has nothing pending
		for {
			select {
			case <-poke:
			case <-ctx.Done():
				return
			}
			for {
				r := inner(ctx)
				more := r != nil && r.HasNext != nil && *r.HasNext
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
	emit := func(resp *graphql.Response, more bool) bool {
		resp.HasNext = &more
		if !more {
			d.report(resp)
		}
		select {
		case d.out <- resp:
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
				emit(&graphql.Response{}, false)
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
		if !emit(ev.resp, lastMore) {
			return
		}
		if !lastMore {
			// Drain the round's end so the poller can stop.
			return
		}
	}
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
