package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/livequery"
	"github.com/workspacenet/facade/graph/livetransport"
	"github.com/workspacenet/facade/graph/walk"
	"github.com/workspacenet/facade/restclient"
)

// liveQueries serves a query with @live received over a live transport
// (WebSocket, graphql-sse) with engine (graph/livequery); over plain HTTP,
// or without engine, it runs once, as without @live. A live query counts as
// one subscription of its connection (-live-max-per-connection), and each
// source it watches as one of its client and of the replica (the Hub's
// bounds). It cannot go with @defer or @stream.
func liveQueries(engine *livequery.Engine) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		oc := graphql.GetOperationContext(ctx)
		if engine == nil || !livetransport.IsLive(ctx) || !livequery.Is(oc) {
			return next(ctx)
		}
		if incrementalIn(oc.Operation.SelectionSet) {
			return oneError(&gqlerr.Coded{Code: errcode.BadRequest, Message: "@live cannot go with @defer or @stream: a live query's updates are patches of its whole result"})
		}
		creds, ok := restclient.CredentialsFromContext(ctx)
		if !ok || !requestFrom(ctx).hasCredentials {
			return oneError(&gqlerr.Coded{Code: errcode.Unauthenticated, Message: gqlerr.ErrNoCredentials.Error()})
		}
		conn := livetransport.ConnOf(ctx)
		if !conn.Take() {
			return oneError(tooManySubscriptions("connection", conn.Max()).(*gqlerr.Coded))
		}
		return engine.Serve(ctx, next, creds, conn.Give)
	}
}

// liveQueryEngine is the engine of the live queries: nil when live data
// is off.
func (o *Options) liveQueryEngine() *livequery.Engine {
	if o.Live == nil {
		return nil
	}
	return livequery.New(livequery.Config{Hub: o.Live, Client: o.Client, MaxBytes: o.LiveQueryMaxBytes, ReferenceInterval: o.LiveReferenceInterval})
}

// incrementalIn reports whether sel uses @defer or @stream (graph/walk).
func incrementalIn(sel ast.SelectionSet) bool {
	found := false
	var w walk.Walker
	w.Walk(sel, walk.Visitor{
		Field: func(f *ast.Field) bool {
			found = found || f.Directives.ForName("stream") != nil
			return !found
		},
		Fragment: func(f walk.Fragment) bool {
			found = found || f.Directives.ForName("defer") != nil
			return !found
		},
	})
	return found
}

// oneError is the one response of an operation refused with c.
func oneError(c *gqlerr.Coded) graphql.ResponseHandler {
	return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{gqlerr.New(c.Code, c.Message, c.Ext)}})
}
