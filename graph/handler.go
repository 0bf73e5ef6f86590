package graph

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/admission"
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/generated"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/guard"
	"github.com/workspacenet/facade/graph/incremental"
	"github.com/workspacenet/facade/graph/limits"
	"github.com/workspacenet/facade/graph/livequery"
	"github.com/workspacenet/facade/graph/livetransport"
	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/graph/overhttp"
	"github.com/workspacenet/facade/graph/paging"
	"github.com/workspacenet/facade/graph/trusted"
	"github.com/workspacenet/facade/internal/base/accesslog"
	"github.com/workspacenet/facade/internal/base/sizedlru"
	"github.com/workspacenet/facade/internal/policy/apq"
	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/policy/calls"
	"github.com/workspacenet/facade/internal/policy/live"
	"github.com/workspacenet/facade/internal/policy/metrics"
	"github.com/workspacenet/facade/restclient"
)

// Options configure the GraphQL endpoint. One convention throughout: 0 (or
// false, nil) turns a limit or feature off. Start from DefaultOptions, which
// the program's flags take their defaults from.
type Options struct {
	// Client reaches the REST API. Required. Each request's calls go through
	// the call hooks the handler installs (cap, report).
	Client *restclient.Client
	// Loaders tunes the per-request batching loaders.
	Loaders loaders.Config
	// NewLoaders, when set, returns each request's Source in place of the
	// batching loaders (the benchmark's naive baseline, naive.New of
	// graph/loaders/naive); Loaders is then unused.
	NewLoaders func(*restclient.Client) loaders.Source
	// Logger receives resolver errors and panics (with the request id of
	// the access log, internal/base/accesslog); nil discards.
	Logger *slog.Logger
	// Introspection enables __schema and __type queries.
	Introspection bool
	// UpstreamTrace lets a request ask, with "X-Upstream-Trace: 1", for the
	// upstream call report in extensions.upstream.
	UpstreamTrace bool
	// Budget paces every upstream request per upstream client (the real API
	// allows 10 per second per client); nil: no pacing.
	Budget *budget.Budget
	// ServerCredentials, when set, are used for requests that carry no
	// Authorization header (server-to-server use).
	ServerCredentials *restclient.Credentials
	// CursorSecret keys the connections' cursors (graph/paging: AES-256-GCM
	// under an HKDF-derived key), so clients can neither read nor forge
	// them. Replicas must share it, or one replica's cursors are refused by
	// another (stack sets it from FACADE_SECRET). Empty: a random
	// secret for this handler.
	CursorSecret []byte
	// RequestTimeout bounds each GraphQL request; every upstream call made for
	// it inherits the deadline. 0: no deadline.
	RequestTimeout time.Duration

	// Limits bound each operation before it runs.
	Limits limits.Config
	// MaxUpstreamCalls caps the upstream calls of one request: beyond it the
	// fields that need more are null with REQUEST_LIMIT_EXCEEDED. 0: no cap.
	MaxUpstreamCalls int
	// MaxBodyBytes bounds a request body. 0: no limit.
	MaxBodyBytes int64
	// MaxCostInFlight bounds the summed cost (graph/limits) of the
	// operations executing at once; beyond it an operation waits up to
	// AdmissionWait for room, then is refused with OVERLOADED, HTTP 503
	// (graph/admission). 0: no bound.
	MaxCostInFlight int
	// AdmissionWait is how long an operation waits for room under
	// MaxCostInFlight; 0 refuses at once.
	AdmissionWait time.Duration
	// ClientCostShare is the cost units of MaxCostInFlight one upstream
	// client may hold whatever the others do; beyond them it takes more only
	// while ClientCostShare units stay free for the other clients
	// (graph/admission). 0: no share.
	ClientCostShare int
	// ResponseWriteTimeout bounds the time a response may take to be sent
	// once the operation has executed (a write deadline from the moment
	// the response is ready): a client that reads it slower, or not at all,
	// is cut off. 0: only the server's own write timeout.
	ResponseWriteTimeout time.Duration
	// MaxResponseBytes bounds the data of a response: a larger one is
	// answered with RESPONSE_TOO_LARGE alone. 0: no limit.
	MaxResponseBytes int
	// DisableCSRFPrevention accepts requests a browser could send cross-site
	// without a CORS preflight (graph/guard.CSRF): only behind something else
	// that stops CSRF.
	DisableCSRFPrevention bool
	// DisableSuggestions removes "Did you mean ...?" from validation errors.
	DisableSuggestions bool
	// MaxQueryBytes bounds the query text of a request (comments included),
	// a registered persisted query's too: a longer one is refused before it
	// is parsed, 413 QUERY_TOO_LARGE. 0: no limit.
	MaxQueryBytes int
	// QueryCacheBytes bounds gqlgen's cache of parsed and validated
	// documents, each counted as limits.DocumentBytes. 0: no cache.
	QueryCacheBytes int64
	// APQCacheSize is the number of Automatic Persisted Queries remembered
	// in this process, APQCacheBytes their bytes. 0 (either): APQ off.
	// Ignored with TrustedDocuments. A query is kept only once its document
	// has parsed and validated.
	APQCacheSize  int
	APQCacheBytes int64
	// APQCache, when set, stores them instead of an in-process store of
	// APQCacheSize and APQCacheBytes (internal/policy/apq: shared by replicas
	// through Redis, for credentials the upstream accepted).
	APQCache APQStore
	// TrustedDocuments, when non-empty, are the only operations executed.
	TrustedDocuments trusted.Documents
	// Extensions are added to the GraphQL server after the facade's own
	// (instrumentation, and tests that need a field interceptor).
	Extensions []graphql.HandlerExtension
	// Live feeds the subscriptions (internal/policy/live); nil: subscriptions are
	// refused and /graphql serves neither WebSocket nor SSE.
	Live *live.Hub
	// LiveMaxConnections bounds the WebSocket and SSE connections open at
	// once (their credentials proven), and, apart, those still opening;
	// LiveMaxConnectionsPerCredential the open ones of one upstream client;
	// LiveMaxInitPerAddress the opening ones of one remote address
	// (guard.ClientAddress); LiveMaxPerConnection the subscriptions of one
	// WebSocket (graph/livetransport). 0: no bound.
	LiveMaxConnections              int
	LiveMaxConnectionsPerCredential int
	LiveMaxInitPerAddress           int
	LiveMaxPerConnection            int
	// LiveIdleTimeout closes a WebSocket that has had no subscription or
	// query running for that long (1000, with the reason). 0: never.
	LiveIdleTimeout time.Duration
	// TrustedProxies are the peers whose X-Forwarded-For names the remote
	// address of a live connection (guard.ClientAddress); none: the peer.
	TrustedProxies []netip.Prefix
	// LiveRestart, when set, ends the live connections when it is closed
	// (before Live is): see livetransport.Restart.
	LiveRestart *livetransport.Restart
	// LiveKeepAlive is the interval of the WebSocket's keep-alive messages
	// (graphql-ws "ka", graphql-transport-ws ping) and of SSE comments. 0:
	// none.
	LiveKeepAlive time.Duration
	// LiveQueryMaxBytes bounds what one live query keeps between its runs
	// (graph/livequery: its last result, and the bodies its last run read);
	// 0: livequery.DefaultMaxBytes.
	LiveQueryMaxBytes int
	// LiveReferenceInterval is the polling interval of the reference
	// objects a live query reads (resources, events, products): their
	// cache TTL. 0: livequery.DefaultReferenceInterval.
	LiveReferenceInterval time.Duration
	// LiveInitTimeout bounds a WebSocket's wait for connection_init: past
	// it the connection is closed (gqlgen's transport: 1002, "connection
	// initialisation timeout"). It must be positive.
	LiveInitTimeout time.Duration
	// CheckOrigin reports whether a page of origin may open a WebSocket
	// (besides the server's own origin, always allowed; stack gives it the
	// CORS allowlist). nil: the server's own origin only.
	CheckOrigin func(origin string) bool
	// Federation (docs/federation.md). RouterSecret, when set, is the
	// shared secret of the supergraph's router: `_service` and `_entities`
	// are answered only to requests whose RouterSecretHeader carries it.
	// RequireRouterSecret (production) answers them only to such requests
	// even when RouterSecret is empty, that is to none.
	RouterSecretHeader  string
	RouterSecret        string
	RequireRouterSecret bool
	// FederationServerCredentials lets `_entities` use ServerCredentials
	// when the request carries no credentials of its own; otherwise such an
	// `_entities` is UNAUTHENTICATED, unsent (a router that forwards no
	// caller credentials would lend the server's to every client).
	FederationServerCredentials bool
	// Metrics, when set, records requests, upstream calls, loader batches
	// and admission (internal/policy/metrics, graph/metrics.go); nil: none.
	Metrics *metrics.Facade
}

