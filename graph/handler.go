package graph

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
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
	"github.com/workspacenet/facade/graph/guard"
	"github.com/workspacenet/facade/graph/limits"
	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/graph/trusted"
	"github.com/workspacenet/facade/restclient"
)

// Options configure the GraphQL endpoint. The zero value of every hardening
// option is the safe default.
type Options struct {
	// Client reaches the REST API. Required; build it with
	// restclient.WithObserver(ObserveUpstream) so each request's upstream
	// calls are counted and reported.
	Client *restclient.Client
	// Loaders tunes the per-request loaders.
	Loaders loaders.Config
	// NewLoaders, when set, returns each request's Source in place of the
	// batching loaders (the benchmark's naive baseline, naive.New of
	// graph/loaders/naive); Loaders is then unused.
	NewLoaders func(*restclient.Client) loaders.Source
	// Logger receives one line per request, resolver errors and panics;
	// nil discards.
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

	// Limits bound each operation before it runs (zero fields: defaults).
	Limits limits.Config
	// MaxUpstreamCalls caps the upstream calls of one request: beyond it the
	// fields that need more are null with REQUEST_LIMIT_EXCEEDED. 0 means
	// DefaultMaxUpstreamCalls, negative no cap.
	MaxUpstreamCalls int
	// MaxBodyBytes bounds a request body (0: guard.DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// DisableCSRFPrevention accepts GET and non-JSON POST requests without a
	// preflight-forcing header (only behind something else that stops CSRF).
	DisableCSRFPrevention bool
	// DisableSuggestions removes "Did you mean ...?" from validation errors.
	DisableSuggestions bool
	// APQCacheSize is the number of Automatic Persisted Queries remembered
	// (0: 1000; negative: APQ off). Ignored with TrustedDocuments.
	APQCacheSize int
	// TrustedDocuments, when non-empty, are the only operations executed.
	TrustedDocuments trusted.Documents
	// FieldMiddleware, when set, wraps every field resolver (instrumentation
	// and tests).
	FieldMiddleware graphql.FieldMiddleware
}

// DefaultMaxUpstreamCalls is the default cap of upstream calls per request.
const DefaultMaxUpstreamCalls = 200

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
	o.Logger = slog.New(requestIDHandler{o.Logger.Handler()})
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 30 * time.Second
	}
	switch {
	case o.MaxUpstreamCalls == 0:
		o.MaxUpstreamCalls = DefaultMaxUpstreamCalls
	case o.MaxUpstreamCalls < 0:
		o.MaxUpstreamCalls = 0
	}
	lim := o.Limits.WithDefaults()

	srv := handler.New(generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{client: o.Client}}))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.SetParserTokenLimit(lim.MaxTokens)
	srv.SetDisableSuggestion(o.DisableSuggestions)
	if o.Introspection {
		srv.Use(extension.Introspection{})
	}
	if len(o.TrustedDocuments) > 0 {
		srv.Use(trusted.Extension{Docs: o.TrustedDocuments})
	} else if o.APQCacheSize >= 0 {
		size := o.APQCacheSize
		if size == 0 {
			size = 1000
		}
		srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](size)})
	}
	srv.Use(limits.New(lim))
	present := gqlerr.Presenter(o.Logger)
	srv.SetErrorPresenter(func(ctx context.Context, err error) *gqlerror.Error {
		return limits.TokenLimit(present(ctx, err), lim.MaxTokens)
	})
	srv.SetRecoverFunc(gqlerr.Recover(o.Logger))
	srv.AroundRootFields(requireCredentials)
	if o.FieldMiddleware != nil {
		srv.AroundFields(o.FieldMiddleware)
	}
	srv.AroundResponses(upstreamReport)

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sc := &scope{requestID: guard.RequestID(r)}
		w.Header().Set(guard.RequestIDHeader, sc.requestID)
		sw := &statusWriter{ResponseWriter: w}
		defer func() { logRequest(r.Context(), o.Logger, r, sw.status(), sc, time.Since(start)) }()

		ctx := r.Context()
		if !o.DisableCSRFPrevention {
			if ref := guard.CSRF(r, gqlerr.CSRFPrevented); ref != nil {
				sc.refuse(sw, ref)
				return
			}
		}
		if r.Method == http.MethodPost {
			body, ref := guard.ReadBody(sw, r, o.MaxBodyBytes, gqlerr.RequestTooLarge, gqlerr.BadRequest)
			var documentID string
			if ref == nil && isJSON(r) {
				documentID, ref = guard.CheckJSONBody(body, gqlerr.BadRequest)
			}
			if ref != nil {
				sc.refuse(sw, ref)
				return
			}
			if documentID != "" && len(o.TrustedDocuments) > 0 {
				ctx = trusted.WithDocumentID(ctx, documentID)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		} else if id := r.URL.Query().Get("documentId"); id != "" && len(o.TrustedDocuments) > 0 {
			ctx = trusted.WithDocumentID(ctx, id)
		}

		ctx, cancel := context.WithTimeout(ctx, o.RequestTimeout)
		defer cancel()
		sc.trace = o.UpstreamTrace && r.Header.Get(TraceHeader) == "1"
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
		sc.calls = &calls.Collector{Max: o.MaxUpstreamCalls}
		ctx = context.WithValue(ctx, scopeKey{}, sc)
		ctx = calls.WithCollector(ctx, sc.calls)
		ctx = loaders.WithLoaders(ctx, o.newLoaders())
		srv.ServeHTTP(sw, r.WithContext(ctx))
	})
}

