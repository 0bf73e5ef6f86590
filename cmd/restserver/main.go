// Command restserver runs the local Workspace Network Service REST API on
// SQLite, with deterministic demo data.
//
//	go run ./cmd/restserver                 # serve on 127.0.0.1:8081, data in ./data/restserver/restserver.db
//	go run ./cmd/restserver -demo-manifest  # print the demo credentials and ids as JSON
//
// Flags (environment variables in brackets):
//
//	-addr ADDR        listen address [RESTSERVER_ADDR], default 127.0.0.1:8081
//	-db PATH          SQLite file, ":memory:" for a throw-away database [RESTSERVER_DB], default ./data/restserver/restserver.db
//	-demo-scale N     demo data scale when the database is empty, 0 = none [RESTSERVER_DEMO_SCALE], default 1
//	-latency SPEC     injected latency, e.g. "*=20ms+5ms" (repeatable) [RESTSERVER_LATENCY]
//	-fault SPEC       injected faults, e.g. "GET /resources/v1/{id}=503@0.5" (repeatable) [RESTSERVER_FAULT]
//	-rate-limit N     requests per second per client, as the real API (10); above it 429 [RESTSERVER_RATE_LIMIT], default 0 = off
//	-rate-limit-no-retry-after   answer those 429s without Retry-After [RESTSERVER_RATE_LIMIT_NO_RETRY_AFTER]
//	-test-endpoints   serve GET/DELETE /_stats and POST /_stats/reset (off: 404) [RESTSERVER_TEST_ENDPOINTS]
//	-metrics-addr ADDR  serve Prometheus metrics at http://ADDR/metrics, a listener of its own [RESTSERVER_METRICS_ADDR], default off
//	-demo-manifest    print the demo manifest JSON and exit
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
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/workspacenet/facade/internal/base/tracing"
	"github.com/workspacenet/facade/internal/policy/metrics"
	"github.com/workspacenet/facade/restserver"
	"github.com/workspacenet/facade/restserver/hooks"
)

// defaultDB is the service's SQLite file: a directory of its own beside the
// facade's data/facade/ (`go run .`), so the documented REST examples never
// change the data behind its GraphQL examples. Delete it to reset the demo.
const defaultDB = "./data/restserver/restserver.db"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "restserver:", err)
		os.Exit(1)
	}
}

// run parses args, opens the service and serves until ctx ends. With
// -demo-manifest it prints the manifest and returns. Once listening it
// writes "listening on http://ADDR" to stderr.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	if o.dbPath != ":memory:" {
		if err := os.MkdirAll(filepath.Dir(o.dbPath), 0o755); err != nil {
			return err
		}
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	tp, logger, shutdown, err := serviceTracing(ctx, getenv, logger)
	if err != nil {
		return err
	}
	defer shutdown()
	cfg := restserver.Config{DBPath: o.dbPath, DemoScale: o.scale, Logger: logger, Hooks: o.hooks,
		RateLimit: hooks.RateLimit{PerSecond: o.rateLimit, OmitRetryAfter: o.noRetryAfter}, TestEndpoints: o.testEndpoints,
		TracerProvider: tp}
	var reg *prometheus.Registry
	if o.metricsAddr != "" && !o.manifest {
		reg = metrics.NewRegistry()
		cfg.Instrument = metrics.NewRESTServer(reg).Instrument
	}
	srv, err := restserver.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	if o.manifest {
		return printManifest(srv, stdout)
	}
	return serve(ctx, srv, o, reg, logger, stderr)
}

// options are the service's flags, parsed.
type options struct {
	addr, dbPath, metricsAddr string
	scale, rateLimit          int
	noRetryAfter              bool
	testEndpoints, manifest   bool
	hooks                     *hooks.Hooks // with the -latency and -fault specs
}