// Defaults of DefaultOptions.
const (
	DefaultRequestTimeout   = 30 * time.Second
	DefaultMaxUpstreamCalls = 200
	DefaultMaxBodyBytes     = 2 << 20
	DefaultAPQCacheSize     = apq.DefaultEntries
	DefaultAPQCacheBytes    = apq.DefaultBytes
	DefaultMaxQueryBytes    = apq.DefaultMaxQueryBytes
	DefaultQueryCacheBytes  = 8 << 20
	DefaultMaxCostInFlight  = admission.DefaultMaxCostInFlight
	DefaultAdmissionWait    = admission.DefaultWait
	DefaultClientCostShare  = admission.DefaultClientShare
	DefaultMaxResponseBytes = 8 << 20
	// DefaultResponseWriteTimeout lets a client take a response at the
	// -max-response-bytes limit at about 7 Mbit/s.
	DefaultResponseWriteTimeout = 10 * time.Second
	// DefaultRouterSecretHeader carries the router's shared secret.
	DefaultRouterSecretHeader = "Router-Secret"
)

// DefaultOptions returns the safe defaults: every limit on, introspection on,
// the upstream call report off. Client must still be set.
func DefaultOptions() Options {
	return Options{
		Introspection:    true,
		Loaders:          loaders.DefaultConfig(),
		RequestTimeout:   DefaultRequestTimeout,
		Limits:           limits.DefaultConfig(),
		MaxUpstreamCalls: DefaultMaxUpstreamCalls,
		MaxBodyBytes:     DefaultMaxBodyBytes,
		APQCacheSize:     DefaultAPQCacheSize,
		APQCacheBytes:    DefaultAPQCacheBytes,
		MaxQueryBytes:    DefaultMaxQueryBytes,
		QueryCacheBytes:  DefaultQueryCacheBytes,
		MaxCostInFlight:  DefaultMaxCostInFlight,
		AdmissionWait:    DefaultAdmissionWait,
		ClientCostShare:  DefaultClientCostShare,
		MaxResponseBytes: DefaultMaxResponseBytes,

		RouterSecretHeader: DefaultRouterSecretHeader,

		ResponseWriteTimeout: DefaultResponseWriteTimeout,

		LiveMaxConnections:              livetransport.DefaultLiveMaxConnections,
		LiveMaxConnectionsPerCredential: livetransport.DefaultLiveMaxConnectionsPerCredential,
		LiveMaxInitPerAddress:           livetransport.DefaultLiveMaxInitPerAddress,
		LiveMaxPerConnection:            livetransport.DefaultLiveMaxPerConnection,
		LiveIdleTimeout:                 livetransport.DefaultLiveIdleTimeout,
		LiveKeepAlive:                   livetransport.DefaultLiveKeepAlive,
		LiveInitTimeout:                 livetransport.DefaultLiveInitTimeout,
		LiveQueryMaxBytes:               livequery.DefaultMaxBytes,
	}
}

