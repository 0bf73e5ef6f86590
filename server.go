// Command facade serves the GraphQL facade over the Workspace Network Service
// REST API. With no upstream URL configured it starts the local REST service
// in-process on demo data, so `go run .` is a working playground.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/workspacenet/facade/internal/base/tracing"
	"github.com/workspacenet/facade/stack"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "facade:", err)
		os.Exit(1)
	}
}

// run starts the facade configured by args and the environment (stack.ParseFlags)
// and serves until ctx ends, then shuts down gracefully.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := stack.ParseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	stack.RouteStdLog(logger)
	logger.Info("garbage collector", "pacing", stack.SetGC(getenv))
	// Traces go where the standard OTEL_* variables say; none set: off.
	tp, err := tracing.FromEnv(ctx, getenv)
	if err != nil {
		return err
	}
	if tp != nil {
		cfg.TracerProvider, cfg.UpstreamTracerProvider = tp.Facade, tp.Upstream
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tp.Shutdown(sctx); err != nil {
				logger.Warn("flushing traces", "err", err)
			}
		}()
	}
	st, err := stack.Start(ctx, cfg, logger)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		st.Close()
		return err
	}
	printBanner(stdout, "http://"+ln.Addr().String(), st)
	if demo := st.Embedded; demo != nil && cfg.DemoActivity > 0 && demo.Manifest.ActivityLocation() != "" {
		actx, stop := context.WithCancel(ctx)
		defer stop()
		go demo.Server.Activity(actx, demo.Manifest.ActivityLocation(), cfg.DemoActivity)
	}

	errc := make(chan error, 1)
	go func() { errc <- st.Serve(ln) }()
	select {
	case err := <-errc:
		st.Close()
		return err
	case <-ctx.Done():
	}
	if d := cfg.ShutdownDelay; d > 0 {
		st.Drain()
		logger.Info("draining: /readyz answers 503 and connections close after each response", "shutdown_delay", d.String())
		time.Sleep(d)
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := st.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

func printBanner(w io.Writer, base string, st *stack.Stack) {
	fmt.Fprintf(w, "GraphQL facade listening on %s\n", base)
	fmt.Fprintf(w, "  GraphQL endpoint: %s/graphql\n", base)
	if st.Config.Playground {
		fmt.Fprintf(w, "  Playground:       %s/\n", base)
	}
	fmt.Fprintf(w, "  Upstream:         %s\n", st.UpstreamURL)
	if st.Redis != nil {
		fmt.Fprintf(w, "  Shared state:     %s\n", st.Redis)
	}
	if st.MetricsURL != "" {
		fmt.Fprintf(w, "  Metrics:          %s\n", st.MetricsURL)
	}
	if demo := st.Embedded; demo != nil {
		if dir := st.Config.DataDir; dir != "" {
			fmt.Fprintf(w, "  Demo data:        %s (to reset: stop, delete it, start again)\n", filepath.Clean(dir))
		}
		if st.Config.DemoTestEndpoints {
			fmt.Fprintf(w, "  Test endpoints:   %s/_test/{table}/{id}/set and .../copy, %s/_stats (docs/live-data.md; -demo-test-endpoints=false turns them off)\n", demo.URL, demo.URL)
		} else {
			fmt.Fprintf(w, "  Test endpoints:   off\n")
		}
		if d, loc := st.Config.DemoActivity, demo.Manifest.ActivityLocation(); d > 0 && loc != "" {
			fmt.Fprintf(w, "  Demo activity:    every %v a new order, a new payment or a payment succeeding in location %s, which no documented example reads (-demo-activity 0 stops it)\n", d, loc)
		}
		fmt.Fprintf(w, "Demo credentials (paste as request headers):\n")
		fmt.Fprintf(w, "  Authorization: %s\n", demo.Manifest.BasicAuth)
		fmt.Fprintf(w, "  Authorization: Bearer %s   (with service-network-id: %s)\n", demo.Manifest.BearerToken, demo.Manifest.NetworkID)
		fmt.Fprintf(w, "  Authorization: Bearer %s   (read-only; with service-network-id: %s)\n", demo.Manifest.ReadonlyBearerToken, demo.Manifest.NetworkID)
	}
}
