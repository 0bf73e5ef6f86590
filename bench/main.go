// Command bench measures the GraphQL facade against the local REST service:
// upstream calls per query against the minimum the data requires, latency
// (p50/p95/p99) at several concurrencies against the critical-path bound,
// throughput, the facade's CPU time and allocations per query, and peak RSS,
// each for the facade as built (batched, embedded-first) and for a naive
// baseline (one upstream call per field). It writes the tables into
// BENCHMARKS.md, PNG plots into docs/bench/, and the raw results into
// bench/results.json (the next run reports CPU and allocation changes
// against it).
//
//	go run ./bench            # full run, about 2 minutes on 2 cores
//	go run ./bench -quick     # smoke run, about 30 seconds
//	go run ./bench -replot    # redraw plots and tables from bench/results.json
//	go run ./bench -defer 10  # the dashboard with slow parts deferred: first and last payload against the whole answer
//	go run ./bench -observability-overhead 5  # dashboard CPU per query: baseline, metrics, tracing, both
//	go run ./bench -load-only -only resource,orders  # facade CPU per request and requests/s under load, ÷ the floor's (bench/floor)
//	go run ./bench -load-only -only resource,orders -load-compare /tmp/facade-old  # the same beside another build
//	go run ./bench -load-only -only resource,orders -scale 4 -load-compare-tailcall /tmp/tailcall/tailcall  # beside Tailcall (a Rust gateway)
//	go run ./bench -live      # live data: polls, event latency, memory (live.go)
//	go run ./bench -quick -metrics -out /tmp/m.md -results /tmp/m.json  # with Prometheus metrics recorded
//
// Everything runs on loopback: the REST service in a child process (this
// binary re-executed), the facade and the load generator in this one. The
// bench stops by itself; the child exits when this process does.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/workspacenet/facade/stack"
)