// TraceHeader is the request header that asks for the upstream call report.
const TraceHeader = guard.TraceHeader

// NewHandler returns the http.Handler serving GraphQL over HTTP (POST, and
// GET for queries only; statuses and media types in graph/overhttp).
// Before GraphQL it refuses, in this order: a method other than GET, POST
// (405; OPTIONS is answered 204), an Accept it cannot answer (406), a
// request CSRF prevention stops (400), credential headers that cannot be
// right (400), a POST that is not JSON (415) or too large (413), a request
// that is not well-formed (400). Mount it behind internal/base/accesslog's
// middleware, which gives each request its id and log line.
func NewHandler(o Options) http.Handler {
	e := newEndpoint(o)
	e.addTransports()
	e.useDocuments()
	e.useAdmission()
	e.useErrors()
	e.useFieldGates()
	e.useResponses()
	return e
}

// endpoint is the GraphQL endpoint NewHandler returns: gqlgen's server for
// the schema, with the facade's transports, extensions and middlewares,
// added in named steps in the order gqlgen runs them.
type endpoint struct {
	o         Options
	resolvers *Resolver
	schema    graphql.ExecutableSchema
	srv       *handler.Server
	docs      graphql.Cache[*ast.QueryDocument]
	// paceHooks pace every request's upstream calls with o.Budget (the
	// same hooks for every request; unset without a budget).
	paceHooks restclient.CallHooks
	live      *livetransport.Transports // nil: live data off
	admit     *admission.Controller     // nil: admission off
	present   graphql.ErrorPresenterFunc
	recover   graphql.RecoverFunc
}

