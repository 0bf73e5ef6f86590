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
//	go run ./bench -live-query 200 # @live queries: update bytes, re-run calls, idle memory (livequery.go)
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
	f, err := parseFlags(args)
	if err != nil {
		return err
	}
	if f.replot {
		return replot(f)
	}
	// The facade in this process runs with the program's runtime settings.
	fmt.Fprintln(os.Stderr, "garbage collector:", stack.SetGC(os.Getenv))
	cfg, err := f.config()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if ran, err := runApart(ctx, f, cfg, args); ran {
		return err
	}
	res, err := Run(ctx, cfg)
	if err != nil {
		return err
	}
	res.Command = strings.TrimSpace("go run ./bench " + strings.Join(args, " "))
	switch {
	case cfg.LoadOnly:
		fmt.Print(loadTable(res.Load))
		return nil
	case cfg.CritPathOnly:
		fmt.Print(critPathTable(res))
		return nil
	case cfg.CostOnly || cfg.Only != nil || cfg.BatchedOnly:
		fmt.Print(costTable(res))
		return nil // a partial run is not a baseline: no file is written
	}
	return writeResults(f, res)
}

// flags is the command line of the benchmark.
type flags struct {
	quick                                     bool
	scale                                     int
	lats, conc, sweep, waits                  string
	dur, costDur, realDur                     time.Duration
	minN, refresh                             int
	out, plots, resultsPath                   string
	inProcess, costOnly, batchedOnly          bool
	only                                      string
	costRounds                                int
	cpuProfile, memProfile                    string
	replot                                    bool
	liveRun                                   bool
	liveQueryIdle                             int
	liveInterval                              time.Duration
	liveSubs, liveCreds, liveIdle, liveRounds int
	livePriority, obsRounds, deferRounds      int
	writeThrough                              int
	loadDur, loadLat                          time.Duration
	loadConc, loadTokens, loadRounds          int
	loadCompare, loadTailcall, loadProfile    string
	loadMem                                   bool
	loadMemProfile                            string
	loadOnly                                  bool
	critN                                     int
	critOnly                                  bool
	dashboards                                string
}