func isJSON(r *http.Request) bool {
	ct := strings.ToLower(r.Header.Get("Content-Type"))
	return strings.HasPrefix(strings.TrimSpace(ct), "application/json")
}

// scope is what the facade knows about the GraphQL request being served.
type scope struct {
	requestID      string
	hasCredentials bool
	trace          bool
	calls          *calls.Collector
	// Filled as the response is built, for the request log line.
	operation string
	codes     []string
	stats     *limits.Stats
}

func (sc *scope) refuse(w http.ResponseWriter, ref *guard.Refusal) {
	sc.codes = append(sc.codes, ref.Code)
	ref.Write(w)
}

type scopeKey struct{}

func scopeFrom(ctx context.Context) *scope {
	if s, ok := ctx.Value(scopeKey{}).(*scope); ok {
		return s
	}
	return &scope{}
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

// upstreamReport adds extensions.upstream when the request asked for it, and
// notes the operation name and error codes for the request log.
func upstreamReport(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	sc := scopeFrom(ctx)
	if graphql.HasOperationContext(ctx) {
		oc := graphql.GetOperationContext(ctx)
		sc.operation = oc.OperationName
		if sc.operation == "" && oc.Operation != nil {
			sc.operation = oc.Operation.Name
		}
		sc.stats = limits.StatsFrom(ctx)
	}
	if resp == nil {
		return nil
	}
	for _, e := range resp.Errors {
		if c, ok := e.Extensions["code"].(string); ok {
			sc.codes = append(sc.codes, c)
		}
	}
	if sc.trace && sc.calls != nil {
		if resp.Extensions == nil {
			resp.Extensions = map[string]any{}
		}
		resp.Extensions["upstream"] = sc.calls.Report()
	}
	return resp
}

// logRequest writes the one line of a request. It names no header value:
// credentials, tokens and cookies never reach the log.
func logRequest(ctx context.Context, log *slog.Logger, r *http.Request, status int, sc *scope, d time.Duration) {
	codes := slices.Clone(sc.codes)
	slices.Sort(codes)
	codes = slices.Compact(codes)
	attrs := []slog.Attr{
		slog.String("request_id", sc.requestID),
		slog.String("method", r.Method),
		slog.Int("status", status),
		slog.String("operation", sc.operation),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
		slog.Int("upstream_calls", sc.callCount()),
	}
	if len(codes) > 0 {
		attrs = append(attrs, slog.Any("error_codes", codes))
	}
	if s := sc.stats; s != nil {
		attrs = append(attrs, slog.Int("cost", s.Cost), slog.Int("depth", s.Depth))
	}
	log.LogAttrs(ctx, slog.LevelInfo, "graphql request", attrs...)
}

func (sc *scope) callCount() int {
	if sc.calls == nil {
		return 0
	}
	return sc.calls.Count()
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// requestIDHandler adds the request id of ctx to every record logged with it
// (resolver errors and panics name the request they belong to).
type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, rec slog.Record) error {
	if sc, ok := ctx.Value(scopeKey{}).(*scope); ok && rec.Message != "graphql request" {
		rec.AddAttrs(slog.String("request_id", sc.requestID))
	}
	return h.Handler.Handle(ctx, rec)
}

func (h requestIDHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(as)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