func newEndpoint(o Options) *endpoint {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Logger = slog.New(accesslog.Handler(o.Logger.Handler()))
	e := &endpoint{o: o}
	e.resolvers = &Resolver{client: o.Client, log: o.Logger, cursors: paging.NewCodec(o.CursorSecret), live: o.Live}
	e.schema = generated.NewExecutableSchema(generated.Config{Resolvers: e.resolvers})
	e.srv = handler.New(e.schema)
	if o.Budget != nil {
		e.paceHooks = o.Budget.Hooks(requestTurn, nil)
	}
	return e
}

// addTransports adds the live transports (with live data on), then the one
// transport of GraphQL over HTTP as its spec says (graph/overhttp), which
// takes every request the others leave.
func (e *endpoint) addTransports() {
	o := &e.o
	if o.Live != nil {
		e.live = livetransport.New(livetransport.Options{
			Endpoint: e, Client: o.Client, Logger: o.Logger, ServerCredentials: o.ServerCredentials, Restart: o.LiveRestart,
			UpstreamTrace: o.UpstreamTrace, DisableCSRFPrevention: o.DisableCSRFPrevention, MaxBodyBytes: o.MaxBodyBytes,
			RequestTimeout: o.RequestTimeout, ResponseWriteTimeout: o.ResponseWriteTimeout,
			LiveMaxConnections: o.LiveMaxConnections, LiveMaxConnectionsPerCredential: o.LiveMaxConnectionsPerCredential,
			LiveMaxInitPerAddress: o.LiveMaxInitPerAddress, LiveMaxPerConnection: o.LiveMaxPerConnection,
			LiveIdleTimeout: o.LiveIdleTimeout, LiveKeepAlive: o.LiveKeepAlive, LiveInitTimeout: o.LiveInitTimeout,
			TrustedProxies: o.TrustedProxies, CheckOrigin: o.CheckOrigin,
		})
		// First of the parameter mutators: what a WebSocket's reader refused.
		e.live.Register(e.srv, len(o.TrustedDocuments) > 0)
	}
	e.srv.AddTransport(overhttp.Transport{WriteTimeout: o.ResponseWriteTimeout})
}

// useDocuments bounds parsing and the cache of parsed documents, and adds
// introspection, the trusted documents or the persisted queries, and the
// limits, in that order.
func (e *endpoint) useDocuments() {
	o, srv := &e.o, e.srv
	e.docs = graphql.NoCache[*ast.QueryDocument]{}
	if o.QueryCacheBytes > 0 {
		e.docs = sizedlru.New(o.QueryCacheBytes, 0, limits.DocumentBytes)
	}
	srv.SetQueryCache(e.docs)
	srv.SetParserTokenLimit(o.Limits.MaxTokens)
	srv.SetDisableSuggestion(o.DisableSuggestions)
	if o.Introspection {
		srv.Use(extension.Introspection{})
	}
	if len(o.TrustedDocuments) > 0 {
		srv.Use(trusted.Extension{Docs: o.TrustedDocuments})
		o.APQCache = nil
	} else if o.APQCacheSize > 0 && o.APQCacheBytes > 0 {
		if o.APQCache == nil {
			o.APQCache = newAPQStore(*o)
		}
		srv.Use(extension.AutomaticPersistedQuery{Cache: apqDeferred{o.APQCache}})
	} else {
		o.APQCache = nil
	}
	srv.Use(limits.New(o.Limits).UseQueryCache(e.docs))
	if o.APQCache != nil { // after the limits: stores what passed them
		srv.Use(apqCommit{o.APQCache})
	}
}

// useAdmission admits the cost the limits measured (after them), and has
// the metrics observe admission and the loaders' batches.
func (e *endpoint) useAdmission() {
	o := &e.o
	e.admit = admission.New(admission.Config{MaxCostInFlight: o.MaxCostInFlight, ClientShare: o.ClientCostShare, Wait: o.AdmissionWait})
	e.resolvers.admit = e.admit
	if e.admit != nil {
		e.srv.Use(e.admit.Extension())
		o.Metrics.SetAdmission(e.admit)
	}
	if o.Metrics != nil && o.Loaders.ObserveBatch == nil {
		o.Loaders.ObserveBatch = o.Metrics.LoaderBatch
	}
}

