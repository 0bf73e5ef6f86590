package stack

import (
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/guard"
	"github.com/workspacenet/facade/internal/policy/apq"
	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/policy/cache"
	"github.com/workspacenet/facade/internal/policy/live"
	"github.com/workspacenet/facade/internal/policy/metrics"
	"github.com/workspacenet/facade/internal/policy/redisx"
	"github.com/workspacenet/facade/restclient"
)

// Config is the whole configuration of the facade program. Every field but
// the programmatic ones at the end is a flag (ParseFlags); Graph's fields that
// are flags take their defaults from graph.DefaultOptions. As in graph, 0
// turns a limit off.
type Config struct {
	Addr            string        // listen address of the program (Serve's caller)
	Upstream        string        // base URL of the REST API; "" starts the local REST service
	DataDir         string        // embedded REST service's SQLite directory; "" keeps it in memory (DefaultDataDir)
	DemoScale       int           // size of the embedded demo data
	UpstreamTimeout time.Duration // timeout of one upstream attempt
	ShutdownTimeout time.Duration // time given to in-flight requests on shutdown
	// ShutdownDelay is how long the program keeps serving after SIGTERM
	// before it stops accepting connections: /readyz answers 503 and every
	// response closes its connection meanwhile (Stack.Drain), so a load
	// balancer takes the replica out of rotation first. 0: stop at once.
	ShutdownDelay time.Duration
	CORSOrigins   []string // browser origins allowed to call /graphql (scheme://host[:port])
	CORSHeaders   []string // request headers allowed cross-origin besides DefaultCORSHeaders
	Playground    bool     // serve GraphiQL at /
	UpstreamTrace string   // "auto" (on with the embedded upstream), "on" or "off"
	Production    bool     // introspection, suggestions, playground, trace and the demo's test endpoints off
	TrustedDocs   string   // JSON file of sha256 -> document; "" = any operation
	LogLevel      slog.Level
	// Budget paces upstream requests per upstream client (RPS 0 = off).
	Budget budget.Config
	// AuthGate sends an unproven credential's first upstream call alone and
	// refuses, unsent, one answered 401 within its RefusedTTL
	// (restclient.AuthGate; Trust 0 = off).
	AuthGate restclient.AuthGate
	// DemoRateLimit is the embedded REST service's rate limit, requests per
	// second per client as the real API enforces (0 = off).
	DemoRateLimit int
	// DemoActivity is how often the program (not Start) makes a change in
	// the embedded REST service's activity location (its last, which no
	// documented example reads: restserver.DemoManifest.ActivityLocation):
	// a new order, a new payment, the payment succeeding
	// (restserver.Activity), so subscriptions show something at once.
	// 0 = none.
	DemoActivity time.Duration
	// DemoTestEndpoints serves the embedded REST service's test endpoints
	// (POST /_test/{table}/{id}/set and .../copy, /_stats:
	// restserver.Config.TestEndpoints), unauthenticated, on its loopback
	// listener. Start turns them off with Production; with Upstream there
	// is no embedded service at all.
	DemoTestEndpoints bool
	// DemoAddr is the embedded REST service's listen address, a loopback
	// one (its test endpoints answer anyone who reaches it); port 0 picks a
	// free port ("" = DefaultDemoAddr). The banner prints the address
	// listened on.
	DemoAddr string
	// CacheTTL is the response cache's TTL per route family
	// (cache.ParseTTLs); "" caches nothing.
	CacheTTL string
	// RedisURL, when set, shares the rate budget, the response cache and
	// the APQ store between replicas (redisx URL forms: standalone,
	// Cluster, Sentinel).
	RedisURL string
	// APQClientBytes and APQRedisBytes bound the persisted queries written
	// to Redis per hour (internal/policy/apq: a query lives there an hour): by one
	// upstream client, and by all; 0 shares none through Redis.
	APQClientBytes, APQRedisBytes int
	// RedisOpTimeout bounds each Redis operation (0: redisx.DefaultOpTimeout);
	// one that fails or runs late degrades the replica to its own state.
	RedisOpTimeout time.Duration
	// Replicas is the number of replicas the operator runs: without Redis
	// (or while it is down) each paces at RPS/Replicas.
	Replicas int
	// Secret keys the response cache and the connections' cursors (and
	// anything else replicas must agree on); from FACADE_SECRET (hex, at
	// least 32 bytes, at least MinSecretDistinctBytes distinct byte
	// values) only, never a flag. Empty: a random secret drawn once
	// by Start for this process. Start sets Graph.CursorSecret from it.
	Secret []byte

	// MetricsAddr is the listen address of the Prometheus /metrics endpoint
	// (internal/policy/metrics), a listener of its own; "" = no metrics at all.
	// ParseFlags defaults it to metrics.DefaultAddr in demo mode (no
	// upstream URL) unless -metrics-addr or METRICS_ADDR is given.
	MetricsAddr string
	// MetricsOptional makes a MetricsAddr that cannot be listened on a
	// warning (metrics off) instead of an error: set with the demo default,
	// so two demos (or tests) on one machine do not fail on the port.
	MetricsOptional bool

	// Live sizes the pollers that feed the subscriptions (internal/policy/live;
	// Start sets its Budget, Cache and Hooks). LiveOff turns subscriptions
	// off.
	Live    live.Config
	LiveOff bool

	// Graph configures the GraphQL endpoint; Start sets its Client, Logger
	// and TrustedDocuments, and applies Production and UpstreamTrace.
	Graph graph.Options

	// Programmatic only (tests, benchmark, soak).

	// ClientOptions are added to the upstream client's options.
	ClientOptions []restclient.Option
	// UpstreamMiddleware wraps the embedded REST service's handler.
	UpstreamMiddleware func(http.Handler) http.Handler
	// TracerProvider, when set, traces the stack (internal/base/tracing): a
	// server span per request, the GraphQL operation's name on it, loader
	// and upstream call spans, traceparent to the upstream, trace_id and
	// span_id on the request's log lines. nil: tracing off, nothing
	// installed. The program sets it from the OTEL_* environment
	// (tracing.FromEnv); tests pass one with an in-memory exporter.
	TracerProvider trace.TracerProvider
	// UpstreamTracerProvider traces the embedded REST service (server span
	// per route, SQL spans); nil: TracerProvider.
	UpstreamTracerProvider trace.TracerProvider
}

