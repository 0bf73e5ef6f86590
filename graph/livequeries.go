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

// incrementalIn reports whether sel uses @defer or @stream.
func incrementalIn(sel ast.SelectionSet) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if s.Directives.ForName("stream") != nil || incrementalIn(s.SelectionSet) {
				return true
			}
		case *ast.InlineFragment:
			if s.Directives.ForName("defer") != nil || incrementalIn(s.SelectionSet) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Directives.ForName("defer") != nil || (s.Definition != nil && incrementalIn(s.Definition.SelectionSet)) {
				return true
			}
		}
	}
	return false
}

// oneError is the one response of an operation refused with c.
func oneError(c *gqlerr.Coded) graphql.ResponseHandler {
	ext := map[string]any{"code": c.Code}
	for k, v := range c.Ext {
		ext[k] = v
	}
	return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{{Message: c.Message, Extensions: ext}}})
}