// useErrors presents every error with its code (graph/gqlerr) and recovers
// a resolver's panic as an INTERNAL error on its field.
func (e *endpoint) useErrors() {
	o := &e.o
	present := gqlerr.Presenter(o.Logger)
	e.present = func(ctx context.Context, err error) *gqlerror.Error {
		pe := limits.TokenLimit(present(ctx, err), o.Limits.MaxTokens)
		if o.DisableSuggestions {
			pe = gqlerr.WithoutSuggestions(pe)
		}
		return pe
	}
	e.recover = gqlerr.Recover(o.Logger)
	e.srv.SetErrorPresenter(e.present)
	e.srv.SetRecoverFunc(e.recover)
}

// useFieldGates gates the root fields (introspection, Federation's, the
// credentials), then adds incremental delivery and Options.Extensions.
func (e *endpoint) useFieldGates() {
	o, srv := &e.o, e.srv
	if !o.Introspection {
		srv.AroundRootFields(refuseIntrospection)
		srv.Use(routerService{}) // `_service` for the router (gqlgen's needs introspection on)
	}
	srv.AroundRootFields(o.federationGate)
	srv.AroundRootFields(requireCredentials)
	srv.Use(incremental.Extension{Host: deliveryHost{}, Schema: e.schema, MaxBytes: o.MaxResponseBytes, Present: e.present, Recover: e.recover})
	for _, x := range o.Extensions {
		srv.Use(x)
	}
}

// useResponses adds the response middlewares, outermost first, and the
// operations' over live transports.
func (e *endpoint) useResponses() {
	o, srv := &e.o, e.srv
	// Outermost: each event of a subscription is a request of its own.
	srv.AroundResponses(o.eventRequest(e.admit))
	if o.Metrics != nil {
		srv.AroundResponses(observeOperation) // outermost: sees the final response
	}
	srv.AroundResponses(upstreamReport)
	if o.MaxResponseBytes > 0 {
		// Registered after upstreamReport, so inside it: the access log sees
		// RESPONSE_TOO_LARGE.
		srv.AroundResponses(capResponse(o.MaxResponseBytes))
	}
	if e.live != nil {
		srv.AroundOperations(livetransport.Operations)
		srv.AroundOperations(subscriptionSlots)
		srv.AroundOperations(liveQueries(o.liveQueryEngine()))
	}
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, done := observe(r.Context(), e.o.Metrics, r)
	defer done()
	if e.live != nil && livetransport.IsUpgrade(r) {
		e.live.ServeUpgrade(w, r.WithContext(ctx), e.srv)
		return
	}
	if r.Method == http.MethodOptions {
		w.Header().Set("Allow", guard.Allowed)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	// Every refusal is written in the media type the client accepts.
	mt, acceptable := overhttp.Negotiate(r.Header)
	stream := e.live != nil && livetransport.IsEventStream(r)
	params, ref := e.admitRequest(w, r, acceptable, stream)
	if ref != nil {
		refuse(w, accesslog.From(ctx), mt, ref)
		return
	}
	e.serve(ctx, w, r, params, mt, stream)
}

// admitRequest returns the GraphQL parameters of r, or the refusal of a
// request refused before GraphQL (NewHandler lists them in order;
// acceptable: r accepts a media type of overhttp.Negotiate's). A
// request for text/event-stream (stream: graphql-sse, or incremental
// delivery over SSE) by GET is checked against CSRF once parsed, unless it
// is a subscription (the live transport's SSE).
func (e *endpoint) admitRequest(w http.ResponseWriter, r *http.Request, acceptable, stream bool) (*guard.Params, *guard.Refusal) {
	if ref := guard.Method(r); ref != nil {
		return nil, ref
	}
	if !acceptable && overhttp.AcceptsIncremental(r.Header).Format == overhttp.NotIncremental {
		return nil, overhttp.NotAcceptable()
	}
	if !e.o.DisableCSRFPrevention && !(stream && r.Method == http.MethodGet) {
		if ref := guard.CSRF(r); ref != nil {
			return nil, ref
		}
	}
	if ref := guard.CredentialHeaders(r); ref != nil {
		return nil, ref
	}
	params, ref := decode(w, r, e.o.MaxBodyBytes)
	if ref == nil {
		ref = e.o.checkQuery(params)
	}
	return params, ref
}

// serve executes the request r of params, under ctx (mt: the media type
// of its response; stream: it asks for text/event-stream), as a request of
// the facade's (newRequest), holding its admission units while it executes.
func (e *endpoint) serve(ctx context.Context, w http.ResponseWriter, r *http.Request, params *guard.Params, mt string, stream bool) {
	o := &e.o
	if params.DocumentID != "" && len(o.TrustedDocuments) > 0 {
		ctx = trusted.WithDocumentID(ctx, params.DocumentID)
	}
	ctx = overhttp.WithRequest(ctx, params, mt)
	if stream {
		ctx = livetransport.WithEventStream(ctx, params)
	}
	if o.RequestTimeout > 0 && !stream { // a stream's: once routed
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.RequestTimeout)
		defer cancel()
	}
	trace := o.UpstreamTrace && r.Header.Get(TraceHeader) == "1"
	var req *request
	ctx, req = o.newRequest(ctx, guard.Credentials(r.Header), trace, noCache(r), e.paceHooks)
	req.router = o.fromRouter(r.Header)
	if e.admit != nil {
		// Holds the cost units while the operation executes, as the
		// upstream client of its credentials; 503 on refusal.
		var slot *admission.Slot
		ctx, slot = e.admit.Begin(ctx, w, restclient.IdentityFromContext(ctx))
		defer slot.End()
		w = slot.Writer()
	}
	e.srv.ServeHTTP(w, r.WithContext(ctx))
	if o.APQCache != nil {
		shareAPQ(ctx, o.APQCache, o.Client, req)
	}
	accesslog.From(ctx).SetUpstreamCalls(req.calls.Count(), req.calls.CacheHits(), req.calls.Waited())
}