// DefaultDataDir is where `go run .` keeps its embedded REST service's data:
// a directory of its own, so what is done with `go run ./cmd/restserver`
// (./data/restserver/) never changes the playground's data. Deleting it
// resets the demo (README.md, "A first query").
const DefaultDataDir = "data/facade"

// minRouterSecret is the shortest ROUTER_SECRET accepted.
const minRouterSecret = 32

// DefaultDemoAddr is the embedded REST service's default listen address:
// loopback, a free port.
const DefaultDemoAddr = "127.0.0.1:0"

// DefaultConfig returns the program's defaults (those of `go run .`).
func DefaultConfig() Config {
	return Config{
		Addr:            "127.0.0.1:8080",
		DataDir:         DefaultDataDir,
		DemoScale:       1,
		UpstreamTimeout: restclient.DefaultTimeout,
		ShutdownTimeout: 15 * time.Second,
		Playground:      true,
		UpstreamTrace:   "auto",
		LogLevel:        slog.LevelInfo,
		Budget:          budget.Config{RPS: budget.DefaultRPS, Burst: budget.DefaultBurst, MaxPause: budget.DefaultMaxPause},
		DemoRateLimit:   budget.DefaultRPS,
		DemoActivity:    5 * time.Second,
		AuthGate:        restclient.DefaultAuthGate(),
		CacheTTL:        cache.DefaultTTLSpec,
		Replicas:        1,
		APQClientBytes:  apq.DefaultClientBytes,
		APQRedisBytes:   apq.DefaultTotalBytes,
		RedisOpTimeout:  redisx.DefaultOpTimeout,
		Graph:           graph.DefaultOptions(),
		Live: live.Config{Interval: live.DefaultInterval, Buffer: live.DefaultBuffer, MaxQueued: live.DefaultMaxQueued,
			MaxPerCredential: live.DefaultMaxPerCredential, MaxTotal: live.DefaultMaxSubscriptions},
		DemoTestEndpoints: true,
		DemoAddr:          DefaultDemoAddr,
	}
}

// ParseFlags returns DefaultConfig overridden by the environment (getenv)
// and then by the command line args. Server-to-server credentials come from
// the environment only (UPSTREAM_AUTHORIZATION, UPSTREAM_NETWORK_ID): command
// lines are visible to every local user.
func ParseFlags(args []string, getenv func(string) string, stderr io.Writer) (Config, error) {
	c := DefaultConfig()
	f := newFlags(&c, getenv, stderr)
	f.serverFlags(&c)
	f.upstreamFlags(&c)
	f.limitFlags(&c)
	f.liveFlags(&c)
	if len(f.errs) > 0 {
		return Config{}, errors.Join(f.errs...)
	}
	if err := f.fs.Parse(args); err != nil {
		return Config{}, err
	}
	if f.fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments: %q", f.fs.Args())
	}
	if err := f.apply(&c); err != nil {
		return Config{}, err
	}
	if err := c.fromEnvironment(getenv); err != nil {
		return Config{}, err
	}
	return c, c.Validate()
}

// flags binds the command line's flags to a Config: each flag's default is
// its environment variable's value, else the Config's. errs are the
// environment's values that do not parse.
type flags struct {
	fs     *flag.FlagSet
	getenv func(string) string
	errs   []error
	// The flags whose Config field has another type or form (apply).
	csrf                                     bool
	cors, corsHeaders, level, trustedProxies string
	bodyBytes, queryCacheBytes, apqBytes     int
	rps                                      int
}