func main() {
	if maybeServeUpstream() || maybeServeFacade() || maybeServeFloor() || maybeServeLiveFacade() {
		return
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func parseDurations(s string) ([]time.Duration, error) {
	var out []time.Duration
	for f := range strings.SplitSeq(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func run(args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	quick := fs.Bool("quick", false, "smoke run (~30 s): short runs, fewer concurrency levels")
	scale := fs.Int("scale", 1, "demo data scale")
	lats := fs.String("latency", "0ms,20ms", "injected upstream latencies, comma-separated")
	conc := fs.String("conc", "1,32", "concurrency levels of the per-query runs")
	sweep := fs.String("sweep", "1,2,4,8,16,32,64", "concurrency levels of the dashboard sweep")
	waits := fs.String("waits", "0,1ms,16ms", "loader batch waits tried on the dashboard")
	dur := fs.Duration("dur", 1500*time.Millisecond, "duration of each load run")
	minN := fs.Int("min-samples", 20, "minimum samples per load run (bounded by 4×dur)")
	costDur := fs.Duration("cost-dur", time.Second, "duration of each CPU/allocation run")
	refresh := fs.Int("refresh-rounds", 3, `rounds of the "refresh" scenario: 20 clients of one credential refreshing the dashboard every 5 s, cold then warm cache; 0 skips it`)
	realDur := fs.Duration("real-dur", 30*time.Second, `sustained run of the "real upstream" scenario (10 requests/s per client, 20 ms); 0 skips it`)
	out := fs.String("out", "BENCHMARKS.md", "markdown file to update")
	plots := fs.String("plots", "docs/bench", "directory for the PNG plots")
	resultsPath := fs.String("results", "bench/results.json", "raw results (also the baseline of the next run)")
	inProcess := fs.Bool("in-process", false, "serve the REST service in this process (CPU figures then include it)")
	costOnly := fs.Bool("cost-only", false, "measure only the CPU and allocations per query (prints them; writes no file)")
	only := fs.String("only", "", "comma-separated query names to run, without the sweep and scenarios (default: the whole suite)")
	batchedOnly := fs.Bool("batched-only", false, "skip the naive baseline")
	costRounds := fs.Int("cost-rounds", 1, "repeat each cost run this many times and keep the median CPU")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of each query's batched cost run to <prefix>.<query>.pprof (with -observability-overhead: of each configuration's last round, <prefix>.<configuration>.pprof)")
	memProfile := fs.String("memprofile", "", "write an allocation profile of each query's batched cost run to <prefix>.<query>.pprof")
	replot := fs.Bool("replot", false, "measure nothing: redraw the plots and the markdown tables from -results")
	liveRun := fs.Bool("live", false, "measure only live data (live.go): polls per interval of -live-subscribers subscribers over two replicas on one Redis, event latency, -live-credentials credentials, interactive latency beside 5 sources, -live-idle idle subscribers' memory; prints a markdown section, writes nothing")
	liveInterval := fs.Duration("live-interval", time.Second, "polling interval of the -live run")
	liveSubs := fs.Int("live-subscribers", 1000, "subscribers of one source in the -live run")
	liveCreds := fs.Int("live-credentials", 100, "credentials of one source each in the -live run; 0 skips it")
	liveIdle := fs.Int("live-idle", 10000, "idle subscribers on one replica in the -live run; 0 skips it")
	liveRounds := fs.Int("live-rounds", 10, "intervals each -live measurement lasts")
	livePriority := fs.Int("live-priority", 0, "measure only a polled object's query against an unpolled one's while this many sources of their client poll through two replicas on one Redis (livepriority.go); prints a table, writes nothing")
	obsRounds := fs.Int("observability-overhead", 0, "measure only the dashboard's CPU and allocations per query with no metrics nor tracing, metrics, tracing (100% sampled, discarding exporter) and both, alternating this many rounds; prints a table and the verdict against the observability targets (metrics under 3% of CPU, tracing off free), writes nothing")
	deferRounds := fs.Int("defer", 0, "measure only the dashboard with its transactions and credit notes deferred (multipart/mixed), and with its transactions' links and credit notes deferred (multipart/mixed 2022 and v0.2, SSE), against the whole answer, at 10 requests/s per client and 20 ms upstream latency, alternating this many rounds; prints a table, writes nothing")
	loadDur := fs.Duration("load-dur", 4*time.Second, "each run of the under-load measurement: the facade in a process of its own, -load-conc clients, its CPU per request (loadcpu.go); 0 skips it")
	loadConc := fs.Int("load-conc", 32, "clients of the under-load runs")
	loadLat := fs.Duration("load-latency", 5*time.Millisecond, "injected upstream latency of the under-load runs")
	loadTokens := fs.Int("load-tokens", 2000, "access tokens minted for the under-load runs with a new token per request (used in turn)")
	loadCompare := fs.String("load-compare", "", "comma-separated facade program binaries (go build -o bin . at another commit) measured beside this build under load")
	loadRounds := fs.Int("load-rounds", 3, "interleaved rounds of each query measured under load on more than one server (this build and the floor, Tailcall or -load-compare's builds); the table gives medians")
	loadTailcall := fs.String("load-compare-tailcall", "", "the Tailcall binary (or a script that execs it) measured beside this build and the floor under load on the resource and the orders, with a new token per request, configured by bench/tailcall.graphql (BENCHMARKS.md: how to install Tailcall 1.6.14)")
	loadProfile := fs.String("load-cpuprofile", "", "write a CPU profile of this build's facade process over all the under-load runs to this file")
	loadMem := fs.Bool("load-mem", false, "break each facade process's peak RSS under load down: resident set (anonymous, file) of each, this build's runtime memory classes at its peak (loadmem.go)")
	loadMemProfile := fs.String("load-memprofile", "", "with -load-mem: halfway through each run, write this build's facade's heap profile to <prefix>.<query>.<tokens>.heap.pprof and its goroutines to <prefix>.<query>.<tokens>.goroutine.txt")
	loadOnly := fs.Bool("load-only", false, "run only the under-load measurement (for the queries of -only); prints a table, writes no file")
	critN := fs.Int("critpath-n", 20, "traced requests of each query's critical-path decomposition (batched, concurrency 1, every latency); 0 skips it")
	critOnly := fs.Bool("critpath-only", false, "measure only the critical-path decomposition (for the queries of -only, at the latencies of -latency); prints a table, writes no file")
	dashboards := fs.String("dashboards", "", `measure only K dashboards of one credential started together (each its own location) through the default budget against 10 requests/s per client and 20 ms, for each K of this comma list ("6,12"); prints a table, writes no file`)
	fs.BoolVar(&withMetrics, "metrics", false, "record the facade's Prometheus metrics (internal/policy/metrics) during every run, to measure their overhead")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *replot {
		b, err := os.ReadFile(*resultsPath)
		if err != nil {
			return err
		}
		res := new(Results)
		if err := json.Unmarshal(b, res); err != nil {
			return fmt.Errorf("%s: %w", *resultsPath, err)
		}
		if err := os.MkdirAll(*plots, 0o755); err != nil {
			return err
		}
		files, err := writePlots(res, *plots)
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		return writeMarkdown(*out, markdown(res, nil, files))
	}
	// The facade in this process runs with the program's runtime settings.
	fmt.Fprintln(os.Stderr, "garbage collector:", stack.SetGC(os.Getenv))
	cfg := Config{Scale: *scale, Dur: *dur, MinN: *minN, CostDur: *costDur, CostMinN: 20, RealDur: *realDur, RefreshRounds: *refresh, Child: !*inProcess, Log: os.Stderr,
		CostOnly: *costOnly, BatchedOnly: *batchedOnly, CostRounds: *costRounds, CPUProfile: *cpuProfile, MemProfile: *memProfile,
		Load: LoadCPU{Dur: *loadDur, Conc: *loadConc, Latency: *loadLat, Tokens: max(*loadTokens, 1), Rounds: *loadRounds, Tailcall: *loadTailcall, Profile: *loadProfile,
			Mem: *loadMem || *loadMemProfile != "", MemProfile: *loadMemProfile}, LoadOnly: *loadOnly,
		CritPathN: *critN, CritPathOnly: *critOnly}
	if *loadCompare != "" {
		cfg.Load.Compare = strings.Split(*loadCompare, ",")
	}
	if cfg.CritPathOnly && cfg.CritPathN <= 0 {
		return fmt.Errorf("-critpath-only needs -critpath-n > 0")
	}
	if cfg.LoadOnly && cfg.Load.Dur <= 0 {
		return fmt.Errorf("-load-only needs -load-dur > 0")
	}
	if *only != "" {
		cfg.Only = strings.Split(*only, ",")
	}
	var err error
	if cfg.Latencies, err = parseDurations(*lats); err != nil {
		return fmt.Errorf("-latency: %w", err)
	}
	if cfg.Waits, err = parseDurations(*waits); err != nil {
		return fmt.Errorf("-waits: %w", err)
	}
	if cfg.Conc, err = parseInts(*conc); err != nil {
		return fmt.Errorf("-conc: %w", err)
	}
	if cfg.Sweep, err = parseInts(*sweep); err != nil {
		return fmt.Errorf("-sweep: %w", err)
	}
	if *quick {
		cfg.Dur, cfg.MinN, cfg.CostDur, cfg.CostMinN = 250*time.Millisecond, 5, 200*time.Millisecond, 5
		cfg.Sweep = []int{1, 8, 32}
		cfg.RealDur = min(cfg.RealDur, 6*time.Second)
		cfg.RefreshRounds = min(cfg.RefreshRounds, 2)
		cfg.Load.Dur, cfg.Load.Tokens = min(cfg.Load.Dur, 500*time.Millisecond), min(cfg.Load.Tokens, 200)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *dashboards != "" {
		ks, err := parseInts(*dashboards)
		if err != nil {
			return fmt.Errorf("-dashboards: %w", err)
		}
		fmt.Printf("`go run ./bench %s` on %s, %s\n\n", strings.Join(args, " "), machine(), time.Now().UTC().Format("2006-01-02 15:04 MST"))
		fmt.Println("| dashboards | upstream calls | calls ÷ 10/s | p50 | p95 | p99 | slowest | failed | most calls in a rolling second | 429 | first error |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
		for _, k := range ks {
			if err := dashboardsRun(ctx, cfg, k, os.Stdout); err != nil {
				return err
			}
		}
		return nil
	}
	if *deferRounds > 0 {
		r, err := deferredDashboards(ctx, cfg, *deferRounds) // deferbench.go
		if err != nil {
			return err
		}
		fmt.Printf("`go run ./bench %s` on %s, %s\n\n", strings.Join(args, " "), machine(), time.Now().UTC().Format("2006-01-02 15:04 MST"))
		r.Print(os.Stdout)
		return nil
	}
	if *livePriority > 0 {
		return runLivePriority(ctx, *livePriority, 4**liveRounds) // livepriority.go
	}
	if *liveRun {
		return runLive(ctx, *liveInterval, *liveSubs, *liveCreds, *liveIdle, *liveRounds) // live.go
	}
	if *obsRounds > 0 {
		o, err := observabilityOverhead(ctx, cfg, *obsRounds) // observability.go
		if err != nil {
			return err
		}
		fmt.Printf("`go run ./bench %s` on %s, %s\n\n", strings.Join(args, " "), machine(), time.Now().UTC().Format("2006-01-02 15:04 MST"))
		o.Print(os.Stdout)
		return nil
	}

	res, err := Run(ctx, cfg)
	if err != nil {
		return err
	}
	res.Command = strings.TrimSpace("go run ./bench " + strings.Join(args, " "))
	if cfg.LoadOnly {
		fmt.Print(loadTable(res.Load))
		return nil
	}
	if cfg.CritPathOnly {
		fmt.Print(critPathTable(res))
		return nil
	}
	if cfg.CostOnly || cfg.Only != nil || cfg.BatchedOnly {
		fmt.Print(costTable(res))
		return nil // a partial run is not a baseline: no file is written
	}

	var prev *Results
	if b, err := os.ReadFile(*resultsPath); err == nil {
		prev = new(Results)
		if json.Unmarshal(b, prev) != nil {
			prev = nil
		}
	}
	if err := os.MkdirAll(*plots, 0o755); err != nil {
		return err
	}
	files, err := writePlots(res, *plots)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	if err := writeMarkdown(*out, markdown(res, prev, files)); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.MkdirAll(filepath.Dir(*resultsPath), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(*resultsPath, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s, %s/{%s}, %s in %.0f s\n", *out, *plots, strings.Join(files, ","), *resultsPath, res.ElapsedSec)
	return nil
}
