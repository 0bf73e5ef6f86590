package graph

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/calls"
	"github.com/workspacenet/facade/graph/generated"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/restclient"
)

// Options configure the GraphQL endpoint.
type Options struct {
	// Client reaches the REST API. Required; build it with
	// restclient.WithObserver(ObserveUpstream) so each request's upstream
	// calls are counted and reported.
	Client *restclient.Client
	// Loaders tunes the per-request loaders.
	Loaders loaders.Config
	// Logger receives resolver errors and panics; nil discards.
	Logger *slog.Logger
	// Introspection enables __schema and __type queries.
	Introspection bool
	// UpstreamTrace lets a request ask, with "X-Upstream-Trace: 1", for the
	// upstream call report in extensions.upstream.
	UpstreamTrace bool
	// ServerCredentials, when set, are used for requests that carry no
	// Authorization header (server-to-server use).
	ServerCredentials *restclient.Credentials
	// RequestTimeout bounds each GraphQL request; every upstream call made for
	// it inherits the deadline. 0 means 30s.
	RequestTimeout time.Duration
}

// ObserveUpstream is the restclient.Observer that records each upstream call
// in the report of the GraphQL request it was made for.
func ObserveUpstream(ctx context.Context, info restclient.CallInfo) { calls.Observe(ctx, info) }

// TraceHeader is the request header that asks for the upstream call report.
const TraceHeader = "X-Upstream-Trace"

// NewHandler returns the http.Handler serving GraphQL (POST, and GET for
// queries only).
func NewHandler(o Options) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 30 * time.Second
	}
	srv := handler.New(generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{client: o.Client}}))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	if o.Introspection {
		srv.Use(extension.Introspection{})
	}
	srv.SetErrorPresenter(gqlerr.Presenter(o.Logger))
	srv.SetRecoverFunc(gqlerr.Recover(o.Logger))
	srv.AroundRootFields(requireCredentials)
	srv.AroundResponses(upstreamReport)

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), o.RequestTimeout)
		defer cancel()
		sc := &scope{trace: o.UpstreamTrace && r.Header.Get(TraceHeader) == "1"}
		if auth := strings.TrimSpace(r.Header.Get("Authorization")); auth != "" {
			ctx = restclient.WithCredentials(ctx, restclient.Credentials{
				Authorization: auth,
				NetworkID:     strings.TrimSpace(r.Header.Get("service-network-id")),
			})
			sc.hasCredentials = true
		} else if o.ServerCredentials != nil {
			ctx = restclient.WithCredentials(ctx, *o.ServerCredentials)
			sc.hasCredentials = true
		}
		sc.calls = &calls.Collector{}
		ctx = context.WithValue(ctx, scopeKey{}, sc)
		ctx = calls.WithCollector(ctx, sc.calls)
		ctx = loaders.WithLoaders(ctx, loaders.New(o.Client, o.Loaders))
		srv.ServeHTTP(w, r.WithContext(ctx))
	})
}

// scope is what the facade knows about the GraphQL request being served.
type scope struct {
	hasCredentials bool
	trace          bool
	calls          *calls.Collector
}

type scopeKey struct{}

func scopeFrom(ctx context.Context) *scope {
	if s, ok := ctx.Value(scopeKey{}).(*scope); ok {
		return s
	}
	return &scope{}
}

// CallCount returns the number of upstream calls made so far for the GraphQL
// request of ctx (for logs).
func CallCount(ctx context.Context) int {
	if c := scopeFrom(ctx).calls; c != nil {
		return c.Count()
	}
	return 0
}

// requireCredentials answers every root field that could reach the upstream
// with UNAUTHENTICATED, and no upstream call, when the request carries no
// credentials. Introspection and __typename work without them.
func requireCredentials(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	rc := graphql.GetRootFieldContext(ctx)
	if rc != nil && !strings.HasPrefix(rc.Field.Name, "__") && !scopeFrom(ctx).hasCredentials {
		// The root field context has no field path yet: name the field so the
		// error sits on it, as every other field error does.
		graphql.AddError(ctx, &gqlerror.Error{Err: gqlerr.ErrNoCredentials, Path: ast.Path{ast.PathName(rc.Field.Alias)}})
		return graphql.Null
	}
	return next(ctx)
}

// upstreamReport adds extensions.upstream when the request asked for it.
func upstreamReport(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	sc := scopeFrom(ctx)
	if resp != nil && sc.trace && sc.calls != nil {
		if resp.Extensions == nil {
			resp.Extensions = map[string]any{}
		}
		resp.Extensions["upstream"] = sc.calls.Report()
	}
	return resp
}
