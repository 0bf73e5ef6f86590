package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/workspacenet/facade/internal/base/tracing"
	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/stack"
)

// Observability configurations of the facade measured by
// `go run ./bench -observability-overhead N`, in the order of each round.
const (
	obsBaseline = "baseline" // no metrics, no tracing: `go run . -upstream URL` without OTEL_*
	obsMetrics  = "metrics"  // Prometheus registry and every recording hook, as in demo mode
	obsTracing  = "tracing"  // every request traced, spans batched to a discarding exporter
	obsBoth     = "both"     // metrics and tracing
)

var obsConfigs = []string{obsBaseline, obsMetrics, obsTracing, obsBoth}

// The observability targets: what metrics and tracing may cost.
const (
	metricsTargetPct = 3.0 // metrics cost under 3% of CPU per query
)

// ObsRow is one configuration's cost over the rounds of an overhead run.
type ObsRow struct {
	Config string
	Runs   []Cost  // one per round
	Median Cost    // per-field median of Runs
	DCPU   float64 // % CPU change to the baseline: median over rounds of the change within the round
	DAlloc float64 // % allocations change to the baseline (medians)
	DKB    float64 // % bytes change to the baseline (medians)
	// SpansPerQ is the spans exported per execution over the rounds
	// (tracing rows; 0 otherwise).
	SpansPerQ      float64
	spans, tracedN int64
	// Shares is where the CPU samples of its runs went (pooled over the
	// rounds).
	Shares Shares
	// Recorded and Executed are the GraphQL requests the metrics counted and
	// the executions (metrics rows; 0 otherwise): equal when the metrics
	// recorded every request.
	Recorded, Executed int
}

// Overhead is the result of an observability overhead run.
type Overhead struct {
	Rounds int
	Query  string
	Rows   []*ObsRow // obsConfigs' order
	// BaselineSpreadPct is the baseline's CPU spread over the rounds,
	// (max-min)/median in %: the run-to-run noise of this machine.
	BaselineSpreadPct float64
}

func (o *Overhead) row(config string) *ObsRow {
	for _, r := range o.Rows {
		if r.Config == config {
			return r
		}
	}
	return nil
}

// countingExporter discards spans, counting them.
type countingExporter struct{ n atomic.Int64 }

func (e *countingExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.n.Add(int64(len(spans)))
	return nil
}

func (*countingExporter) Shutdown(context.Context) error { return nil }

