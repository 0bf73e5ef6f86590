package graph

import (
	"context"
	"errors"
	"net/http"

	"github.com/99designs/gqlgen/graphql"

	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/internal/base/accesslog"
	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/policy/calls"
	"github.com/workspacenet/facade/internal/policy/metrics"
	"github.com/workspacenet/facade/restclient"
)

// The endpoint's metrics (Options.Metrics): observe counts each request in
// flight and records it when it ends; observeOperation, the outermost
// response middleware, tells it the operation and the response's error
// codes; refusals before GraphQL runs (graph/guard) are taken from the
// access log entry, where refuse records them.

// observe starts recording the request r in m (nothing when m is nil) and
// returns its context, carrying the record, and the func that ends it. A
// CORS preflight (OPTIONS) is not recorded.
func observe(ctx context.Context, m *metrics.Facade, r *http.Request) (context.Context, func()) {
	if m == nil {
		return ctx, func() {}
	}
	rec := m.StartRequest()
	if r.Method == http.MethodOptions {
		rec.Skip()
	}
	return metrics.WithRequest(ctx, rec), func() { rec.End(accesslog.From(ctx).Codes()...) }
}

// observeOperation gives the request's metrics the operation's type and
// name and the codes of the response's errors.
func observeOperation(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	rec := metrics.RequestFrom(ctx)
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

// RefusalReason names why an upstream call that got no answer was never
// sent: the request's call cap, the client's rate budget, an open circuit,
// credentials the upstream had refused (earlier in the request, or recently:
// the authentication gate), or an operation
// that takes Bearer authentication only; "" when the call may have been
// sent. It is the metrics' classifier (metrics.Options.Refusal).
func RefusalReason(err error) string {
	var (
		limit  *calls.LimitError
		creds  *calls.CredentialsRefusedError
		known  *restclient.RefusedCredentialsError
		budErr *budget.Error
		bearer *gqlerr.BearerRequired
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &limit):
		return "call_cap"
	case errors.As(err, &budErr):
		return "rate_budget"
	case restclient.IsCircuitOpen(err):
		return "circuit_open"
	case errors.As(err, &creds), errors.As(err, &known):
		return "credentials_refused"
	case errors.As(err, &bearer):
		return "bearer_only"
	}
	return ""
}
