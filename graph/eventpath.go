package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// eventRootField resolves each event of a subscription under the field
// context of its root field. gqlgen (v0.17.98, ResolveFieldStream) marshals
// an event with the context the transport passes for it, which lacks that
// field: without this, an error in an event (an UPSTREAM_INVALID value, a
// link that failed) would have the path ["node", ...] instead of
// ["orderEvents", "node", ...], and calls would rank one level shallower
// than in a query (callPriority).
func eventRootField(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Subscription || graphql.GetFieldContext(ctx) != nil {
		return next(ctx)
	}
	fields := graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Subscription"})
	if len(fields) != 1 { // validation allows one root field
		return next(ctx)
	}
	return next(graphql.WithFieldContext(ctx, &graphql.FieldContext{Object: "Subscription", Field: fields[0], IsMethod: true, IsResolver: true}))
}