// parseFlags parses the command line (and sets withMetrics).
func parseFlags(args []string) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.BoolVar(&f.quick, "quick", false, "smoke run (~30 s): short runs, fewer concurrency levels")
	fs.IntVar(&f.scale, "scale", 1, "demo data scale")
	fs.StringVar(&f.lats, "latency", "0ms,20ms", "injected upstream latencies, comma-separated")
	fs.StringVar(&f.conc, "conc", "1,32", "concurrency levels of the per-query runs")
	fs.StringVar(&f.sweep, "sweep", "1,2,4,8,16,32,64", "concurrency levels of the dashboard sweep")
	fs.StringVar(&f.waits, "waits", "0,1ms,16ms", "loader batch waits tried on the dashboard")
	fs.DurationVar(&f.dur, "dur", 1500*time.Millisecond, "duration of each load run")
	fs.IntVar(&f.minN, "min-samples", 20, "minimum samples per load run (bounded by 4×dur)")
	fs.DurationVar(&f.costDur, "cost-dur", time.Second, "duration of each CPU/allocation run")
	fs.IntVar(&f.refresh, "refresh-rounds", 3, `rounds of the "refresh" scenario: 20 clients of one credential refreshing the dashboard every 5 s, cold then warm cache; 0 skips it`)
	fs.DurationVar(&f.realDur, "real-dur", 30*time.Second, `sustained run of the "real upstream" scenario (10 requests/s per client, 20 ms); 0 skips it`)
	fs.StringVar(&f.out, "out", "BENCHMARKS.md", "markdown file to update")
	fs.StringVar(&f.plots, "plots", "docs/bench", "directory for the PNG plots")
	fs.StringVar(&f.resultsPath, "results", "bench/results.json", "raw results (also the baseline of the next run)")
	fs.BoolVar(&f.inProcess, "in-process", false, "serve the REST service in this process (CPU figures then include it)")
	fs.BoolVar(&f.costOnly, "cost-only", false, "measure only the CPU and allocations per query (prints them; writes no file)")
	fs.StringVar(&f.only, "only", "", "comma-separated query names to run, without the sweep and scenarios (default: the whole suite)")
	fs.BoolVar(&f.batchedOnly, "batched-only", false, "skip the naive baseline")
	fs.IntVar(&f.costRounds, "cost-rounds", 1, "repeat each cost run this many times and keep the median CPU")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of each query's batched cost run to <prefix>.<query>.pprof (with -observability-overhead: of each configuration's last round, <prefix>.<configuration>.pprof)")
	fs.StringVar(&f.memProfile, "memprofile", "", "write an allocation profile of each query's batched cost run to <prefix>.<query>.pprof")
	fs.BoolVar(&f.replot, "replot", false, "measure nothing: redraw the plots and the markdown tables from -results")
	fs.BoolVar(&f.liveRun, "live", false, "measure only live data (live.go): polls per interval of -live-subscribers subscribers over two replicas on one Redis, event latency, -live-credentials credentials, interactive latency beside 5 sources, -live-idle idle subscribers' memory; prints a markdown section, writes nothing")
	fs.IntVar(&f.liveQueryIdle, "live-query", 0, "measure only @live queries (livequery.go): bytes of an update against the full result, REST calls of a re-run against a full run, heap of this many idle live dashboards; prints a markdown section, writes nothing")
	fs.DurationVar(&f.liveInterval, "live-interval", time.Second, "polling interval of the -live run")
	fs.IntVar(&f.liveSubs, "live-subscribers", 1000, "subscribers of one source in the -live run")
	fs.IntVar(&f.liveCreds, "live-credentials", 100, "credentials of one source each in the -live run; 0 skips it")
	fs.IntVar(&f.liveIdle, "live-idle", 10000, "idle subscribers on one replica in the -live run; 0 skips it")
	fs.IntVar(&f.liveRounds, "live-rounds", 10, "intervals each -live measurement lasts")
	fs.IntVar(&f.livePriority, "live-priority", 0, "measure only a polled object's query against an unpolled one's while this many sources of their client poll through two replicas on one Redis (livepriority.go); prints a table, writes nothing")
	fs.IntVar(&f.writeThrough, "write-through", 0, "measure only this many updateVisit and createCreditNote of one client through the facade until its own subscription's event, polls every 5 s, over two replicas on one Redis (writethrough.go); prints a table, writes nothing")
	fs.IntVar(&f.obsRounds, "observability-overhead", 0, "measure only the dashboard's CPU and allocations per query with no metrics nor tracing, metrics, tracing (100% sampled, discarding exporter) and both, alternating this many rounds; prints a table and the verdict against the observability targets (metrics under 3% of CPU, tracing off free), writes nothing")
	fs.IntVar(&f.deferRounds, "defer", 0, "measure only the dashboard with its transactions and credit notes deferred (multipart/mixed), and with its transactions' links and credit notes deferred (multipart/mixed 2022 and v0.2, SSE), against the whole answer, at 10 requests/s per client and 20 ms upstream latency, alternating this many rounds; prints a table, writes nothing")
	fs.DurationVar(&f.loadDur, "load-dur", 4*time.Second, "each run of the under-load measurement: the facade in a process of its own, -load-conc clients, its CPU per request (loadcpu.go); 0 skips it")
	fs.IntVar(&f.loadConc, "load-conc", 32, "clients of the under-load runs")
	fs.DurationVar(&f.loadLat, "load-latency", 5*time.Millisecond, "injected upstream latency of the under-load runs")
	fs.IntVar(&f.loadTokens, "load-tokens", 2000, "access tokens minted for the under-load runs with a new token per request (used in turn)")
	fs.StringVar(&f.loadCompare, "load-compare", "", "comma-separated facade program binaries (go build -o bin . at another commit) measured beside this build under load")
	fs.IntVar(&f.loadRounds, "load-rounds", 3, "interleaved rounds of each query measured under load on more than one server (this build and the floor, Tailcall or -load-compare's builds); the table gives medians")
	fs.StringVar(&f.loadTailcall, "load-compare-tailcall", "", "the Tailcall binary (or a script that execs it) measured beside this build and the floor under load on the resource and the orders, with a new token per request, configured by bench/tailcall.graphql (BENCHMARKS.md: how to install Tailcall 1.6.14)")
	fs.StringVar(&f.loadProfile, "load-cpuprofile", "", "write a CPU profile of this build's facade process over all the under-load runs to this file")
	fs.BoolVar(&f.loadMem, "load-mem", false, "break each facade process's peak RSS under load down: resident set (anonymous, file) of each, this build's runtime memory classes at its peak (loadmem.go)")
	fs.StringVar(&f.loadMemProfile, "load-memprofile", "", "with -load-mem: halfway through each run, write this build's facade's heap profile to <prefix>.<query>.<tokens>.heap.pprof and its goroutines to <prefix>.<query>.<tokens>.goroutine.txt")
	fs.BoolVar(&f.loadOnly, "load-only", false, "run only the under-load measurement (for the queries of -only); prints a table, writes no file")
	fs.IntVar(&f.critN, "critpath-n", 20, "traced requests of each query's critical-path decomposition (batched, concurrency 1, every latency); 0 skips it")
	fs.BoolVar(&f.critOnly, "critpath-only", false, "measure only the critical-path decomposition (for the queries of -only, at the latencies of -latency); prints a table, writes no file")
	fs.StringVar(&f.dashboards, "dashboards", "", `measure only K dashboards of one credential started together (each its own location) through the default budget against 10 requests/s per client and 20 ms, for each K of this comma list ("6,12"); prints a table, writes no file`)
	fs.BoolVar(&withMetrics, "metrics", false, "record the facade's Prometheus metrics (internal/policy/metrics) during every run, to measure their overhead")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return f, nil
}

