// Command facade serves the GraphQL facade over the Workspace Network Service
// REST API. With no upstream URL configured it starts the local REST service
// in-process on demo data, so `go run .` is a working playground.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/cors"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/guard"
	"github.com/workspacenet/facade/graph/limits"
	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/graph/trusted"
	"github.com/workspacenet/facade/playground"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "facade:", err)
		os.Exit(1)
	}
}

// config is the program's configuration: every flag has an environment
// variable, and a flag given on the command line wins.
type config struct {
	addr            string
	upstream        string
	dataDir         string
	demoScale       int
	requestTimeout  time.Duration
	upstreamTimeout time.Duration
	shutdownTimeout time.Duration
	corsOrigins     string
	playground      bool
	introspection   bool
	upstreamTrace   string // "auto", "on" or "off"
	loaderWait      time.Duration
	logLevel        string
	// Hardening (README, Hardening).
	production       bool
	csrfPrevention   bool
	maxDepth         int
	maxAliases       int
	maxRootFields    int
	maxCost          int
	maxTokens        int
	maxSelections    int
	maxDirectives    int
	maxUpstreamCalls int
	maxBodyBytes     int
	apqCacheSize     int
	trustedDocuments string
	// Server-to-server credentials come from the environment only, never
	// from flags (command lines are visible to every local user).
	serverAuthorization string
	serverNetworkID     string
}

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("facade", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	fs.StringVar(&c.addr, "addr", env("ADDR", "127.0.0.1:8080"), "listen address (ADDR)")
	fs.StringVar(&c.upstream, "upstream", env("UPSTREAM_URL", ""), "base URL of the REST API; empty starts the local REST service on demo data (UPSTREAM_URL)")
	fs.StringVar(&c.dataDir, "data-dir", env("DATA_DIR", "data"), "directory of the embedded REST service's SQLite file (DATA_DIR)")
	fs.StringVar(&c.corsOrigins, "cors-origins", env("CORS_ORIGINS", ""), "comma-separated browser origins allowed to call /graphql (CORS_ORIGINS); '*' is refused")
	fs.StringVar(&c.upstreamTrace, "upstream-trace", env("UPSTREAM_TRACE", "auto"), "allow X-Upstream-Trace: 1 to return the upstream call report: auto (on with the embedded demo upstream), on, off (UPSTREAM_TRACE)")
	fs.StringVar(&c.logLevel, "log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error (LOG_LEVEL)")
	fs.StringVar(&c.trustedDocuments, "trusted-documents", env("TRUSTED_DOCUMENTS", ""), "JSON file of sha256 -> document: only these operations are executed (TRUSTED_DOCUMENTS)")
	var errs []error
	intVar := func(p *int, name, envName string, def int, usage string) {
		v, err := strconv.Atoi(env(envName, strconv.Itoa(def)))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not an integer", envName, getenv(envName)))
		}
		fs.IntVar(p, name, v, usage+" ("+envName+")")
	}
	durVar := func(p *time.Duration, name, envName string, def time.Duration, usage string) {
		v, err := time.ParseDuration(env(envName, def.String()))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not a duration", envName, getenv(envName)))
		}
		fs.DurationVar(p, name, v, usage+" ("+envName+")")
	}
	boolVar := func(p *bool, name, envName string, def bool, usage string) {
		v, err := strconv.ParseBool(env(envName, strconv.FormatBool(def)))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not a boolean", envName, getenv(envName)))
		}
		fs.BoolVar(p, name, v, usage+" ("+envName+")")
	}
	intVar(&c.demoScale, "demo-scale", "DEMO_SCALE", 1, "size of the embedded demo data")
	durVar(&c.requestTimeout, "request-timeout", "REQUEST_TIMEOUT", 30*time.Second, "deadline of one GraphQL request, inherited by its upstream calls")
	durVar(&c.upstreamTimeout, "upstream-timeout", "UPSTREAM_TIMEOUT", 10*time.Second, "timeout of one upstream attempt")
	durVar(&c.shutdownTimeout, "shutdown-timeout", "SHUTDOWN_TIMEOUT", 15*time.Second, "time given to in-flight requests on SIGINT/SIGTERM")
	durVar(&c.loaderWait, "loader-wait", "LOADER_WAIT", 0, "batch window of the loaders; 0 dispatches at once")
	boolVar(&c.playground, "playground", "PLAYGROUND", true, "serve GraphiQL at /")
	boolVar(&c.introspection, "introspection", "INTROSPECTION", true, "allow introspection queries")
	boolVar(&c.production, "production", "PRODUCTION", false, "turn introspection, field suggestions, the playground and the upstream call report off, whatever their own flags say")
	boolVar(&c.csrfPrevention, "csrf-prevention", "CSRF_PREVENTION", true, "refuse GET and non-JSON POST requests that carry no preflight-forcing header")
	intVar(&c.maxDepth, "max-depth", "MAX_DEPTH", limits.DefaultMaxDepth, "maximum field nesting of an operation; 0 = no limit")
	intVar(&c.maxAliases, "max-aliases", "MAX_ALIASES", limits.DefaultMaxAliases, "maximum aliased fields in an operation; 0 = no limit")
	intVar(&c.maxRootFields, "max-root-fields", "MAX_ROOT_FIELDS", limits.DefaultMaxRootFields, "maximum root fields of an operation; 0 = no limit")
	intVar(&c.maxCost, "max-cost", "MAX_COST", limits.DefaultMaxCost, "maximum cost of an operation (README, Hardening); 0 = no limit")
	intVar(&c.maxTokens, "max-tokens", "MAX_TOKENS", limits.DefaultMaxTokens, "maximum parser tokens of a document; 0 = no limit")
	intVar(&c.maxSelections, "max-selections", "MAX_SELECTIONS", limits.DefaultMaxSelections, "maximum field selections written in a document (checked before validation); 0 = no limit")
	intVar(&c.maxDirectives, "max-directives", "MAX_DIRECTIVES", limits.DefaultMaxDirectives, "maximum directives written in a document; 0 = no limit")
	intVar(&c.maxUpstreamCalls, "max-upstream-calls", "MAX_UPSTREAM_CALLS", graph.DefaultMaxUpstreamCalls, "maximum upstream calls of one request; 0 = no limit")
	intVar(&c.maxBodyBytes, "max-body-bytes", "MAX_BODY_BYTES", guard.DefaultMaxBodyBytes, "maximum size of a request body in bytes")
	intVar(&c.apqCacheSize, "apq-cache-size", "APQ_CACHE_SIZE", 1000, "automatic persisted queries remembered; 0 = APQ off")
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	switch c.upstreamTrace {
	case "auto", "on", "off":
	default:
		return nil, fmt.Errorf("-upstream-trace: %q is not auto, on or off", c.upstreamTrace)
	}
	for name, v := range map[string]int{"-max-depth": c.maxDepth, "-max-aliases": c.maxAliases, "-max-root-fields": c.maxRootFields,
		"-max-cost": c.maxCost, "-max-tokens": c.maxTokens, "-max-selections": c.maxSelections, "-max-directives": c.maxDirectives, "-max-upstream-calls": c.maxUpstreamCalls, "-apq-cache-size": c.apqCacheSize} {
		if v < 0 {
			return nil, fmt.Errorf("%s: %d is negative (0 turns the limit off)", name, v)
		}
	}
	if c.maxBodyBytes <= 0 {
		return nil, fmt.Errorf("-max-body-bytes: %d must be positive", c.maxBodyBytes)
	}
	if c.production {
		// Production wins over the individual switches.
		c.introspection, c.playground, c.upstreamTrace = false, false, "off"
	}
	for _, o := range splitList(c.corsOrigins) {
		if o == "*" {
			return nil, errors.New("-cors-origins: '*' is refused because requests carry credentials; list the origins")
		}
	}
	c.serverAuthorization = getenv("UPSTREAM_AUTHORIZATION")
	c.serverNetworkID = getenv("UPSTREAM_NETWORK_ID")
	return c, nil
}