func newFlags(c *Config, getenv func(string) string, stderr io.Writer) *flags {
	f := &flags{fs: flag.NewFlagSet("facade", flag.ContinueOnError), getenv: getenv}
	f.fs.SetOutput(stderr)
	g := &c.Graph
	f.csrf, f.level = !g.DisableCSRFPrevention, "info"
	f.bodyBytes, f.queryCacheBytes, f.apqBytes = int(g.MaxBodyBytes), int(g.QueryCacheBytes), int(g.APQCacheBytes)
	f.rps = int(c.Budget.RPS)
	return f
}

func (f *flags) env(name, def string) string {
	if v := f.getenv(name); v != "" {
		return v
	}
	return def
}

func (f *flags) str(p *string, name, envName, usage string) {
	f.fs.StringVar(p, name, f.env(envName, *p), usage+" ("+envName+")")
}

func (f *flags) num(p *int, name, envName, usage string) {
	v, err := strconv.Atoi(f.env(envName, strconv.Itoa(*p)))
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("%s: %q is not an integer", envName, f.getenv(envName)))
	}
	f.fs.IntVar(p, name, v, usage+" ("+envName+")")
}

func (f *flags) dur(p *time.Duration, name, envName, usage string) {
	v, err := time.ParseDuration(f.env(envName, p.String()))
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("%s: %q is not a duration", envName, f.getenv(envName)))
	}
	f.fs.DurationVar(p, name, v, usage+" ("+envName+")")
}

func (f *flags) boolean(p *bool, name, envName, usage string) {
	v, err := strconv.ParseBool(f.env(envName, strconv.FormatBool(*p)))
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("%s: %q is not a boolean", envName, f.getenv(envName)))
	}
	f.fs.BoolVar(p, name, v, usage+" ("+envName+")")
}

// serverFlags: the server, its switches, Redis, the demo and metrics.
func (f *flags) serverFlags(c *Config) {
	g := &c.Graph
	f.str(&c.Addr, "addr", "ADDR", "listen address")
	f.str(&c.Upstream, "upstream", "UPSTREAM_URL", "base URL of the REST API; empty starts the local REST service on demo data")
	f.str(&c.DataDir, "data-dir", "DATA_DIR", "directory of the embedded REST service's SQLite file; delete it to reset the demo data")
	f.str(&f.cors, "cors-origins", "CORS_ORIGINS", "comma-separated browser origins allowed to call /graphql, each scheme://host[:port] with no path; '*' is refused")
	f.str(&f.corsHeaders, "cors-headers", "CORS_HEADERS", "comma-separated request headers browsers may send cross-origin, added to the defaults (docs/configuration.md)")
	f.str(&c.UpstreamTrace, "upstream-trace", "UPSTREAM_TRACE", "allow X-Upstream-Trace: 1 to return the upstream call report: auto (on with the embedded demo upstream), on, off")
	f.str(&f.level, "log-level", "LOG_LEVEL", "debug, info, warn or error")
	f.str(&c.TrustedDocs, "trusted-documents", "TRUSTED_DOCUMENTS", "JSON file of sha256 -> document: only these operations are executed")
	f.str(&c.RedisURL, "redis-url", "REDIS_URL", "Redis (redis://, rediss://, a comma list for Cluster, redis-sentinel://) shared by replicas: rate budget, response cache, persisted queries; empty keeps them in this process")
	f.dur(&c.RedisOpTimeout, "redis-timeout", "REDIS_TIMEOUT", "bound of one Redis operation: 3 in a row running out of it (or a refused connection) put the replica on its local state until Redis answers again")
	f.num(&c.Replicas, "replicas", "REPLICAS", "replicas sharing the upstream clients: without Redis, or while it is down, each paces at -upstream-rps divided by this")
	f.str(&c.CacheTTL, "cache-ttl", "CACHE_TTL", "response cache TTL per route family, e.g. resources=30s,products=30s,events=30s; empty caches nothing")
	f.num(&c.DemoScale, "demo-scale", "DEMO_SCALE", "size of the embedded demo data")
	f.num(&c.DemoRateLimit, "demo-rate-limit", "DEMO_RATE_LIMIT", "the embedded REST service's rate limit, requests per second per client as the real API; 0 = off")
	f.dur(&c.ShutdownTimeout, "shutdown-timeout", "SHUTDOWN_TIMEOUT", "time given to in-flight requests on SIGINT/SIGTERM")
	f.dur(&c.ShutdownDelay, "shutdown-delay", "SHUTDOWN_DELAY", "on SIGINT/SIGTERM, keep serving this long with /readyz answering 503 and connections closed after each response, so load balancers stop sending first; 0 = stop accepting at once")
	f.boolean(&c.Playground, "playground", "PLAYGROUND", "serve GraphiQL at /")
	f.boolean(&g.Introspection, "introspection", "INTROSPECTION", "allow introspection queries")
	f.boolean(&c.Production, "production", "PRODUCTION", "turn introspection, field suggestions, the playground, the upstream call report and the embedded REST service's test endpoints off, whatever their own flags say")
	f.boolean(&f.csrf, "csrf-prevention", "CSRF_PREVENTION", "refuse requests a browser could send cross-site without a CORS preflight: no Content-Type or a simple one, and no Apollo-Require-Preflight, X-Apollo-Operation-Name, GraphQL-Require-Preflight or X-Requested-With header")
	f.boolean(&c.DemoTestEndpoints, "demo-test-endpoints", "DEMO_TEST_ENDPOINTS", "with the embedded REST service: serve its unauthenticated test endpoints (POST /_test/{table}/{id}/set and /copy, /_stats) on its loopback address; always off with -production")
	f.str(&c.DemoAddr, "demo-addr", "DEMO_ADDR", "with the embedded REST service: its listen address, on loopback (127.0.0.1, ::1 or localhost); port 0 = a free port, printed at start")
	f.dur(&c.DemoActivity, "demo-activity", "DEMO_ACTIVITY", "with the embedded REST service: how often the program makes a new order, a new payment or a payment succeed in the last demo location (no documented example reads it); 0 = never")
	f.str(&c.MetricsAddr, "metrics-addr", "METRICS_ADDR", "listen address of the Prometheus /metrics endpoint; empty = off (demo mode, without -upstream: "+metrics.DefaultAddr+" unless given)")
}