// observabilityOverhead is `go run ./bench -observability-overhead N`: the
// dashboard's facade CPU and allocations per query through the facade's
// handler (costRun) for each of obsConfigs, the configurations started as
// the program starts them (stack), alternating within each of
// `rounds` rounds, so that load drifting on the machine hits every
// configuration alike. Metrics are the stack's own (registry, per-request and
// per-upstream-call recording; the listener is on a loopback port nobody
// scrapes). Tracing is tracing.NewProviders (the provider the program builds
// from OTEL_*: batch span processor, parent-based always-on sampler: every
// request sampled) exporting to an exporter that counts and discards.
// Nothing is written to BENCHMARKS.md or results.json.
func observabilityOverhead(ctx context.Context, cfg Config, rounds int) (*Overhead, error) {
	if s := os.Getenv("OTEL_TRACES_SAMPLER"); s != "" && !strings.HasSuffix(s, "always_on") {
		return nil, fmt.Errorf("OTEL_TRACES_SAMPLER=%s: the tracing rows are to sample every request; unset it", s)
	}
	up, who, fx, err := startUpstreamFor(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer up.Close()
	m := &obsMeasure{cfg: cfg, up: up, who: who, dash: suite(fx)[0], exp: &countingExporter{}}
	defer func() {
		if m.tp != nil {
			_ = m.tp.Shutdown(context.Background())
		}
	}()
	o := &Overhead{Rounds: rounds, Query: m.dash.Name}
	for _, c := range obsConfigs {
		o.Rows = append(o.Rows, &ObsRow{Config: c})
	}
	for r := range rounds {
		for _, row := range o.Rows {
			if err := m.run(ctx, row, r == rounds-1); err != nil {
				return nil, err
			}
			cost := row.Runs[len(row.Runs)-1]
			cfg.logf("round %d %-8s %.3f ms CPU, %.0f allocs, %.1f KB per query (n=%d)", r+1, row.Config, cost.CPUMsPerQuery, cost.AllocsPerQ, cost.KBPerQuery, cost.N)
		}
	}
	o.summarize()
	return o, nil
}

// obsMeasure is the observability measurement's state: the upstream, the
// dashboard, and the exporter and tracer providers of the traced rows
// (made at the first traced run, so that the first baseline run is in a
// process that never traced).
type obsMeasure struct {
	cfg  Config
	up   *upstream
	who  http.Header
	dash *benchQuery
	exp  *countingExporter
	tp   *tracing.Providers
}

// run measures the dashboard's cost once on a stack started in row's
// configuration (profiled; the profile written in the last round when
// asked), adding to row's runs, spans and metrics counts.
func (m *obsMeasure) run(ctx context.Context, row *ObsRow, last bool) error {
	metricsOn := row.Config == obsMetrics || row.Config == obsBoth
	traced := row.Config == obsTracing || row.Config == obsBoth
	c := stack.DefaultConfig()
	c.Upstream, c.Playground = m.up.url, false
	c.Budget, c.CacheTTL = budget.Config{}, "" // the facade's own work, every call made
	if metricsOn {
		c.MetricsAddr = "127.0.0.1:0"
	}
	if traced && m.tp == nil {
		var err error
		if m.tp, err = tracing.NewProviders(ctx, m.exp); err != nil {
			return err
		}
	}
	if traced {
		c.TracerProvider = m.tp.Facade
	}
	st, err := stack.Start(ctx, c, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	if metricsOn != (st.MetricsRegistry != nil) {
		return fmt.Errorf("%s: metrics on %v, registry %v", row.Config, metricsOn, st.MetricsRegistry != nil)
	}
	if traced {
		_ = m.tp.Facade.ForceFlush(ctx)
	}
	spans0 := m.exp.n.Load()
	// Every run is profiled (the profiler's own cost alike for all),
	// for the share of the CPU in the metrics and tracing code.
	var (
		cost Cost
		prof *bytes.Buffer
	)
	if m.cfg.CPUProfile != "" && last {
		prof = new(bytes.Buffer)
	}
	err = row.Shares.profiled(func() (err error) {
		cost, err = costRun(st.Handler, m.who, m.dash, m.cfg.CostDur, m.cfg.CostMinN)
		return err
	}, prof)
	if err == nil && prof != nil {
		err = os.WriteFile(m.cfg.CPUProfile+"."+row.Config+".pprof", prof.Bytes(), 0o644)
	}
	if err == nil && traced {
		err = m.tp.Facade.ForceFlush(ctx)
		row.spans += m.exp.n.Load() - spans0
		row.tracedN += int64(cost.N + costWarmup)
	}
	if err == nil && metricsOn {
		row.Recorded += graphqlRequestsRecorded(st)
		row.Executed += cost.N + costWarmup
	}
	if err != nil {
		return fmt.Errorf("dashboard (%s): %w", row.Config, err)
	}
	row.Runs = append(row.Runs, cost)
	return nil
}

// summarize computes each row's medians, spans per query and changes
// against the baseline (by round for the CPU), and the baseline's spread.
func (o *Overhead) summarize() {
	base := o.row(obsBaseline)
	for _, row := range o.Rows {
		row.Median = medianCost(row.Runs)
		if row.tracedN > 0 {
			row.SpansPerQ = float64(row.spans) / float64(row.tracedN)
		}
	}
	for _, row := range o.Rows {
		var d []float64
		for i, c := range row.Runs {
			d = append(d, change(c.CPUMsPerQuery, base.Runs[i].CPUMsPerQuery))
		}
		row.DCPU = median(d)
		row.DAlloc = change(row.Median.AllocsPerQ, base.Median.AllocsPerQ)
		row.DKB = change(row.Median.KBPerQuery, base.Median.KBPerQuery)
	}
	var cpu []float64
	for _, c := range base.Runs {
		cpu = append(cpu, c.CPUMsPerQuery)
	}
	slices.Sort(cpu)
	o.BaselineSpreadPct = (cpu[len(cpu)-1] - cpu[0]) / median(cpu) * 100
}

// graphqlRequestsRecorded is facade_graphql_requests_total summed over its
// labels, read from st's registry.
func graphqlRequestsRecorded(st *stack.Stack) int {
	mfs, err := st.MetricsRegistry.Gather()
	if err != nil {
		return 0
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() == "facade_graphql_requests_total" {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return int(n)
}

// Print writes o as a markdown table (medians over the rounds, changes to
// the baseline, CPU profile shares) and the verdicts against the
// observability targets.
func (o *Overhead) Print(w io.Writer) {
	fmt.Fprintf(w, "%s per query, the facade's process only (the REST service runs in a child process), median of %d rounds; the configurations alternate within each round\n\n", o.Query, o.Rounds)
	fmt.Fprintln(w, "| configuration | CPU ms | Δ CPU | allocations | Δ allocations | KB | Δ KB | CPU in metrics code | CPU in tracing code | spans per query |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	base := o.row(obsBaseline)
	for _, r := range o.Rows {
		spans := "-"
		if r.SpansPerQ > 0 {
			spans = fmt.Sprintf("%.1f", r.SpansPerQ)
		}
		fmt.Fprintf(w, "| %s | %.3f | %s | %.0f | %s | %.1f | %s | %.2f %% | %.2f %% | %s |\n", obsTitle[r.Config], r.Median.CPUMsPerQuery, deltaPct(r.DCPU, r.Config),
			r.Median.AllocsPerQ, deltaAllocs(r.Median.AllocsPerQ-base.Median.AllocsPerQ, r.DAlloc, r.Config), r.Median.KBPerQuery, deltaPct(r.DKB, r.Config),
			r.Shares.MetricsPct(), r.Shares.TracingPct(), spans)
	}
	fmt.Fprintf(w, "\nΔ CPU: the median over the rounds of each round's change to that round's baseline; the baseline's own CPU spread over the rounds, (max-min)/median, is %.1f %%: "+
		"CPU moves with the machine's load, allocations do not. CPU in metrics (tracing) code: the share of the row's CPU profile samples (%d for the baseline, pooled over the rounds) "+
		"whose innermost frame outside the standard library is in the metrics (tracing) packages; the garbage collector's work is not in it.\n\n", o.BaselineSpreadPct, base.Shares.Samples)
	for _, v := range o.Verdicts() {
		fmt.Fprintln(w, "- "+v)
	}
}

var obsTitle = map[string]string{
	obsBaseline: "baseline: metrics off, tracing off",
	obsMetrics:  "metrics on",
	obsTracing:  "tracing on, 100 % sampled",
	obsBoth:     "metrics and tracing on",
}

func deltaPct(v float64, config string) string {
	if config == obsBaseline {
		return "-"
	}
	return fmt.Sprintf("%+.1f %%", v)
}

func deltaAllocs(n, pct float64, config string) string {
	if config == obsBaseline {
		return "-"
	}
	return fmt.Sprintf("%+.0f (%+.2f %%)", n, pct)
}

// Verdicts judge o against the observability targets: metrics cost under 3 % of CPU
// per query; tracing off costs nothing measurable. CPU differences between
// runs are at the mercy of the machine's load; the robust figures are the
// profile shares (a share of this process's own samples) and the
// allocations.
func (o *Overhead) Verdicts() []string {
	m, base, tr := o.row(obsMetrics), o.row(obsBaseline), o.row(obsTracing)
	verdict := "met"
	if m.Shares.MetricsPct() >= metricsTargetPct {
		verdict = "MISSED"
	}
	out := []string{fmt.Sprintf("metrics, target under %.0f %% of the CPU per query: %s. Metrics code: %.2f %% of the CPU samples; allocations %+.0f (%+.2f %%); CPU %+.1f %% (noise: the baseline alone spreads %.1f %%).",
		metricsTargetPct, verdict, m.Shares.MetricsPct(), m.Median.AllocsPerQ-base.Median.AllocsPerQ, m.DAlloc, m.DCPU, o.BaselineSpreadPct)}
	if m.Recorded != m.Executed {
		out = append(out, fmt.Sprintf("metrics: %d of %d requests recorded: the metrics rows did not record every request.", m.Recorded, m.Executed))
	}
	// Tracing off is the baseline configuration: no tracer provider, no
	// middleware; the facade's span functions (restclient, loaders) run and
	// find no span. Its allocations are compared between its first round
	// (before this process ever traced) and the later ones (after traced
	// rounds installed the global propagator and made spans).
	lo, hi := base.Runs[0].AllocsPerQ, base.Runs[0].AllocsPerQ
	for _, c := range base.Runs {
		lo, hi = min(lo, c.AllocsPerQ), max(hi, c.AllocsPerQ)
	}
	out = append(out, fmt.Sprintf("tracing off, target nothing measurable: it is the baseline (no tracer provider, no middleware). Tracing code: %.2f %% of its CPU samples (the span checks that find no span); "+
		"allocations %.0f..%.0f per query over its rounds, the first before anything traced in the process.", base.Shares.TracingPct(), lo, hi))
	out = append(out, fmt.Sprintf("tracing on, every request sampled: %.1f spans per query; tracing code %.2f %% of the CPU samples; allocations %+.0f (%+.2f %%), bytes %+.1f %%; CPU %+.1f %%.",
		tr.SpansPerQ, tr.Shares.TracingPct(), tr.Median.AllocsPerQ-base.Median.AllocsPerQ, tr.DAlloc, tr.DKB, tr.DCPU))
	return out
}

// median of v (v is sorted in place).
func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// medianCost is the per-field median of cs.
func medianCost(cs []Cost) Cost {
	med := func(f func(Cost) float64) float64 {
		v := make([]float64, len(cs))
		for i, c := range cs {
			v[i] = f(c)
		}
		return median(v)
	}
	return Cost{
		N:             int(med(func(c Cost) float64 { return float64(c.N) })),
		CPUMsPerQuery: med(func(c Cost) float64 { return c.CPUMsPerQuery }),
		AllocsPerQ:    med(func(c Cost) float64 { return c.AllocsPerQ }),
		KBPerQuery:    med(func(c Cost) float64 { return c.KBPerQuery }),
	}
}

func change(a, b float64) float64 { return (a/b - 1) * 100 }
