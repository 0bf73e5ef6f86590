package generated

// Written by hand, not by gqlgen (it writes generated.go; objects_gen.go is
// written by graph/internal/objectsgen): the objects graph marshals outside
// gqlgen's own walk of an operation (the fields of a deferred fragment on
// the object it was spread on; the later items of a streamed list), by the
// generated marshallers of their type.

import (
	"context"
	"math"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/workspacenet/facade/graph/model"
	"github.com/workspacenet/facade/restclient"
)

// Objects marshals objects of one operation with an execution context of
// its own (gqlgen's executor defers nothing in it: graph delivers @defer
// and @stream itself).
type Objects struct {
	ec *executionContext
}

// NewObjects returns the Objects of the operation of ctx; es is the schema
// of NewExecutableSchema (nil if it is not).
func NewObjects(ctx context.Context, es graphql.ExecutableSchema) *Objects {
	e, ok := es.(*executableSchema)
	if !ok {
		return nil
	}
	return &Objects{ec: newExecutionContext(graphql.GetOperationContext(ctx), e, make(chan graphql.DeferredResult))}
}

// IsObject reports whether typ is a GraphQL object type Marshal marshals
// (every object type of the schema but Mutation and Subscription).
func IsObject(typ string) bool { return objectTypes[typ] }

// Marshal marshals obj, an object of the GraphQL object type typ (a
// pointer to, or a value of, the Go type typ binds to; nil for Query),
// with the selections sel at ctx (the object's field context), as gqlgen's
// executor marshals it as a field's value: its fields resolved, their
// errors added to ctx's response context. false if typ is not an object
// type (IsObject) or obj is nil or not of its Go type.
func (o *Objects) Marshal(ctx context.Context, typ string, sel ast.SelectionSet, obj any) (graphql.Marshaler, bool) {
	return o.ec.object(ctx, typ, sel, obj)
}

// Streams reports whether items is a list of a type Item streams (a
// connection's nodes or edges).
func Streams(items any) bool {
	_, ok := (&Objects{}).Item(context.Background(), nil, items, math.MaxInt, 0)
	return ok
}

// Item marshals items[i], an element of a connection's nodes or edges list
// resolved at ctx (the list field's context; items is the list or a part of
// it), with the selections sel, under the field context of index (its index
// in the whole list), as gqlgen marshals a list's element. ok is false for
// a list type it does not stream (with items of that type, even empty); m
// is nil when i is past the end.
func (o *Objects) Item(ctx context.Context, sel ast.SelectionSet, items any, i, index int) (m graphql.Marshaler, ok bool) {
	ec := o.ec
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