// upstreamFlags: the upstream's pacing, credentials and timeouts, and
// Federation's.
func (f *flags) upstreamFlags(c *Config) {
	g := &c.Graph
	ag := &c.AuthGate
	f.num(&f.rps, "upstream-rps", "UPSTREAM_RPS", "most upstream requests per second per upstream client (the real API allows 10); 0 = no pacing")
	f.num(&c.Budget.Burst, "upstream-burst", "UPSTREAM_BURST", "of them, how many may go back to back (1 to -upstream-rps)")
	f.dur(&c.Budget.MaxPause, "max-upstream-pause", "MAX_UPSTREAM_PAUSE", "longest pause of an upstream client learned from one answer (Retry-After, RateLimit-Reset): a longer one asked for is this long")
	f.dur(&ag.Trust, "credential-trust", "CREDENTIAL_TRUST", "a credential the upstream answered 2xx within this long is trusted: its calls go out together; another sends its first call alone and the rest wait for its answer; 0 = off")
	f.dur(&ag.RefusedTTL, "credential-refused-ttl", "CREDENTIAL_REFUSED_TTL", "a credential the upstream answered 401 is refused, unsent, for this long; 0 = not remembered")
	f.num(&ag.MaxEntries, "credential-table-size", "CREDENTIAL_TABLE_SIZE", "credentials remembered as trusted, and as refused, at most (each table); the least recently confirmed is forgotten first")
	f.dur(&ag.ProbeWait, "credential-probe-wait", "CREDENTIAL_PROBE_WAIT", "how long an unproven credential's other calls wait for its first call's answer; then they fail unsent (UPSTREAM_UNAVAILABLE), never sent beside it; 0 = as long as the request allows")
	f.dur(&c.UpstreamTimeout, "upstream-timeout", "UPSTREAM_TIMEOUT", "timeout of one upstream attempt")
	f.dur(&g.Loaders.Wait, "loader-wait", "LOADER_WAIT", "batch window of the loaders; 0 dispatches at once")
	f.str(&g.RouterSecretHeader, "router-secret-header", "ROUTER_SECRET_HEADER", "request header carrying the federation router's shared secret (ROUTER_SECRET): with it, or without -production and ROUTER_SECRET, _service and _entities are answered")
	f.boolean(&g.FederationServerCredentials, "federation-server-credentials", "FEDERATION_SERVER_CREDENTIALS", "let _entities use UPSTREAM_AUTHORIZATION when the request carries no credentials (by default it is UNAUTHENTICATED)")
}

