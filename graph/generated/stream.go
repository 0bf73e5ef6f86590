package generated

// Written by hand, not by gqlgen (it writes generated.go only): the list
// items of a connection that graph streams (@stream), marshalled by the
// generated marshallers of their type.

import (
	"context"
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

// StreamItem marshals items[i], an element of a connection's nodes or edges
// list resolved at ctx (the list field's context; items is the list or a
// part of it), with the selections sel, under the field context of index
// (its index in the whole list), as gqlgen marshals a list's element. ok is
// false for a list type it does not stream (with items of that type, even
// empty). es is the schema of NewExecutableSchema. A @defer inside the item
// is not delivered (its deferred fields stay null): Stream.Item delivers it.
func StreamItem(ctx context.Context, es graphql.ExecutableSchema, sel ast.SelectionSet, items any, i, index int) (m graphql.Marshaler, ok bool) {
	e, ok := es.(*executableSchema)
	if !ok {
		return nil, false
	}
	s := &Stream{ec: newExecutionContext(graphql.GetOperationContext(ctx), e, nil)}
	return s.Item(ctx, sel, items, i, index)
}

// Item is StreamItem in s's execution context: the deferred parts of the
// item go to s.Deferred.
func (s *Stream) Item(ctx context.Context, sel ast.SelectionSet, items any, i, index int) (m graphql.Marshaler, ok bool) {
	ec := s.ec
	marshal := func(result any, f func(ctx context.Context) graphql.Marshaler) graphql.Marshaler {
		return f(graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &index, Result: result}))
	}
	switch v := items.(type) {
	case []*restclient.Transaction:
		if i >= len(v) {
			return nil, true
		}
		return marshal(&v[i], func(ctx context.Context) graphql.Marshaler {
			return ec.marshalNTransaction2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋrestclientᚐTransaction(ctx, sel, v[i])
		}), true
	case []*model.TransactionEdge:
		if i >= len(v) {
			return nil, true
		}
		return marshal(&v[i], func(ctx context.Context) graphql.Marshaler {
			return ec.marshalNTransactionEdge2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋgraphᚋmodelᚐTransactionEdge(ctx, sel, v[i])
		}), true
	case []*restclient.Order:
		if i >= len(v) {
			return nil, true
		}
		return marshal(&v[i], func(ctx context.Context) graphql.Marshaler {
			return ec.marshalNOrder2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋrestclientᚐOrder(ctx, sel, v[i])
		}), true
	case []*model.OrderEdge:
		if i >= len(v) {
			return nil, true
		}
		return marshal(&v[i], func(ctx context.Context) graphql.Marshaler {
			return ec.marshalNOrderEdge2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋgraphᚋmodelᚐOrderEdge(ctx, sel, v[i])
		}), true
	case []*restclient.CreditNote:
		if i >= len(v) {
			return nil, true
		}
		return marshal(&v[i], func(ctx context.Context) graphql.Marshaler {
			return ec.marshalNCreditNote2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋrestclientᚐCreditNote(ctx, sel, v[i])
		}), true
	case []*model.CreditNoteEdge:
		if i >= len(v) {
			return nil, true
		}
		return marshal(&v[i], func(ctx context.Context) graphql.Marshaler {
			return ec.marshalNCreditNoteEdge2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋgraphᚋmodelᚐCreditNoteEdge(ctx, sel, v[i])
		}), true
	case []*restclient.Redemption:
		if i >= len(v) {
			return nil, true
		}
		return marshal(&v[i], func(ctx context.Context) graphql.Marshaler {
			return ec.marshalNRedemption2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋrestclientᚐRedemption(ctx, sel, v[i])
		}), true
	case []*model.RedemptionEdge:
		if i >= len(v) {
			return nil, true
		}
		return marshal(&v[i], func(ctx context.Context) graphql.Marshaler {
			return ec.marshalNRedemptionEdge2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋgraphᚋmodelᚐRedemptionEdge(ctx, sel, v[i])
		}), true
	}
	return nil, false
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