// offIfZero maps a flag's "0 = off" to graph.Options' "negative = off".
func offIfZero(v int) int {
	if v == 0 {
		return -1
	}
	return v
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

// run starts the facade and serves until ctx ends, then shuts down gracefully.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	var docs trusted.Documents
	if cfg.trustedDocuments != "" {
		if docs, err = trusted.Load(cfg.trustedDocuments); err != nil {
			return fmt.Errorf("-trusted-documents: %w", err)
		}
	}
	if cfg.production {
		logger.Info("production mode: introspection, field suggestions, the playground and the upstream call report are off")
	}

	upstreamURL := cfg.upstream
	var demo *restserver.DemoManifest
	if upstreamURL == "" {
		emb, err := startEmbedded(ctx, cfg, logger)
		if err != nil {
			return err
		}
		defer emb.close()
		upstreamURL, demo = emb.url, emb.manifest
	}

	client, err := restclient.NewClient(upstreamURL,
		restclient.WithTimeout(cfg.upstreamTimeout),
		restclient.WithBreakerStateChange(func(route string, from, to restclient.BreakerState) {
			logger.Warn("upstream circuit breaker", "route", route, "from", from.String(), "to", to.String())
		}))
	if err != nil {
		return fmt.Errorf("upstream %q: %w", upstreamURL, err)
	}
	var serverCreds *restclient.Credentials
	if cfg.serverAuthorization != "" {
		serverCreds = &restclient.Credentials{Authorization: cfg.serverAuthorization, NetworkID: cfg.serverNetworkID}
	}
	trace := cfg.upstreamTrace == "on" || (cfg.upstreamTrace == "auto" && demo != nil)

	gql := graph.NewHandler(graph.Options{
		Client:            client,
		Loaders:           loaders.Config{Wait: cfg.loaderWait},
		Logger:            logger,
		Introspection:     cfg.introspection,
		UpstreamTrace:     trace,
		ServerCredentials: serverCreds,
		RequestTimeout:    cfg.requestTimeout,
		Limits: limits.Config{
			MaxDepth: offIfZero(cfg.maxDepth), MaxAliases: offIfZero(cfg.maxAliases), MaxRootFields: offIfZero(cfg.maxRootFields),
			MaxCost: offIfZero(cfg.maxCost), MaxTokens: offIfZero(cfg.maxTokens),
			MaxSelections: offIfZero(cfg.maxSelections), MaxDirectives: offIfZero(cfg.maxDirectives),
		},
		MaxUpstreamCalls:      offIfZero(cfg.maxUpstreamCalls),
		MaxBodyBytes:          int64(cfg.maxBodyBytes),
		DisableCSRFPrevention: !cfg.csrfPrevention,
		DisableSuggestions:    cfg.production,
		APQCacheSize:          offIfZero(cfg.apqCacheSize),
		TrustedDocuments:      docs,
	})
	handler := newServer(serverDeps{
		graphql:     gql,
		playground:  playgroundHandler(cfg, demo),
		upstreamURL: upstreamURL,
		corsOrigins: splitList(cfg.corsOrigins),
	})

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      cfg.requestTimeout + 5*time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "GraphQL facade listening on %s\n", base)
	fmt.Fprintf(stdout, "  GraphQL endpoint: %s/graphql\n", base)
	if cfg.playground {
		fmt.Fprintf(stdout, "  Playground:       %s/\n", base)
	}
	fmt.Fprintf(stdout, "  Upstream:         %s\n", upstreamURL)
	if demo != nil {
		fmt.Fprintf(stdout, "Demo credentials (paste as request headers):\n")
		fmt.Fprintf(stdout, "  Authorization: %s\n", demo.BasicAuth)
		fmt.Fprintf(stdout, "  Authorization: Bearer %s   (with service-network-id: %s)\n", demo.BearerToken, demo.NetworkID)
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// serverDeps are everything newServer needs.
type serverDeps struct {
	graphql     http.Handler
	playground  http.Handler // nil: no playground
	upstreamURL string
	corsOrigins []string
}

// newServer adds every route of the facade in one place.
func newServer(d serverDeps) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/graphql", d.graphql)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.Handle("GET /readyz", readyHandler(d.upstreamURL))
	if d.playground != nil {
		mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
		mux.Handle("GET /{$}", d.playground)
		mux.Handle("GET /playground/", d.playground)
	}
	if len(d.corsOrigins) == 0 {
		// rs/cors treats an empty allowlist as "*": with no origins
		// configured, browsers get same-origin only.
		return mux
	}
	c := cors.New(cors.Options{
		AllowedOrigins:   d.corsOrigins,
		AllowedMethods:   []string{http.MethodGet, http.MethodPost},
		AllowedHeaders:   []string{"Authorization", "Content-Type", "service-network-id", graph.TraceHeader, "X-Requested-With", "GraphQL-Require-Preflight", "Apollo-Require-Preflight", guard.RequestIDHeader},
		ExposedHeaders:   []string{guard.RequestIDHeader},
		AllowCredentials: true,
		MaxAge:           600,
	})
	return c.Handler(mux)
}

