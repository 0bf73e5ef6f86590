// Package stack starts the product the one way the program does: the local
// REST service when no upstream URL is configured, the upstream client, the
// GraphQL endpoint and every HTTP route with its middleware. The facade
// program, the end-to-end tests (testenv), the benchmark and the
// soak run all start through it, so what they test is what ships.
package stack

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/livetransport"
	"github.com/workspacenet/facade/graph/trusted"
	"github.com/workspacenet/facade/internal/base/tracing"
	"github.com/workspacenet/facade/internal/base/tracing/gqltrace"
	"github.com/workspacenet/facade/internal/policy/apq"
	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/policy/cache"
	"github.com/workspacenet/facade/internal/policy/live"
	"github.com/workspacenet/facade/internal/policy/metrics"
	"github.com/workspacenet/facade/internal/policy/redisx"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver"
	"github.com/workspacenet/facade/restserver/hooks"
)

// UpstreamConfig configures a local REST service.
type UpstreamConfig struct {
	DataDir    string // directory of its SQLite file; "" keeps the data in memory
	DemoScale  int    // demo data generated into an empty database (at least 1)
	Logger     *slog.Logger
	Hooks      *hooks.Hooks                    // latency, faults, counters; nil: a fresh set
	RateLimit  int                             // requests per second per client, as the real API; 0 = off
	Middleware func(http.Handler) http.Handler // wraps its handler; nil: none
	// Metrics records its requests (internal/policy/metrics); nil: none.
	Metrics *metrics.RESTServer
	// TestEndpoints serves GET/DELETE /_stats, POST /_stats/reset and POST
	// /_test/... (restserver.Config.TestEndpoints); off they answer 404.
	TestEndpoints bool
	// Addr is the listen address; "" = 127.0.0.1 at a free port.
	Addr string
	// TracerProvider traces the service (restserver.Config.TracerProvider);
	// nil: off.
	TracerProvider trace.TracerProvider
}

// Upstream is a local REST service served on a loopback listener.
type Upstream struct {
	URL      string
	Server   *restserver.Server
	Manifest *restserver.DemoManifest
	hs       *http.Server
}

// StartUpstream opens (or creates) the REST service's database, fills it
// with demo data when empty, and serves it on c.Addr (127.0.0.1 at a free
// port by default).
func StartUpstream(ctx context.Context, c UpstreamConfig) (*Upstream, error) {
	dbPath := ":memory:"
	if c.DataDir != "" {
		if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("data directory: %w", err)
		}
		dbPath = filepath.Join(c.DataDir, "restserver.db")
	}
	rs, err := restserver.New(ctx, restserver.Config{DBPath: dbPath, DemoScale: c.DemoScale, Logger: c.Logger, Hooks: c.Hooks,
		RateLimit: hooks.RateLimit{PerSecond: c.RateLimit}, TestEndpoints: c.TestEndpoints,
		TracerProvider: c.TracerProvider, Instrument: instrument(c.Metrics)})
	if err != nil {
		return nil, fmt.Errorf("local REST service: %w", err)
	}
	manifest, err := rs.Manifest()
	if err != nil {
		rs.Close()
		return nil, fmt.Errorf("local REST service demo data: %w", err)
	}
	addr := c.Addr
	if addr == "" {
		addr = DefaultDemoAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		rs.Close()
		return nil, fmt.Errorf("local REST service: %w", err)
	}
	h := rs.Handler()
	if c.Middleware != nil {
		h = c.Middleware(h)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return &Upstream{URL: "http://" + ln.Addr().String(), Server: rs, Manifest: manifest, hs: hs}, nil
}

// instrument is m's restserver.Config.Instrument, nil without metrics.
func instrument(m *metrics.RESTServer) func(http.Handler, func(*http.Request) string) http.Handler {
	if m == nil {
		return nil
	}
	return m.Instrument
}

// Close stops serving (giving requests in flight up to 5 s) and closes the
// database.
func (u *Upstream) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return errors.Join(u.hs.Shutdown(ctx), u.Server.Close())
}