// limitFlags: the bounds of one operation and of the operations at once.
func (f *flags) limitFlags(c *Config) {
	g, l := &c.Graph, &c.Graph.Limits
	f.dur(&g.RequestTimeout, "request-timeout", "REQUEST_TIMEOUT", "deadline of one GraphQL request, inherited by its upstream calls; 0 = none")
	f.num(&l.MaxDepth, "max-depth", "MAX_DEPTH", "maximum field nesting of an operation; 0 = no limit")
	f.num(&l.MaxAliases, "max-aliases", "MAX_ALIASES", "maximum aliased fields in an operation; 0 = no limit")
	f.num(&l.MaxRootFields, "max-root-fields", "MAX_ROOT_FIELDS", "maximum root fields of an operation; 0 = no limit")
	f.num(&l.MaxCost, "max-cost", "MAX_COST", "maximum cost of an operation (docs/hardening.md); 0 = no limit")
	f.num(&l.MaxTokens, "max-tokens", "MAX_TOKENS", "maximum parser tokens of a document; 0 = no limit")
	f.num(&l.MaxSelections, "max-selections", "MAX_SELECTIONS", "maximum field selections written in a document (checked before validation); 0 = no limit")
	f.num(&l.MaxDirectives, "max-directives", "MAX_DIRECTIVES", "maximum directives written in a document; 0 = no limit")
	f.num(&g.MaxUpstreamCalls, "max-upstream-calls", "MAX_UPSTREAM_CALLS", "maximum upstream calls of one request; 0 = no limit")
	f.num(&f.bodyBytes, "max-body-bytes", "MAX_BODY_BYTES", "maximum size of a request body in bytes (at least 1)")
	f.num(&g.MaxCostInFlight, "max-cost-in-flight", "MAX_COST_IN_FLIGHT", "maximum summed cost of the operations executing at once (docs/hardening.md); beyond it an operation waits -admission-wait, then gets 503 OVERLOADED; 0 = no limit")
	f.dur(&g.AdmissionWait, "admission-wait", "ADMISSION_WAIT", "how long an operation waits for room under -max-cost-in-flight before 503 OVERLOADED; 0 refuses at once")
	f.num(&g.ClientCostShare, "client-cost-share", "CLIENT_COST_SHARE", "cost units of -max-cost-in-flight one upstream client may hold whatever the others do; beyond them it takes more only while this many stay free for other clients; 0 = no share")
	f.dur(&g.ResponseWriteTimeout, "response-write-timeout", "RESPONSE_WRITE_TIMEOUT", "time a client has to read a response once it is ready; a slower one is cut off; 0 = only the server's write timeout")
	f.num(&g.MaxResponseBytes, "max-response-bytes", "MAX_RESPONSE_BYTES", "maximum size of a response's data in bytes: larger is answered RESPONSE_TOO_LARGE; 0 = no limit")
	f.num(&g.MaxQueryBytes, "max-query-bytes", "MAX_QUERY_BYTES", "maximum size of a query text in bytes, comments included (GET, POST, persisted-query registration): longer is refused 413 QUERY_TOO_LARGE before parsing; 0 = no limit")
	f.num(&f.queryCacheBytes, "query-cache-bytes", "QUERY_CACHE_BYTES", "bytes of parsed documents cached, each counted as its text plus 320 per node; 0 = no cache")
	f.num(&g.APQCacheSize, "apq-cache-size", "APQ_CACHE_SIZE", "automatic persisted queries remembered in this process; 0 = APQ off")
	f.num(&f.apqBytes, "apq-cache-bytes", "APQ_CACHE_BYTES", "bytes of automatic persisted queries remembered in this process; 0 = APQ off")
	f.num(&c.APQClientBytes, "apq-redis-client-bytes", "APQ_REDIS_CLIENT_BYTES", "bytes of persisted queries one upstream client may write to Redis per hour (each counted 256 more); 0 = none shared")
	f.num(&c.APQRedisBytes, "apq-redis-bytes", "APQ_REDIS_BYTES", "bytes of persisted queries all clients may write to Redis per hour: Redis holds at most twice this; 0 = none shared")
	f.num(&l.MaxRepresentations, "max-representations", "MAX_REPRESENTATIONS", "maximum representations given to _entities in one operation (Federation, docs/federation.md); 0 = no limit")
}