// readyHandler reports ready when the upstream answers HTTP at all: any
// status, even 401 for our credential-less probe, proves it is up.
func readyHandler(upstreamURL string) http.Handler {
	hc := &http.Client{Timeout: 2 * time.Second}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, strings.TrimSuffix(upstreamURL, "/")+"/resources/v1/00000000-0000-0000-0000-000000000000", nil)
		if err == nil {
			var resp *http.Response
			if resp, err = hc.Do(req); err == nil {
				resp.Body.Close()
				if resp.StatusCode >= 500 {
					err = fmt.Errorf("upstream answered %d", resp.StatusCode)
				}
			}
		}
		if err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": "the upstream REST API does not answer"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// demoQuery is the query the playground opens with in demo mode.
const demoQuery = `# Welcome to the Workspace Network GraphQL facade.
# The demo credentials are already in the Headers tab below: press Run.
query Dashboard($location: ID!) {
  location(id: $location) {
    products {
      title
      options { title price { money { amount currencyCode } } }
    }
    orders(first: 5) {
      nodes {
        number
        status
        product { title }
        option { title }
      }
    }
    transactions(first: 5) {
      nodes {
        amount
        currencyCode
        type
        status
        booking { resource { title capacity } }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}
`

func playgroundHandler(cfg *config, demo *restserver.DemoManifest) http.Handler {
	if !cfg.playground {
		return nil
	}
	pc := playground.Config{Title: "Workspace Network GraphQL", Endpoint: "/graphql"}
	if demo != nil {
		pc.DefaultHeaders = map[string]string{
			"Authorization":      "Bearer " + demo.BearerToken,
			"service-network-id": demo.NetworkID,
		}
		q := demoQuery
		if locs := demo.IDs["location"]; len(locs) > 0 {
			q = strings.Replace(q, "query Dashboard($location: ID!) {\n  location(id: $location) {",
				"query Dashboard {\n  location(id: \""+locs[0]+"\") {", 1)
		}
		pc.DefaultQuery = q
	}
	return playground.Handler(pc)
}

// embedded is the local REST service started in-process.
type embedded struct {
	url      string
	manifest *restserver.DemoManifest
	close    func()
}

func startEmbedded(ctx context.Context, cfg *config, logger *slog.Logger) (*embedded, error) {
	if err := os.MkdirAll(cfg.dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	rs, err := restserver.New(ctx, restserver.Config{
		DBPath:    filepath.Join(cfg.dataDir, "restserver.db"),
		DemoScale: cfg.demoScale,
		Logger:    logger.With("component", "restserver"),
	})
	if err != nil {
		return nil, fmt.Errorf("embedded REST service: %w", err)
	}
	manifest, err := rs.Manifest()
	if err != nil {
		rs.Close()
		return nil, fmt.Errorf("embedded REST service demo data: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		rs.Close()
		return nil, err
	}
	hs := &http.Server{Handler: rs.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	return &embedded{
		url:      "http://" + ln.Addr().String(),
		manifest: manifest,
		close: func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			hs.Shutdown(sctx)
			rs.Close()
		},
	}, nil
}