// The endpoint as the live transports see it (livetransport.Endpoint).

func (e *endpoint) NewRequest(ctx context.Context, creds *restclient.Credentials, trace bool) context.Context {
	ctx, _ = e.o.newRequest(ctx, creds, trace, false, e.paceHooks)
	return ctx
}

func (e *endpoint) HasCredentials(ctx context.Context) bool { return requestFrom(ctx).hasCredentials }

func (e *endpoint) CheckQuery(p *guard.Params) *guard.Refusal { return e.o.checkQuery(p) }

func (e *endpoint) NewOperation(ctx context.Context) {
	if r := requestFrom(ctx); r.Context != nil {
		r.apqHash, r.apqQuery, r.apqValid = "", "", false
	}
}

// checkQuery refuses a request whose query text is longer than
// MaxQueryBytes, before it is parsed or stored: 413 QUERY_TOO_LARGE (over
// a WebSocket: the operation's error). Every transport calls it.
func (o *Options) checkQuery(p *guard.Params) *guard.Refusal {
	if o.MaxQueryBytes > 0 && len(p.Query) > o.MaxQueryBytes {
		return guard.QueryTooLarge(len(p.Query), o.MaxQueryBytes)
	}
	return nil
}

// newRequest returns ctx carrying a new request (its loaders, its call
// collector) and the settings of its upstream calls: creds (nil: the
// server's credentials, if any), the cache's bypass, the call hooks
// (outermost first) and read-only results (resolvers never modify upstream
// objects: identical GETs in flight for one caller's credentials are decoded
// once for all requests), in one context value.
func (o *Options) newRequest(ctx context.Context, creds *restclient.Credentials, trace, noCacheReads bool, paceHooks restclient.CallHooks) (context.Context, *request) {
	req := &request{trace: trace, arrival: o.Budget.Arrive()}
	req.collector = calls.Collector{Max: o.MaxUpstreamCalls, Keep: trace, Part: callPart}
	req.calls = &req.collector
	if trace {
		req.calls.Start = time.Now()
	}
	if creds == nil && o.ServerCredentials != nil {
		creds = o.ServerCredentials
		req.serverCredentials = true
	}
	req.hasCredentials = creds != nil
	req.loaders = o.requestLoaders(&req.batching)
	req.Context, ctx = ctx, req
	scope := restclient.Scope{ReadOnlyResults: true, NoCacheReads: noCacheReads, Credentials: creds}
	hooks := make([]restclient.CallHooks, 0, 4)
	if o.Metrics != nil { // outermost: sees the calls inner hooks refuse
		hooks = append(hooks, o.Metrics.CallHooks())
	}
	if req.hasCredentials && !isBearer(creds.Authorization) {
		hooks = append(hooks, restclient.CallHooks{Before: refuseBearerOnly})
	}
	hooks = append(hooks, requestCalls)
	if o.Budget != nil {
		hooks = append(hooks, paceHooks)
	}
	scope.Hooks = hooks
	return restclient.WithScope(ctx, scope), req
}

