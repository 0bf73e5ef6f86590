package generated

// Written by hand, not by gqlgen (it writes generated.go only): the list
// items of a connection that graph streams (@stream), marshalled by the
// generated marshallers of their type.

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/workspacenet/facade/graph/model"
	"github.com/workspacenet/facade/restclient"
)

// StreamItems marshals items, the elements from index first on of a
// connection's nodes or edges list resolved at ctx (the list field's
// context), with the selections sel: each under the field context of its
// index in the whole list, concurrently, as gqlgen marshals a list. ok is
// false for a list type it does not stream. es is the schema of
// NewExecutableSchema. A @defer inside the items is not delivered (their
// deferred fields stay null).
func StreamItems(ctx context.Context, es graphql.ExecutableSchema, sel ast.SelectionSet, items any, first int) (m graphql.Marshaler, ok bool) {
	e, ok := es.(*executableSchema)
	if !ok {
		return nil, false
	}
	ec := newExecutionContext(graphql.GetOperationContext(ctx), e, nil)
	switch v := items.(type) {
	case []*restclient.Transaction:
		return each(ctx, v, first, func(ctx context.Context, x *restclient.Transaction) graphql.Marshaler {
			return ec.marshalNTransaction2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋrestclientᚐTransaction(ctx, sel, x)
		}), true
	case []*model.TransactionEdge:
		return each(ctx, v, first, func(ctx context.Context, x *model.TransactionEdge) graphql.Marshaler {
			return ec.marshalNTransactionEdge2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋgraphᚋmodelᚐTransactionEdge(ctx, sel, x)
		}), true
	case []*restclient.Order:
		return each(ctx, v, first, func(ctx context.Context, x *restclient.Order) graphql.Marshaler {
			return ec.marshalNOrder2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋrestclientᚐOrder(ctx, sel, x)
		}), true
	case []*model.OrderEdge:
		return each(ctx, v, first, func(ctx context.Context, x *model.OrderEdge) graphql.Marshaler {
			return ec.marshalNOrderEdge2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋgraphᚋmodelᚐOrderEdge(ctx, sel, x)
		}), true
	case []*restclient.CreditNote:
		return each(ctx, v, first, func(ctx context.Context, x *restclient.CreditNote) graphql.Marshaler {
			return ec.marshalNCreditNote2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋrestclientᚐCreditNote(ctx, sel, x)
		}), true
	case []*model.CreditNoteEdge:
		return each(ctx, v, first, func(ctx context.Context, x *model.CreditNoteEdge) graphql.Marshaler {
			return ec.marshalNCreditNoteEdge2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋgraphᚋmodelᚐCreditNoteEdge(ctx, sel, x)
		}), true
	case []*restclient.Redemption:
		return each(ctx, v, first, func(ctx context.Context, x *restclient.Redemption) graphql.Marshaler {
			return ec.marshalNRedemption2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋrestclientᚐRedemption(ctx, sel, x)
		}), true
	case []*model.RedemptionEdge:
		return each(ctx, v, first, func(ctx context.Context, x *model.RedemptionEdge) graphql.Marshaler {
			return ec.marshalNRedemptionEdge2ᚖgithubᚗcomᚋworkspacenetᚋfacadeᚋgraphᚋmodelᚐRedemptionEdge(ctx, sel, x)
		}), true
	}
	return nil, false
}

// each marshals v's elements concurrently, each under the field context of
// its index (first + i); Null when one of them is (the elements are
// non-null).
func each[T any](ctx context.Context, v []T, first int, marshal func(context.Context, T) graphql.Marshaler) graphql.Marshaler {
	out := make(graphql.Array, len(v))
	var wg sync.WaitGroup
	for i := range v {
		wg.Go(func() {
			idx := first + i
			ictx := graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &idx, Result: &v[i]})
			out[i] = marshal(ictx, v[i])
		})
	}
	wg.Wait()
	for _, m := range out {
		if m == graphql.Null {
			return graphql.Null
		}
	}
	return out
}