// config is the suite's configuration the flags describe (-quick shortens
// every run).
func (f *flags) config() (Config, error) {
	cfg := Config{Scale: f.scale, Dur: f.dur, MinN: f.minN, CostDur: f.costDur, CostMinN: 20, RealDur: f.realDur, RefreshRounds: f.refresh, Child: !f.inProcess, Log: os.Stderr,
		CostOnly: f.costOnly, BatchedOnly: f.batchedOnly, CostRounds: f.costRounds, CPUProfile: f.cpuProfile, MemProfile: f.memProfile,
		Load: LoadCPU{Dur: f.loadDur, Conc: f.loadConc, Latency: f.loadLat, Tokens: max(f.loadTokens, 1), Rounds: f.loadRounds, Tailcall: f.loadTailcall, Profile: f.loadProfile,
			Mem: f.loadMem || f.loadMemProfile != "", MemProfile: f.loadMemProfile}, LoadOnly: f.loadOnly,
		CritPathN: f.critN, CritPathOnly: f.critOnly}
	if f.loadCompare != "" {
		cfg.Load.Compare = strings.Split(f.loadCompare, ",")
	}
	if cfg.CritPathOnly && cfg.CritPathN <= 0 {
		return cfg, fmt.Errorf("-critpath-only needs -critpath-n > 0")
	}
	if cfg.LoadOnly && cfg.Load.Dur <= 0 {
		return cfg, fmt.Errorf("-load-only needs -load-dur > 0")
	}
	if f.only != "" {
		cfg.Only = strings.Split(f.only, ",")
	}
	var err error
	if cfg.Latencies, err = parseDurations(f.lats); err != nil {
		return cfg, fmt.Errorf("-latency: %w", err)
	}
	if cfg.Waits, err = parseDurations(f.waits); err != nil {
		return cfg, fmt.Errorf("-waits: %w", err)
	}
	if cfg.Conc, err = parseInts(f.conc); err != nil {
		return cfg, fmt.Errorf("-conc: %w", err)
	}
	if cfg.Sweep, err = parseInts(f.sweep); err != nil {
		return cfg, fmt.Errorf("-sweep: %w", err)
	}
	if f.quick {
		cfg.Dur, cfg.MinN, cfg.CostDur, cfg.CostMinN = 250*time.Millisecond, 5, 200*time.Millisecond, 5
		cfg.Sweep = []int{1, 8, 32}
		cfg.RealDur = min(cfg.RealDur, 6*time.Second)
		cfg.RefreshRounds = min(cfg.RefreshRounds, 2)
		cfg.Load.Dur, cfg.Load.Tokens = min(cfg.Load.Dur, 500*time.Millisecond), min(cfg.Load.Tokens, 200)
	}
	return cfg, nil
}