// liveFlags: subscriptions and live connections.
func (f *flags) liveFlags(c *Config) {
	g := &c.Graph
	f.dur(&c.Live.Interval, "live-interval", "LIVE_INTERVAL", "interval between two polls of a subscription's source, at least 1s; stretched while the client's budget is short")
	f.num(&c.Live.Buffer, "live-buffer", "LIVE_BUFFER", "most distinct objects waiting for one subscriber (updates of one object coalesce); beyond it the subscription ends with SUBSCRIBER_TOO_SLOW (at least 1)")
	f.num(&c.Live.MaxQueued, "live-max-queued", "LIVE_MAX_QUEUED", "most objects waiting for the subscribers of this replica together; beyond it a subscriber still holding events of an earlier poll ends with SUBSCRIBER_TOO_SLOW; 0 = no limit")
	f.num(&c.Live.MaxPerCredential, "live-max-per-credential", "LIVE_MAX_PER_CREDENTIAL", "maximum subscriptions of one upstream client on this replica; 0 = no limit")
	f.num(&c.Live.MaxTotal, "live-max-subscriptions", "LIVE_MAX_SUBSCRIPTIONS", "maximum subscriptions on this replica; 0 = no limit")
	f.num(&g.LiveQueryMaxBytes, "live-query-max-bytes", "LIVE_QUERY_MAX_BYTES", "most bytes one @live query keeps between its runs (its last result and the bodies its last run read): a larger result ends it with LIVE_QUERY_TOO_LARGE, larger bodies are not kept (its re-runs fetch what they read)")
	f.num(&g.LiveMaxPerConnection, "live-max-per-connection", "LIVE_MAX_PER_CONNECTION", "maximum subscriptions of one WebSocket; 0 = no limit")
	f.num(&g.LiveMaxConnections, "live-max-connections", "LIVE_MAX_CONNECTIONS", "maximum WebSocket and SSE connections open on this replica; 0 = no limit")
	f.num(&g.LiveMaxConnectionsPerCredential, "live-max-connections-per-credential", "LIVE_MAX_CONNECTIONS_PER_CREDENTIAL", "maximum WebSocket and SSE connections of one upstream client on this replica; beyond it a WebSocket is closed 1013, an SSE request refused 503; 0 = no limit")
	f.num(&g.LiveMaxInitPerAddress, "live-max-init-per-address", "LIVE_MAX_INIT_PER_ADDRESS", "maximum connections of one remote address (see -trusted-proxies) whose credentials are not proven yet; beyond it 429 TOO_MANY_CONNECTIONS; 0 = no limit")
	f.dur(&g.LiveIdleTimeout, "live-idle-timeout", "LIVE_IDLE_TIMEOUT", "a WebSocket with no subscription or query for this long is closed (1000, with the reason); 0 = never")
	f.str(&f.trustedProxies, "trusted-proxies", "TRUSTED_PROXIES", "comma-separated addresses and CIDR prefixes of proxies whose X-Forwarded-For names the client's address (for -live-max-init-per-address); empty = the TCP peer is the client")
	f.dur(&g.LiveInitTimeout, "live-init-timeout", "LIVE_INIT_TIMEOUT", "how long a WebSocket may wait before its connection_init; past it the connection is closed (1002)")
	f.dur(&g.LiveKeepAlive, "live-keepalive", "LIVE_KEEPALIVE", "interval of the keep-alive messages on WebSocket and SSE connections; 0 = none")
	f.boolean(&c.LiveOff, "live-off", "LIVE_OFF", "turn subscriptions off (no WebSocket, no SSE)")
}