// isBearer reports whether an Authorization value is of the Bearer scheme.
func isBearer(auth string) bool {
	scheme, _, _ := strings.Cut(strings.TrimSpace(auth), " ")
	return strings.EqualFold(scheme, "Bearer")
}

// refuseBearerOnly is the Before hook of requests whose credentials are not
// Bearer: the operations the API accepts with Bearer only are refused unsent.
func refuseBearerOnly(_ context.Context, cs restclient.CallStart) error {
	if op, ok := restclient.LookupOperation(cs.Method, cs.Route); ok && op.BearerOnly {
		return &gqlerr.BearerRequired{Method: cs.Method, Route: cs.Route}
	}
	return nil
}

// noCache reports whether the request asks not to be answered from caches
// (Cache-Control: no-cache or no-store, or Pragma: no-cache).
func noCache(r *http.Request) bool {
	for _, v := range r.Header.Values("Cache-Control") {
		for d := range strings.SplitSeq(v, ",") {
			switch strings.ToLower(strings.TrimSpace(d)) {
			case "no-cache", "no-store":
				return true
			}
		}
	}
	return strings.EqualFold(strings.TrimSpace(r.Header.Get("Pragma")), "no-cache")
}

// decode returns the GraphQL parameters of r: a GET's query string, or a
// POST's JSON body (refused unless application/json, or larger than
// maxBody).
func decode(w http.ResponseWriter, r *http.Request, maxBody int64) (*guard.Params, *guard.Refusal) {
	if r.Method == http.MethodGet {
		return guard.DecodeQuery(r)
	}
	if ref := guard.ContentType(r); ref != nil {
		return nil, ref
	}
	body, ref := guard.ReadBody(w, r, maxBody)
	if ref != nil {
		return nil, ref
	}
	return guard.DecodeBody(body)
}

// refuse answers a request refused before GraphQL in media type mt.
func refuse(w http.ResponseWriter, entry *accesslog.Entry, mt string, ref *guard.Refusal) {
	ref.Answer(w, entry, overhttp.ContentType(mt))
}

// requestTurn is the place of a request's call among its client's waiting
// calls in the budget (o.Budget.Hooks): its requests are served in the order
// they arrived, then by the priority the call carries (callPriority, set
// where the call is made). A live query's re-run takes the polls' turn
// (livequery.IsRerun).
func requestTurn(ctx context.Context, cs restclient.CallStart) budget.Turn {
	return budget.Turn{Request: requestFrom(ctx).arrival, Priority: cs.Priority, Background: livequery.IsRerun(ctx)}
}

// deferredRank is added to the priority of a call made for a deferred part
// (@defer): after every call of the same request's initial payload.
const deferredRank = 1000

// callPriority ranks a call made with ctx among its request's calls in the
// client's rate budget (lower goes first; requests are served in arrival
// order): the depth of the field it loads for (the length of its path;
// 0 outside any field), so lists and objects whose children load more go
// before the leaf lookups of the same request; plus deferredRank for a call
// that serves a deferred part (@defer, or the later items of @stream). The
// loaders (loaders.Config.Priority) and the mutations put it on the call's
// context (restclient.WithPriority): it is the one place that ranks a
// request's calls.
func callPriority(ctx context.Context) int {
	n := 0
	for fc := graphql.GetFieldContext(ctx); fc != nil; fc = fc.Parent {
		n++
	}
	if n > 0 && inDeferredPart(ctx) {
		n += deferredRank
	}
	return n
}

// request is what the facade knows about the GraphQL request being served.
// It is also the context that carries it (the value of requestKey), over
// Context, in one allocation.
type request struct {
	context.Context
	hasCredentials bool
	trace          bool
	arrival        uint64           // the budget's number of this request (Budget.Arrive)
	calls          *calls.Collector // &collector, or nil outside a request
	collector      calls.Collector
	loaders        loaders.Source // the value of loaders.ContextKey
	batching       loaders.Loaders

	// serverCredentials: the request carries no credentials and is served
	// with Options.ServerCredentials. router: it carries the router's
	// shared secret (Federation).
	serverCredentials, router bool

	// The persisted query the request registers; apqValid once its
	// document passed validation and the limits.
	apqHash, apqQuery string
	apqValid          bool
	deferral          *incremental.Deferral // a query delivered in parts (@defer), else nil
	release           func()                // gives back the admission units of a subscription's event
}