// Stack is a running facade.
type Stack struct {
	// Handler serves every route of the facade (router.go).
	Handler http.Handler
	// UpstreamURL is the REST API the facade calls.
	UpstreamURL string
	// Embedded is the local REST service started in-process; nil with a
	// configured upstream URL.
	Embedded *Upstream
	// Client is the upstream client every request uses.
	Client *restclient.Client
	// Config is the configuration in force (Production applied).
	Config Config
	// Redis is the shared store, nil without RedisURL.
	Redis *redisx.Client
	// Metrics records the facade's metrics, nil without MetricsAddr; the
	// embedded REST service's (restserver_*) go to the same registry,
	// MetricsRegistry, served at MetricsURL (http://host:port/metrics, the
	// address actually listened on).
	// Live runs the pollers of the subscriptions; nil with LiveOff.
	Live            *live.Hub
	Metrics         *metrics.Facade
	MetricsRegistry *prometheus.Registry
	MetricsURL      string

	server        *http.Server
	restart       *livetransport.Restart // nil with LiveOff
	metricsServer *metrics.Server
	draining      atomic.Bool
}

// Start builds the facade of c, starting the local REST service first when c
// names no upstream. Close (or Shutdown) releases it.
func Start(ctx context.Context, c Config, logger *slog.Logger) (*Stack, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	logger, err := c.prepare(logger)
	if err != nil {
		return nil, err
	}
	st := &Stack{UpstreamURL: c.Upstream}
	if err := st.build(ctx, &c, logger); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// prepare applies to c what its switches imply (tracing, production) and
// loads its trusted documents; it returns the logger of the stack.
func (c *Config) prepare(logger *slog.Logger) (*slog.Logger, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if c.TracerProvider != nil {
		tracing.SetPropagator()
		logger = slog.New(tracing.LogHandler(logger.Handler())) // trace_id, span_id
		c.Graph.Extensions = append(slices.Clip(c.Graph.Extensions), gqltrace.Operation{})
		if c.UpstreamTracerProvider == nil {
			c.UpstreamTracerProvider = c.TracerProvider
		}
	}
	if c.Production {
		// Production wins over the individual switches.
		c.Graph.Introspection, c.Playground, c.UpstreamTrace, c.Graph.DisableSuggestions = false, false, "off", true
		c.Graph.RequireRouterSecret = true // _service and _entities for the router only
		c.DemoTestEndpoints = false
		logger.Info("production mode: introspection, field suggestions, the playground, the upstream call report and the demo's test endpoints are off")
	}
	if c.TrustedDocs != "" {
		docs, err := trusted.Load(c.TrustedDocs)
		if err != nil {
			return nil, fmt.Errorf("-trusted-documents: %w", err)
		}
		c.Graph.TrustedDocuments = docs
	}
	return logger, nil
}

// build starts the parts of the stack in order: metrics, the upstream
// (embedded without one), Redis, the client and its policies, live data,
// the HTTP server. On an error, what it started is left for Close.
func (st *Stack) build(ctx context.Context, c *Config, logger *slog.Logger) error {
	restMetrics, err := st.startMetrics(c, logger)
	if err != nil {
		return err
	}
	if err := st.startUpstream(ctx, c, logger, restMetrics); err != nil {
		return err
	}
	if err := st.openRedis(c, logger); err != nil {
		return err
	}
	// The one secret of this process, given or drawn once here, keys both
	// the response cache and the connections' cursors.
	secret := c.Secret
	if len(secret) == 0 {
		secret = make([]byte, cache.MinSecretLen)
		_, _ = rand.Read(secret)
	}
	c.Graph.CursorSecret = secret
	rc, err := newCache(*c, secret, st.Redis, st.Metrics)
	if err != nil {
		return err
	}
	if err := st.newClient(c, rc, logger); err != nil {
		return err
	}
	st.usePolicies(c)
	if !c.LiveOff {
		st.startLive(c, rc, secret)
	}
	st.Config = *c
	st.newServer(c, logger)
	return nil
}

// startMetrics listens on c.MetricsAddr, when set, and returns the
// metrics of the embedded REST service (nil without metrics).
func (st *Stack) startMetrics(c *Config, logger *slog.Logger) (*metrics.RESTServer, error) {
	if c.MetricsAddr == "" {
		return nil, nil
	}
	reg := metrics.NewRegistry()
	ms, err := metrics.Listen(c.MetricsAddr, reg, logger)
	switch {
	case err != nil && c.MetricsOptional:
		logger.Warn("metrics are off: cannot listen on the metrics address", "addr", c.MetricsAddr, "err", err)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("-metrics-addr: %w", err)
	}
	o := metrics.Options{Refusal: graph.RefusalReason}
	if docs := c.Graph.TrustedDocuments; len(docs) > 0 {
		o.Operations, o.OnlyOperations = docs.OperationNames(), true
	}
	st.metricsServer, st.MetricsRegistry, st.MetricsURL = ms, reg, ms.URL()
	st.Metrics = metrics.NewFacade(reg, o)
	return metrics.NewRESTServer(reg), nil
}

// startUpstream starts the local REST service when c names no upstream.
func (st *Stack) startUpstream(ctx context.Context, c *Config, logger *slog.Logger, restMetrics *metrics.RESTServer) error {
	if c.Upstream != "" {
		return nil
	}
	up, err := StartUpstream(ctx, UpstreamConfig{DataDir: c.DataDir, DemoScale: c.DemoScale, RateLimit: c.DemoRateLimit,
		Logger: logger.With("component", "restserver"), Middleware: c.UpstreamMiddleware, Metrics: restMetrics,
		// The test endpoints (counters, record changes) serve the tests
		// (testenv), the soak and a reader of docs/live-data.md, on
		// loopback; never in production.
		TestEndpoints: c.DemoTestEndpoints, Addr: c.DemoAddr, TracerProvider: c.UpstreamTracerProvider})
	if err != nil {
		return err
	}
	st.Embedded, st.UpstreamURL = up, up.URL
	return nil
}

// openRedis opens c.RedisURL, when set.
func (st *Stack) openRedis(c *Config, logger *slog.Logger) error {
	if c.RedisURL == "" {
		return nil
	}
	r, err := redisx.Open(c.RedisURL, redisx.Options{Logger: logger.With("component", "redis"), OpTimeout: c.RedisOpTimeout})
	if err != nil {
		return fmt.Errorf("-redis-url: %w", err)
	}
	st.Redis = r
	if len(c.Secret) == 0 {
		logger.Warn("FACADE_SECRET is not set: this replica's cache entries and cursors are sealed with a random secret, so replicas do not share them")
	}
	return nil
}

// newClient makes the REST client of the upstream, with the response cache
// rc (nil: none), and gives it to the GraphQL endpoint.
func (st *Stack) newClient(c *Config, rc *cache.Cache, logger *slog.Logger) error {
	opts := []restclient.Option{
		restclient.WithTimeout(c.UpstreamTimeout),
		restclient.WithAuthGate(c.AuthGate),
		restclient.WithBreakerStateChange(func(route string, from, to restclient.BreakerState) {
			logger.Warn("upstream circuit breaker", "route", route, "from", from.String(), "to", to.String())
		}),
	}
	if rc != nil {
		opts = append(opts, restclient.WithCache(rc))
	}
	if c.Budget.MaxPause > 0 {
		opts = append(opts, restclient.WithMaxRetryAfter(c.Budget.MaxPause))
	}
	opts = append(opts, c.ClientOptions...)
	client, err := restclient.NewClient(st.UpstreamURL, opts...)
	if err != nil {
		return fmt.Errorf("upstream %q: %w", st.UpstreamURL, err)
	}
	st.Client = client
	st.Metrics.SetClient(client)
	c.Graph.Client, c.Graph.Logger, c.Graph.Metrics = client, logger, st.Metrics
	return nil
}

// usePolicies gives the GraphQL endpoint its rate budget, its persisted
// queries in Redis (with one) and the upstream call report's switch.
func (st *Stack) usePolicies(c *Config) {
	bc := c.Budget
	bc.Redis, bc.Replicas = st.Redis, c.Replicas
	c.Graph.Budget = budget.New(bc)
	st.Metrics.SetBudget(c.Graph.Budget)
	if st.Redis != nil && c.Graph.APQCacheSize > 0 && c.Graph.APQCacheBytes > 0 {
		c.Graph.APQCache = apq.New(st.Redis, apq.Config{Entries: c.Graph.APQCacheSize, Bytes: c.Graph.APQCacheBytes,
			MaxQueryBytes: c.Graph.MaxQueryBytes, ClientBytes: int64(c.APQClientBytes), TotalBytes: int64(c.APQRedisBytes)})
	}
	c.Graph.UpstreamTrace = c.UpstreamTrace == "on" || (c.UpstreamTrace == "auto" && st.Embedded != nil)
}

// startLive starts the pollers of the subscriptions (their changes
// invalidate rc's entries, nil: no cache; shared by the replicas through
// Redis, sealed with secret) and the live transports' restart.
func (st *Stack) startLive(c *Config, rc *cache.Cache, secret []byte) {
	lc := c.Live
	lc.Budget = c.Graph.Budget
	if st.Metrics != nil {
		lc.Hooks = []restclient.CallHooks{st.Metrics.CallHooks()}
	}
	if rc != nil {
		lc.Cache = rc
	}
	if st.Redis != nil {
		lc.Shared = live.NewShared(st.Redis, secret)
	}
	st.Live = live.New(lc)
	c.Graph.Live = st.Live
	st.restart = livetransport.NewRestart()
	c.Graph.LiveRestart = st.restart
	c.Graph.CheckOrigin = func(origin string) bool { return slices.Contains(c.CORSOrigins, origin) }
}

// newServer makes the stack's routes (the GraphQL endpoint among them) and
// its HTTP server.
func (st *Stack) newServer(c *Config, logger *slog.Logger) {
	st.Handler = newRouter(routes{
		tracer:      c.TracerProvider,
		graphql:     graph.NewHandler(c.Graph),
		playground:  playgroundHandler(*c, st.Embedded),
		client:      st.Client,
		redis:       st.Redis,
		cors:        c.CORSOrigins,
		corsHeaders: c.CORSHeaders,
		logger:      logger,
		draining:    &st.draining,
	})
	if st.metricsServer != nil {
		st.metricsServer.Handle("GET /readyz", readyHandler(st.Client, st.Redis, &st.draining, true))
	}
	st.server = &http.Server{
		Handler:           st.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	if c.Graph.RequestTimeout > 0 {
		st.server.WriteTimeout = c.Graph.RequestTimeout + 5*time.Second
	}
}

// Serve serves the stack on ln until Shutdown or Close; it returns
// http.ErrServerClosed then.
func (s *Stack) Serve(ln net.Listener) error { return s.server.Serve(ln) }

// Drain starts the drain that precedes Shutdown: /readyz (both routes)
// answers 503 {"status": "draining"} and every response carries
// "Connection: close"; requests are still served.
func (s *Stack) Drain() { s.draining.Store(true) }

// Shutdown ends the live connections as a restart does (every WebSocket
// closed 1012 with a close frame, every SSE stream without `complete`:
// their clients connect again, to another replica) and waits for them
// until ctx ends, stops the pollers, stops accepting requests, waits for
// those in flight until ctx ends, then stops the embedded REST service.
func (s *Stack) Shutdown(ctx context.Context) error {
	if s.restart != nil {
		s.restart.Close(ctx)
	}
	if s.Live != nil {
		s.Live.Close()
	}
	err := s.server.Shutdown(ctx)
	s.Client.CloseIdleConnections()
	if s.metricsServer != nil {
		err = errors.Join(err, s.metricsServer.Shutdown(ctx))
	}
	if s.Redis != nil {
		err = errors.Join(err, s.Redis.Close())
	}
	if s.Embedded != nil {
		err = errors.Join(err, s.Embedded.Close())
	}
	return err
}

// Close is Shutdown with the configured shutdown timeout.
func (s *Stack) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), max(s.Config.ShutdownTimeout, time.Second))
	defer cancel()
	if s.server == nil { // Start failed half-way
		var err error
		if s.metricsServer != nil {
			err = s.metricsServer.Shutdown(ctx)
		}
		if s.Redis != nil {
			err = errors.Join(err, s.Redis.Close())
		}
		if s.Embedded != nil {
			err = errors.Join(err, s.Embedded.Close())
		}
		return err
	}
	return s.Shutdown(ctx)
}

// newCache returns the response cache of c keyed by secret, nil when c
// caches nothing. It keeps entries in Redis when there is one, else in this
// process.
func newCache(c Config, secret []byte, r *redisx.Client, m *metrics.Facade) (*cache.Cache, error) {
	ttl, err := cache.ParseTTLs(c.CacheTTL)
	if err != nil || len(ttl) == 0 {
		return nil, err
	}
	var store cache.Store = cache.NewMemoryStore(cache.DefaultMemoryBytes)
	if r != nil {
		store = newHealthStore(r)
	}
	cc := cache.Config{Secret: secret, TTL: ttl, Store: store}
	if m != nil {
		cc.OnLookup = m.CacheLookup
	}
	return cache.New(cc)
}
