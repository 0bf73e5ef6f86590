package generated

// Written by hand, not by gqlgen (it writes generated.go only): the list
// items of a connection that graph streams (@stream), marshalled by the
// generated marshallers of their type.

import (
	"context"
	"math"
	"reflect"
	"strings"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/workspacenet/facade/graph/model"
	"github.com/workspacenet/facade/restclient"
)

// Stream marshals the later items of a streamed list with one execution
// context of its own, whose deferred parts (a @defer inside the items) go to
// Deferred, Pending of them not yet received.
type Stream struct {
	ec       *executionContext
	Deferred chan graphql.DeferredResult
}

// NewStream returns the Stream of the operation of ctx; es is the schema of
// NewExecutableSchema (nil if it is not).
func NewStream(ctx context.Context, es graphql.ExecutableSchema) *Stream {
	e, ok := es.(*executableSchema)
	if !ok {
		return nil
	}
	ch := make(chan graphql.DeferredResult)
	return &Stream{ec: newExecutionContext(graphql.GetOperationContext(ctx), e, ch), Deferred: ch}
}

// Pending is the number of deferred parts of the items marshalled so far
// not yet received from Deferred (a part's own @defer adds to it before the
// part is sent).
func (s *Stream) Pending() int { return int(atomic.LoadInt32(&s.ec.PendingDeferred)) }

// Received counts a part received from Deferred.
func (s *Stream) Received() { atomic.AddInt32(&s.ec.PendingDeferred, -1) }

// Streams reports whether items is a list of a type Stream.Item streams (a
// connection's nodes or edges).
func Streams(items any) bool {
	_, ok := (&Stream{}).Item(context.Background(), nil, items, math.MaxInt, 0)
	return ok
}

// Item marshals items[i], an element of a connection's nodes or edges list
// resolved at ctx (the list field's context; items is the list or a part of
// it), with the selections sel, under the field context of index (its index
// in the whole list), as gqlgen marshals a list's element, in s's execution
// context: the deferred parts of the item go to s.Deferred. ok is false for
// a list type it does not stream (with items of that type, even empty); m is
// nil when i is past the end.
func (s *Stream) Item(ctx context.Context, sel ast.SelectionSet, items any, i, index int) (m graphql.Marshaler, ok bool) {
	ec := s.ec
	switch v := items.(type) {
	case []*restclient.Transaction:
		return item(ctx, sel, v, i, index, ec.marshalNTransaction2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋrestclientᚐTransaction)
	case []*model.TransactionEdge:
		return item(ctx, sel, v, i, index, ec.marshalNTransactionEdge2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋgraphᚋmodelᚐTransactionEdge)
	case []*restclient.Order:
		return item(ctx, sel, v, i, index, ec.marshalNOrder2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋrestclientᚐOrder)
	case []*model.OrderEdge:
		return item(ctx, sel, v, i, index, ec.marshalNOrderEdge2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋgraphᚋmodelᚐOrderEdge)
	case []*restclient.CreditNote:
		return item(ctx, sel, v, i, index, ec.marshalNCreditNote2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋrestclientᚐCreditNote)
	case []*model.CreditNoteEdge:
		return item(ctx, sel, v, i, index, ec.marshalNCreditNoteEdge2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋgraphᚋmodelᚐCreditNoteEdge)
	case []*restclient.Redemption:
		return item(ctx, sel, v, i, index, ec.marshalNRedemption2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋrestclientᚐRedemption)
	case []*model.RedemptionEdge:
		return item(ctx, sel, v, i, index, ec.marshalNRedemptionEdge2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋgraphᚋmodelᚐRedemptionEdge)
	}
	return nil, false
}

// item marshals v[i] with marshal under the field context of index; nil
// past the end.
func item[T any](ctx context.Context, sel ast.SelectionSet, v []T, i, index int, marshal func(context.Context, ast.SelectionSet, T) graphql.Marshaler) (graphql.Marshaler, bool) {
	if i >= len(v) {
		return nil, true
	}
	return marshal(graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &index, Result: &v[i]}), sel, v[i]), true
}

// concurrent: the object fields gqlgen resolves apart from their object
// (ResolveConcurrently: the fields with a resolver; a field of an object
// selected under @defer is deferred only when it is one), by type and
// field name, lower case: from the methods of ResolverRoot's resolvers.
var concurrent = func() map[string]map[string]bool {
	m := map[string]map[string]bool{}
	root := reflect.TypeFor[ResolverRoot]()
	for i := range root.NumMethod() {
		meth := root.Method(i)
		if meth.Name == "Query" || meth.Name == "Mutation" || meth.Type.NumOut() != 1 {
			continue
		}
		r := meth.Type.Out(0)
		fields := map[string]bool{}
		for j := range r.NumMethod() {
			fields[strings.ToLower(r.Method(j).Name)] = true
		}
		m[meth.Name] = fields
	}
	return m
}()

// Concurrent reports whether gqlgen resolves the field named field of the
// object type typ apart from its object (a field with a resolver): such a
// field, selected under @defer, is delivered in a deferred part.
func Concurrent(typ, field string) bool {
	return concurrent[typ][strings.ToLower(strings.ReplaceAll(field, "_", ""))]
}