type requestKey struct{}

func (r *request) Value(k any) any {
	switch k {
	case requestKey{}:
		return r
	case loaders.ContextKey:
		return r.loaders
	}
	return r.Context.Value(k)
}

func requestFrom(ctx context.Context) *request {
	if r, ok := ctx.Value(requestKey{}).(*request); ok {
		return r
	}
	return &request{}
}

// requestCalls are the call hooks that cap and record the calls of each
// request with its Collector (request.calls).
var requestCalls = calls.HooksFrom(func(ctx context.Context) *calls.Collector { return requestFrom(ctx).calls })

// requireCredentials answers every root field that could reach the upstream
// with UNAUTHENTICATED, and no upstream call, when the request carries no
// credentials. Introspection, __typename and Federation's `_service` work
// without them.
func requireCredentials(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	rc := graphql.GetRootFieldContext(ctx)
	if rc != nil && !strings.HasPrefix(rc.Field.Name, "__") && rc.Field.Name != serviceField && !requestFrom(ctx).hasCredentials {
		// The root field context has no field path yet: name the field so the
		// error sits on it, as every other field error does.
		graphql.AddError(ctx, &gqlerror.Error{Err: gqlerr.ErrNoCredentials, Path: ast.Path{ast.PathName(rc.Field.Alias)}})
		return graphql.Null
	}
	return next(ctx)
}

// refuseIntrospection answers __schema and __type with
// INTROSPECTION_DISABLED (a client error, not logged) when introspection is
// off; __typename still works.
func refuseIntrospection(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	if rc := graphql.GetRootFieldContext(ctx); rc != nil && (rc.Field.Name == "__schema" || rc.Field.Name == "__type") {
		graphql.AddError(ctx, &gqlerror.Error{
			Err:  &gqlerr.Coded{Code: errcode.IntrospectionDisabled, Message: "introspection is disabled on this server"},
			Path: ast.Path{ast.PathName(rc.Field.Alias)},
		})
		return graphql.Null
	}
	return next(ctx)
}

// upstreamReport adds extensions.upstream when the request asked for it, and
// gives the access log the operation name, cost and error codes.
func upstreamReport(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	entry := accesslog.From(ctx)
	if graphql.HasOperationContext(ctx) {
		oc := graphql.GetOperationContext(ctx)
		name := oc.OperationName
		if name == "" && oc.Operation != nil {
			name = oc.Operation.Name
		}
		entry.SetOperation(name)
		if s := limits.StatsFrom(ctx); s != nil {
			entry.SetCost(s.Cost, s.Depth)
		}
	}
	if resp == nil {
		return nil
	}
	for _, e := range resp.Errors {
		if c, ok := e.Extensions["code"].(string); ok {
			entry.AddCodes(c)
		}
	}
	// A deferred operation's report comes in its last part (incremental).
	if req := requestFrom(ctx); req.trace && req.calls != nil && req.deferral == nil {
		if resp.Extensions == nil {
			resp.Extensions = map[string]any{}
		}
		if slot, ok := ctx.Value(liveSlotKey{}).(*liveSlot); ok {
			resp.Extensions["upstream"] = eventReport(slot.pollOfTaken(), req.calls)
		} else {
			resp.Extensions["upstream"] = req.calls.Report()
		}
	}
	return resp
}

// capResponse answers RESPONSE_TOO_LARGE, data null, in place of a response
// whose data is larger than maxBytes. gqlgen's executor has the data
// marshalled in one buffer by then (its size is bounded by the cost limit and
// admission, not here); the cap keeps that buffer from being copied again by
// the transport's JSON encoding and sent.
// An operation delivered in parts is capped over all its parts, by its
// deferral (graph/incremental).
func capResponse(maxBytes int) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		resp := next(ctx)
		if resp == nil || len(resp.Data) <= maxBytes || requestFrom(ctx).deferral != nil {
			return resp
		}
		return &graphql.Response{Data: []byte("null"), Errors: gqlerror.List{gqlerr.ResponseTooLarge(len(resp.Data), maxBytes)}}
	}
}