// apply sets what the parsed flags say in another form: the metrics'
// default address in demo mode, the log level, the lists.
func (f *flags) apply(c *Config) error {
	g := &c.Graph
	metricsGiven := f.getenv("METRICS_ADDR") != ""
	f.fs.Visit(func(fl *flag.Flag) { metricsGiven = metricsGiven || fl.Name == "metrics-addr" })
	if !metricsGiven && c.Upstream == "" {
		c.MetricsAddr, c.MetricsOptional = metrics.DefaultAddr, true
	}
	if err := c.LogLevel.UnmarshalText([]byte(f.level)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	c.Budget.RPS = float64(f.rps)
	g.DisableCSRFPrevention = !f.csrf
	g.MaxBodyBytes = int64(f.bodyBytes)
	g.QueryCacheBytes, g.APQCacheBytes = int64(f.queryCacheBytes), int64(f.apqBytes)
	c.CORSOrigins = splitList(f.cors)
	proxies, err := guard.ParsePrefixes(splitList(f.trustedProxies))
	if err != nil {
		return fmt.Errorf("-trusted-proxies: %w", err)
	}
	g.TrustedProxies = proxies
	c.CORSHeaders = splitList(f.corsHeaders)
	return nil
}

// fromEnvironment sets the secrets and the server's credentials, which come
// from the environment only.
func (c *Config) fromEnvironment(getenv func(string) string) error {
	g := &c.Graph
	if v := getenv("FACADE_SECRET"); v != "" {
		secret, err := hex.DecodeString(strings.TrimSpace(v))
		if err != nil || len(secret) < cache.MinSecretLen {
			return fmt.Errorf("FACADE_SECRET: want at least %d bytes as hex (openssl rand -hex 32)", cache.MinSecretLen)
		}
		c.Secret = secret
	}
	if v := getenv("ROUTER_SECRET"); v != "" {
		if len(v) < minRouterSecret {
			return fmt.Errorf("ROUTER_SECRET: want at least %d characters (openssl rand -hex 32)", minRouterSecret)
		}
		g.RouterSecret = v
	}
	if a := getenv("UPSTREAM_AUTHORIZATION"); a != "" {
		cr := restclient.Credentials{Authorization: a, NetworkID: getenv("UPSTREAM_NETWORK_ID")}
		if err := cr.Check(); err != nil { // a Bearer token without a network id, ...
			return fmt.Errorf("UPSTREAM_AUTHORIZATION, UPSTREAM_NETWORK_ID: %w", err)
		}
		g.ServerCredentials = &cr
	}
	return nil
}

// Validate reports the first setting that makes no sense.
func (c *Config) Validate() error {
	for _, check := range []func() error{c.validateLimits, c.validateLive, c.validateUpstream, c.validateDemo, c.validateServer} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateLimits: the switch of the call report and the bounds, none
// negative.
func (c *Config) validateLimits() error {
	switch c.UpstreamTrace {
	case "auto", "on", "off":
	default:
		return fmt.Errorf("-upstream-trace: %q is not auto, on or off", c.UpstreamTrace)
	}
	l := c.Graph.Limits
	for name, v := range map[string]int{"-max-depth": l.MaxDepth, "-max-aliases": l.MaxAliases, "-max-root-fields": l.MaxRootFields,
		"-max-cost": l.MaxCost, "-max-tokens": l.MaxTokens, "-max-selections": l.MaxSelections, "-max-directives": l.MaxDirectives,
		"-max-upstream-calls": c.Graph.MaxUpstreamCalls, "-apq-cache-size": c.Graph.APQCacheSize,
		"-max-query-bytes": c.Graph.MaxQueryBytes, "-query-cache-bytes": int(c.Graph.QueryCacheBytes), "-apq-cache-bytes": int(c.Graph.APQCacheBytes),
		"-apq-redis-client-bytes": c.APQClientBytes, "-apq-redis-bytes": c.APQRedisBytes,
		"-max-cost-in-flight": c.Graph.MaxCostInFlight, "-max-response-bytes": c.Graph.MaxResponseBytes, "-client-cost-share": c.Graph.ClientCostShare,
		"-live-max-per-credential": c.Live.MaxPerCredential, "-live-max-subscriptions": c.Live.MaxTotal,
		"-max-representations":     l.MaxRepresentations,
		"-live-max-per-connection": c.Graph.LiveMaxPerConnection, "-live-max-connections": c.Graph.LiveMaxConnections,
		"-live-max-connections-per-credential": c.Graph.LiveMaxConnectionsPerCredential, "-live-max-init-per-address": c.Graph.LiveMaxInitPerAddress,
		"-live-max-queued": c.Live.MaxQueued} {
		if v < 0 {
			return fmt.Errorf("%s: %d is negative (0 turns it off)", name, v)
		}
	}
	return nil
}

// validateLive: subscriptions, live connections and Federation's secret.
func (c *Config) validateLive() error {
	if c.Live.Interval < live.MinInterval && !c.Live.AllowFastPolls {
		return fmt.Errorf("-live-interval: %v is below the minimum %v", c.Live.Interval, live.MinInterval)
	}
	if c.Graph.RouterSecret != "" && strings.TrimSpace(c.Graph.RouterSecretHeader) == "" {
		return fmt.Errorf("-router-secret-header: empty, but ROUTER_SECRET is set: name the header that carries it")
	}
	if c.Live.Buffer < 1 {
		return fmt.Errorf("-live-buffer: %d must be at least 1", c.Live.Buffer)
	}
	if c.Graph.LiveInitTimeout <= 0 {
		return fmt.Errorf("-live-init-timeout: %v must be positive", c.Graph.LiveInitTimeout)
	}
	if c.Graph.LiveIdleTimeout < 0 {
		return fmt.Errorf("-live-idle-timeout: %v is negative (0 = never)", c.Graph.LiveIdleTimeout)
	}
	if c.Graph.LiveKeepAlive < 0 {
		return fmt.Errorf("-live-keepalive: %v is negative", c.Graph.LiveKeepAlive)
	}
	return nil
}

// validateUpstream: pacing, the credential gate, replicas, the cache and
// its secret.
func (c *Config) validateUpstream() error {
	if c.Budget.MaxPause < 0 {
		return fmt.Errorf("-max-upstream-pause: %v is negative", c.Budget.MaxPause)
	}
	if err := c.Budget.Validate(); err != nil {
		return fmt.Errorf("-upstream-rps/-upstream-burst: %w", err)
	}
	if ag := c.AuthGate; ag.Trust < 0 || ag.RefusedTTL < 0 || ag.ProbeWait < 0 {
		return fmt.Errorf("-credential-trust, -credential-refused-ttl, -credential-probe-wait: negative duration")
	} else if ag.Trust > 0 && ag.MaxEntries < 1 {
		return fmt.Errorf("-credential-table-size: %d must be at least 1 (-credential-trust 0 turns the gate off)", ag.MaxEntries)
	}
	if c.Replicas < 1 {
		return fmt.Errorf("-replicas: %d must be at least 1", c.Replicas)
	}
	if _, err := cache.ParseTTLs(c.CacheTTL); err != nil {
		return fmt.Errorf("-cache-ttl: %w", err)
	}
	if len(c.Secret) > 0 && len(c.Secret) < cache.MinSecretLen {
		return fmt.Errorf("secret: %d bytes, want at least %d", len(c.Secret), cache.MinSecretLen)
	}
	if n := distinctBytes(c.Secret); len(c.Secret) > 0 && n < MinSecretDistinctBytes {
		return fmt.Errorf("FACADE_SECRET: %d distinct byte values in its %d bytes, want at least %d: it is not random (a random 32-byte secret has about 30); make one with openssl rand -hex 32", n, len(c.Secret), MinSecretDistinctBytes)
	}
	return nil
}

// validateDemo: the embedded REST service, the body limit and the
// request's timeouts.
func (c *Config) validateDemo() error {
	if c.DemoActivity < 0 {
		return fmt.Errorf("-demo-activity: %v is negative (0 = off)", c.DemoActivity)
	}
	if c.Upstream == "" && c.DemoAddr != "" {
		if err := checkLoopback(c.DemoAddr); err != nil {
			return fmt.Errorf("-demo-addr: %w", err)
		}
	}
	if c.DemoRateLimit < 0 {
		return fmt.Errorf("-demo-rate-limit: %d is negative (0 = off)", c.DemoRateLimit)
	}
	if c.Graph.MaxBodyBytes <= 0 {
		// A body limit stays on: graph's 0 (no limit) is not offered here.
		return fmt.Errorf("-max-body-bytes: %d must be positive", c.Graph.MaxBodyBytes)
	}
	if c.Graph.RequestTimeout < 0 {
		return fmt.Errorf("-request-timeout: %v is negative (0 = no deadline)", c.Graph.RequestTimeout)
	}
	if c.Graph.AdmissionWait < 0 {
		return fmt.Errorf("-admission-wait: %v is negative (0 refuses at once)", c.Graph.AdmissionWait)
	}
	if c.Graph.ResponseWriteTimeout < 0 {
		return fmt.Errorf("-response-write-timeout: %v is negative (0 = the server's write timeout only)", c.Graph.ResponseWriteTimeout)
	}
	return nil
}

// validateServer: shutdown, the upstream's timeout, the demo's scale and
// CORS.
func (c *Config) validateServer() error {
	if c.ShutdownDelay < 0 {
		return fmt.Errorf("-shutdown-delay: %v is negative (0 = none)", c.ShutdownDelay)
	}
	if c.UpstreamTimeout <= 0 {
		return fmt.Errorf("-upstream-timeout: %v must be positive", c.UpstreamTimeout)
	}
	if c.Upstream == "" && c.DemoScale < 1 {
		return fmt.Errorf("-demo-scale: %d must be at least 1", c.DemoScale)
	}
	for _, o := range c.CORSOrigins {
		if err := checkOrigin(o); err != nil {
			return fmt.Errorf("-cors-origins: %w", err)
		}
	}
	for _, h := range c.CORSHeaders {
		if !isToken(h) {
			return fmt.Errorf("-cors-headers: %q is not a header name (letters, digits and !#$%%&'*+-.^_`|~; '*' is refused: list the headers)", h)
		}
	}
	return nil
}

// MinSecretDistinctBytes is the fewest distinct byte values a secret
// (FACADE_SECRET) may have: a placeholder (all zeros, one byte repeated, a
// short pattern) is refused at start. 32 random bytes have about 30
// (32 - 31*32/(2*256) on average); fewer than 16 happens with a chance far
// below 1e-15.
const MinSecretDistinctBytes = 16

func distinctBytes(b []byte) int {
	var seen [256]bool
	n := 0
	for _, c := range b {
		if !seen[c] {
			seen[c], n = true, n+1
		}
	}
	return n
}

// checkLoopback accepts host:port addresses on a loopback host (an IP
// address of the loopback range, or localhost) and a port 0 to 65535.
func checkLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port (e.g. 127.0.0.1:8081)", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q: port %q is not 0 to 65535", addr, port)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%q is not a loopback address: the embedded REST service serves the demo's credentials and, unless -demo-test-endpoints=false, unauthenticated test endpoints; serve a REST service to others with cmd/restserver", addr)
	}
	return nil
}

// checkOrigin refuses what a browser never sends as Origin, so would never
// match: an origin is scheme://host[:port], with no path (not even "/"),
// query, fragment or user info.
func checkOrigin(o string) error {
	want := fmt.Sprintf("%q is not an origin: want scheme://host[:port] with no path, e.g. https://app.example.com or http://localhost:3000", o)
	if o == "*" {
		return errors.New("'*' is refused because requests carry credentials; list the origins")
	}
	u, err := url.Parse(o)
	switch {
	case err != nil || u.Scheme == "" || u.Opaque != "" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(o, "#"):
		return errors.New(want)
	case u.Path != "":
		return fmt.Errorf("%s (remove the path %q)", want, u.Path)
	case strings.Contains(u.Host, "*"):
		return fmt.Errorf("%s (wildcards are refused: list the origins)", want)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%s (port %q)", want, p)
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return errors.New(want)
	}
	return nil
}

// isToken reports whether s is an HTTP field name (RFC 9110 token).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'+-.^_`|~", r)) {
			return false
		}
	}
	return true
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
