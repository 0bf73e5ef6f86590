package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/workspacenet/facade/internal/budget"
	"github.com/workspacenet/facade/internal/gqlclient"
	"github.com/workspacenet/facade/internal/stack"
)

// traceOverhead is `go run ./bench -trace-overhead`: the dashboard's CPU and
// allocations per query through the facade's handler with tracing off (no
// tracer provider, as when no OTEL_* exporter is set) and on (every request
// sampled: a server span, loader and upstream client spans, traceparent on
// each upstream request, batched to an exporter that discards them in this
// process). Runs alternate off/on `rounds` times; the medians are printed.
// Nothing is written to BENCHMARKS.md or results.json.
func traceOverhead(ctx context.Context, cfg Config, rounds int) error {
	start := startUpstreamInProcess
	if cfg.Child {
		start = startUpstreamChild
	}
	up, err := start(cfg.Scale)
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	defer up.Close()
	who := gqlclient.Credentials("Bearer "+up.manifest.BearerToken, up.manifest.NetworkID)
	fx, err := findFixtures(ctx, up, who)
	if err != nil {
		return err
	}
	dash := suite(fx)[0]
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	handler := func(tp trace.TracerProvider) (http.Handler, func(), error) {
		c := stack.DefaultConfig()
		c.Upstream, c.Playground = up.url, false
		c.Budget, c.CacheTTL = budget.Config{}, "" // the facade's own work, every call made
		c.TracerProvider = tp
		st, err := stack.Start(ctx, c, nil)
		if err != nil {
			return nil, nil, err
		}
		return st.Handler, func() { _ = st.Close() }, nil
	}
	var off, on []Cost
	for r := range rounds {
		for _, traced := range []bool{false, true} {
			var p trace.TracerProvider
			if traced {
				p = tp
			}
			h, done, err := handler(p)
			if err != nil {
				return err
			}
			c, err := costRun(h, who, dash, cfg.CostDur, cfg.CostMinN)
			done()
			if err != nil {
				return fmt.Errorf("dashboard (tracing %v): %w", traced, err)
			}
			if traced {
				on = append(on, c)
			} else {
				off = append(off, c)
			}
			cfg.logf("round %d tracing %-5v %.3f ms CPU, %.0f allocs, %.1f KB per query (n=%d)", r+1, traced, c.CPUMsPerQuery, c.AllocsPerQ, c.KBPerQuery, c.N)
		}
	}
	mOff, mOn := medianCost(off), medianCost(on)
	fmt.Printf("dashboard per query, median of %d runs each (upstream in a child process: %v)\n", rounds, cfg.Child)
	fmt.Printf("%-12s %10s %10s %10s\n", "tracing", "CPU ms", "allocs", "KB")
	fmt.Printf("%-12s %10.3f %10.0f %10.1f\n", "off", mOff.CPUMsPerQuery, mOff.AllocsPerQ, mOff.KBPerQuery)
	fmt.Printf("%-12s %10.3f %10.0f %10.1f\n", "on (100%)", mOn.CPUMsPerQuery, mOn.AllocsPerQ, mOn.KBPerQuery)
	fmt.Printf("%-12s %+9.1f%% %+9.1f%% %+9.1f%%\n", "on vs off", change(mOn.CPUMsPerQuery, mOff.CPUMsPerQuery),
		change(mOn.AllocsPerQ, mOff.AllocsPerQ), change(mOn.KBPerQuery, mOff.KBPerQuery))
	return nil
}

// medianCost is the per-field median of cs.
func medianCost(cs []Cost) Cost {
	med := func(f func(Cost) float64) float64 {
		v := make([]float64, len(cs))
		for i, c := range cs {
			v[i] = f(c)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return Cost{
		CPUMsPerQuery: med(func(c Cost) float64 { return c.CPUMsPerQuery }),
		AllocsPerQ:    med(func(c Cost) float64 { return c.AllocsPerQ }),
		KBPerQuery:    med(func(c Cost) float64 { return c.KBPerQuery }),
	}
}

func change(a, b float64) float64 { return (a/b - 1) * 100 }