// replot redraws the plots and the markdown tables from -results.
func replot(f *flags) error {
	b, err := os.ReadFile(f.resultsPath)
	if err != nil {
		return err
	}
	res := new(Results)
	if err := json.Unmarshal(b, res); err != nil {
		return fmt.Errorf("%s: %w", f.resultsPath, err)
	}
	if err := os.MkdirAll(f.plots, 0o755); err != nil {
		return err
	}
	files, err := writePlots(res, f.plots)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	return writeMarkdown(f.out, markdown(res, nil, files))
}

// runApart runs the measurement the flags ask for instead of the suite
// (-dashboards, -defer, -write-through, -live-priority, -live, -observability-overhead),
// printing its table; ran is false when they ask for none.
func runApart(ctx context.Context, f *flags, cfg Config, args []string) (ran bool, err error) {
	header := func() {
		fmt.Printf("`go run ./bench %s` on %s, %s\n\n", strings.Join(args, " "), machine(), time.Now().UTC().Format("2006-01-02 15:04 MST"))
	}
	switch {
	case f.dashboards != "":
		ks, err := parseInts(f.dashboards)
		if err != nil {
			return true, fmt.Errorf("-dashboards: %w", err)
		}
		header()
		fmt.Println("| dashboards | upstream calls | calls ÷ 10/s | p50 | p95 | p99 | slowest | failed | most calls in a rolling second | 429 | first error |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
		for _, k := range ks {
			if err := dashboardsRun(ctx, cfg, k, os.Stdout); err != nil {
				return true, err
			}
		}
		return true, nil
	case f.deferRounds > 0:
		r, err := deferredDashboards(ctx, cfg, f.deferRounds) // deferbench.go
		if err != nil {
			return true, err
		}
		header()
		r.Print(os.Stdout)
		return true, nil
	case f.writeThrough > 0:
		return true, runWriteThrough(ctx, f.writeThrough) // writethrough.go
	case f.livePriority > 0:
		return true, runLivePriority(ctx, f.livePriority, 4*f.liveRounds) // livepriority.go
	case f.liveQueryIdle > 0:
		return true, runLiveQuery(ctx, f.liveQueryIdle) // livequery.go
	case f.liveRun:
		return true, runLive(ctx, f.liveInterval, f.liveSubs, f.liveCreds, f.liveIdle, f.liveRounds) // live.go
	case f.obsRounds > 0:
		o, err := observabilityOverhead(ctx, cfg, f.obsRounds) // observability.go
		if err != nil {
			return true, err
		}
		header()
		o.Print(os.Stdout)
		return true, nil
	}
	return false, nil
}

// writeResults writes a whole run: the plots, BENCHMARKS.md's generated part
// (with the changes since the previous results) and the results.
func writeResults(f *flags, res *Results) error {
	var prev *Results
	if b, err := os.ReadFile(f.resultsPath); err == nil {
		prev = new(Results)
		if json.Unmarshal(b, prev) != nil {
			prev = nil
		}
	}
	if err := os.MkdirAll(f.plots, 0o755); err != nil {
		return err
	}
	files, err := writePlots(res, f.plots)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	if err := writeMarkdown(f.out, markdown(res, prev, files)); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.MkdirAll(filepath.Dir(f.resultsPath), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(f.resultsPath, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s, %s/{%s}, %s in %.0f s\n", f.out, f.plots, strings.Join(files, ","), f.resultsPath, res.ElapsedSec)
	return nil
}