// parseFlags parses args, each flag's default from its environment
// variable (a malformed one is an error naming it).
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (*options, error) {
	envOr := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	o := &options{hooks: hooks.New()}
	h := o.hooks
	fs := flag.NewFlagSet(filepath.Base(args[0]), flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", envOr("RESTSERVER_ADDR", "127.0.0.1:8081"), "listen address [RESTSERVER_ADDR]")
	fs.StringVar(&o.dbPath, "db", envOr("RESTSERVER_DB", defaultDB), `SQLite database file, ":memory:" for a throw-away one [RESTSERVER_DB]`)
	scaleDef, err := strconv.Atoi(envOr("RESTSERVER_DEMO_SCALE", "1"))
	if err != nil {
		return nil, fmt.Errorf("RESTSERVER_DEMO_SCALE: %w", err)
	}
	fs.IntVar(&o.scale, "demo-scale", scaleDef, "demo data scale when the database is empty; 0 = no demo data [RESTSERVER_DEMO_SCALE]")
	rateDef, err := strconv.Atoi(envOr("RESTSERVER_RATE_LIMIT", "0"))
	if err != nil {
		return nil, fmt.Errorf("RESTSERVER_RATE_LIMIT: %w", err)
	}
	fs.IntVar(&o.rateLimit, "rate-limit", rateDef, "requests per second per client (the real API allows 10); above it 429; 0 = off [RESTSERVER_RATE_LIMIT]")
	fs.BoolVar(&o.noRetryAfter, "rate-limit-no-retry-after", getenv("RESTSERVER_RATE_LIMIT_NO_RETRY_AFTER") == "true",
		"answer rate-limited requests without Retry-After, as the real API may [RESTSERVER_RATE_LIMIT_NO_RETRY_AFTER]")
	testDef := false
	if v := getenv("RESTSERVER_TEST_ENDPOINTS"); v != "" {
		if testDef, err = strconv.ParseBool(v); err != nil {
			return nil, fmt.Errorf("RESTSERVER_TEST_ENDPOINTS: %w", err)
		}
	}
	fs.BoolVar(&o.testEndpoints, "test-endpoints", testDef,
		"serve the test-only endpoints: GET /_stats (request counters), DELETE /_stats and POST /_stats/reset; off they answer 404 [RESTSERVER_TEST_ENDPOINTS]")
	fs.StringVar(&o.metricsAddr, "metrics-addr", getenv("RESTSERVER_METRICS_ADDR"), "listen address of the Prometheus /metrics endpoint; empty = off [RESTSERVER_METRICS_ADDR]")
	fs.BoolVar(&o.manifest, "demo-manifest", false, "print the demo manifest (credentials and ids) as JSON and exit")
	fs.Var(h.LatencyFlag(), "latency", `injected latency, e.g. "*=20ms+5ms" or "GET /resources/v1/{id}=50ms" (repeatable) [RESTSERVER_LATENCY]`)
	fs.Var(h.FaultFlag(), "fault", `injected faults, e.g. "GET /resources/v1/{id}=503@0.5" or "*=429@0.1:2s" (repeatable) [RESTSERVER_FAULT]`)
	if v := getenv("RESTSERVER_LATENCY"); v != "" {
		if err := h.ApplyLatencySpec(v); err != nil {
			return nil, fmt.Errorf("RESTSERVER_LATENCY: %w", err)
		}
	}
	if v := getenv("RESTSERVER_FAULT"); v != "" {
		if err := h.ApplyFaultSpec(v); err != nil {
			return nil, fmt.Errorf("RESTSERVER_FAULT: %w", err)
		}
	}
	if err := fs.Parse(args[1:]); err != nil {
		return nil, err
	}
	if o.rateLimit < 0 {
		return nil, fmt.Errorf("-rate-limit: %d is negative (0 = off)", o.rateLimit)
	}
	return o, nil
}

// serviceTracing sets up traces as the facade's (docs/operating.md,
// Traces): OTEL_* names the exporter; the service reports as
// workspace-network-service unless OTEL_SERVICE_NAME says otherwise. It
// returns the service's tracer provider (nil: none), logger (with trace
// ids, when tracing) and what flushes the traces at the end.
func serviceTracing(ctx context.Context, getenv func(string) string, logger *slog.Logger) (trace.TracerProvider, *slog.Logger, func(), error) {
	providers, err := tracing.FromEnv(ctx, getenv)
	if err != nil || providers == nil {
		return nil, logger, func() {}, err
	}
	tp := providers.Upstream
	if getenv("OTEL_SERVICE_NAME") != "" {
		tp = providers.Facade
	}
	shutdown := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = providers.Shutdown(sctx)
	}
	return tp, slog.New(tracing.LogHandler(logger.Handler())), shutdown, nil
}

// printManifest writes the demo manifest as indented JSON.
func printManifest(srv *restserver.Server, stdout io.Writer) error {
	m, err := srv.Manifest()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}

// serve serves srv on o.addr, and the metrics of reg (nil: none) on
// o.metricsAddr, until ctx ends; then it shuts down, waiting up to 10 s for
// requests in progress.
func serve(ctx context.Context, srv *restserver.Server, o *options, reg *prometheus.Registry, logger *slog.Logger, stderr io.Writer) error {
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      2 * time.Minute, // injected latency and hangs must fit
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	metricsNote := ""
	if reg != nil {
		ms, err := metrics.Listen(o.metricsAddr, reg, logger)
		if err != nil {
			ln.Close()
			return fmt.Errorf("-metrics-addr: %w", err)
		}
		defer ms.Shutdown(context.Background())
		metricsNote = ", metrics " + ms.URL()
	}
	fmt.Fprintf(stderr, "listening on http://%s (database %s%s)\n", ln.Addr(), o.dbPath, metricsNote)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		hs.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
