package graph

import (
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql"

	"github.com/workspacenet/facade/internal/accesslog"
	"github.com/workspacenet/facade/internal/metrics"
)

// The endpoint's metrics (Options.Metrics): observed counts each request in
// flight and records it when it ends; observeOperation, the outermost
// response middleware, tells it the operation and the response's error
// codes; refusals before GraphQL runs (graph/guard) are taken from the
// access log entry, where refuse records them.

type metricsKey struct{}

// observed wraps the endpoint with m's request metrics (next itself when m
// is nil). A CORS preflight (OPTIONS) is not recorded.
func observed(m *metrics.Facade, next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := m.StartRequest()
		if r.Method == http.MethodOptions {
			rec.Skip()
		}
		ctx := context.WithValue(r.Context(), metricsKey{}, rec)
		defer func() { rec.End(accesslog.From(ctx).Codes()...) }()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// observeOperation gives the request's metrics the operation's type and
// name and the codes of the response's errors.
func observeOperation(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	rec, _ := ctx.Value(metricsKey{}).(*metrics.Request)
	if rec == nil {
		return resp
	}
	if graphql.HasOperationContext(ctx) {
		if op := graphql.GetOperationContext(ctx).Operation; op != nil {
			rec.SetOperation(string(op.Operation), op.Name)
		}
	}
	if resp != nil {
		codes := make([]string, 0, len(resp.Errors))
		for _, e := range resp.Errors {
			c, _ := e.Extensions["code"].(string)
			codes = append(codes, c)
		}
		rec.Responded(codes...)
	}
	return resp
}
