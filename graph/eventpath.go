package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// eventRootField returns ctx, the context of one response of a live
// transport, with the field context of the subscription's root field: each
// event resolves under it. gqlgen (v0.17.98, ResolveFieldStream) marshals an
// event with the context the transport passes for it, which lacks that
// field: without it, an error in an event (an UPSTREAM_INVALID value, a
// link that failed) would have the path ["node", ...] instead of
// ["orderEvents", "node", ...], and calls would rank one level shallower
// than in a query (callPriority). Other operations' ctx is returned as it
// is.
func eventRootField(ctx context.Context) context.Context {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Subscription || graphql.GetFieldContext(ctx) != nil {
		return ctx
	}
	fields := graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Subscription"})
	if len(fields) != 1 { // validation allows one root field
		return ctx
	}
	return graphql.WithFieldContext(ctx, &graphql.FieldContext{Object: "Subscription", Field: fields[0], IsMethod: true, IsResolver: true})
}
