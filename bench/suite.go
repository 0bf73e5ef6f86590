package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
)

// Config is one benchmark run.
type Config struct {
	Scale         int             // demo data scale
	Latencies     []time.Duration // injected upstream latencies
	Conc          []int           // concurrency levels of the per-query tables
	Sweep         []int           // concurrency levels of the dashboard sweep (plot)
	Waits         []time.Duration // loader batch waits tried on the dashboard
	Dur           time.Duration   // per load run
	MinN          int             // minimum samples per load run
	CostDur       time.Duration   // per cost run
	CostMinN      int
	RealDur       time.Duration // the "real upstream" scenario's sustained run; 0 skips it
	RefreshRounds int           // rounds of the "refresh" scenario (cold, then warm); 0 skips it
	Child         bool          // serve the upstream from a child process
	Log           io.Writer     // progress

	// CostOnly measures only the cost per query (no load runs, sweep,
	// batch waits or scenarios): the quick loop of profiling work.
	CostOnly bool
	// Only limits the suite to these query names (nil: all).
	Only []string
	// CostRounds repeats each cost run (the median is kept); 0 means 1.
	CostRounds int
	// CPUProfile and MemProfile, when set, are file name prefixes: the
	// batched cost run of each query writes <prefix>.<query>.pprof.
	CPUProfile, MemProfile string
	// BatchedOnly skips the naive baseline.
	BatchedOnly bool
	// Load is the "under load" measurement (loadcpu.go); LoadOnly runs it
	// alone (for the queries of Only).
	Load     LoadCPU
	LoadOnly bool
	// CritPathN is the traced requests of each query's critical-path
	// decomposition (critpath.go), batched, at every latency; 0 skips it.
	// CritPathOnly measures only that (no load runs nor cost).
	CritPathN    int
	CritPathOnly bool
}

// Modes of the facade.
const (
	modeBatched = "batched"
	modeNaive   = "naive"
)

var modes = []string{modeBatched, modeNaive}

// Results is everything a run measured (also written as JSON, so the next
// run can show regressions).
type Results struct {
	Date          string         `json:"date"`
	Command       string         `json:"command"`
	Machine       string         `json:"machine"`
	GoVersion     string         `json:"goVersion"`
	Scale         int            `json:"scale"`
	DurPerRun     string         `json:"durPerRun"`
	Fixtures      map[string]any `json:"fixtures"`
	Queries       []*QueryResult `json:"queries"`
	Waits         []WaitResult   `json:"waits"`
	Sweep         []SweepPoint   `json:"sweep"`
	RealUpstream  *RealUpstream  `json:"realUpstream,omitempty"`
	Refresh       *Refresh       `json:"refresh,omitempty"`
	Load          *LoadResult    `json:"load,omitempty"`
	FacadeRSSKB   int64          `json:"facadePeakRssKB"`
	UpstreamRSSKB int64          `json:"upstreamPeakRssKB"`
	ElapsedSec    float64        `json:"elapsedSec"`
}

// QueryResult is one query of the suite.
type QueryResult struct {
	Name       string           `json:"name"`
	Title      string           `json:"title"`
	Text       string           `json:"text"`
	MinCalls   int              `json:"minCalls"`
	MinByRoute map[string]int64 `json:"minByRoute"`
	Rounds     int              `json:"rounds"`
	// Deps is what each route's calls may wait for (needs.Deps).
	Deps  map[string]RouteDeps   `json:"deps,omitempty"`
	Modes map[string]*ModeResult `json:"modes"`
}

// ModeResult is one query in one facade mode.
type ModeResult struct {
	Calls        map[string]int64 `json:"calls"` // latency (ms, as text) -> total upstream calls of one execution
	CallsByRoute map[string]int64 `json:"callsByRoute"`
	Runs         []LatRun         `json:"runs"`
	Cost         *Cost            `json:"cost,omitempty"`
	// CritPath is the critical-path decomposition (batched mode), by
	// latency (ms, as text).
	CritPath map[string]*CritPath `json:"critPath,omitempty"`
}

// WaitResult is the dashboard at one loader batch wait.
type WaitResult struct {
	WaitMs    float64 `json:"waitMs"`
	LatencyMs float64 `json:"latencyMs"`
	Calls     int64   `json:"calls"`
	Run       LatRun  `json:"run"`
}

// SweepPoint is the dashboard at one concurrency.
type SweepPoint struct {
	Mode string `json:"mode"`
	LatRun
}

func latKey(d time.Duration) string { return strconv.FormatFloat(ms(d), 'f', -1, 64) }

func (c Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", args...)
	}
}

// Run starts the upstream and the facade and measures the suite.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	began := time.Now()
	cfg.logf("starting the upstream (demo scale %d, child process %v)", cfg.Scale, cfg.Child)
	up, who, fx, err := startUpstreamFor(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer up.Close()
	cfg.logf("fixtures: location %s, invoice %s, post %s, resource %s", fx.Location, fx.Invoice, fx.Post, fx.Resource)
	queries := suite(fx)
	if cfg.Only != nil {
		queries = slices.DeleteFunc(queries, func(q *benchQuery) bool { return !slices.Contains(cfg.Only, q.Name) })
		if len(queries) == 0 {
			return nil, fmt.Errorf("-only %v names no query of the suite", cfg.Only)
		}
	}
	if cfg.CostOnly {
		cfg.Latencies = []time.Duration{0}
	}
	res := &Results{
		Date: time.Now().UTC().Format(time.RFC3339), Machine: machine(), GoVersion: runtime.Version(),
		Scale: cfg.Scale, DurPerRun: cfg.Dur.String(),
		Fixtures: map[string]any{"location": fx.Location, "invoice": fx.Invoice, "post": fx.Post, "resource": fx.Resource},
	}
	for _, q := range queries {
		res.Queries = append(res.Queries, &QueryResult{Name: q.Name, Title: q.Title, Text: q.Text, Modes: map[string]*ModeResult{}})
	}
	if cfg.LoadOnly {
		if res.Load, err = runLoadCPU(ctx, cfg, up, who, queries); err != nil {
			return nil, err
		}
		res.ElapsedSec = time.Since(began).Seconds()
		return res, nil
	}
	for _, lat := range cfg.Latencies {
		if err := up.SetLatency(lat); err != nil {
			return nil, err
		}
		for _, mode := range modes {
			if (cfg.BatchedOnly || cfg.CritPathOnly) && mode != modeBatched {
				continue // the decomposition is of the batched facade only
			}
			if err := cfg.measureMode(ctx, up, who, lat, mode, queries, res); err != nil {
				return nil, err
			}
		}
	}
	if cfg.CostOnly || cfg.CritPathOnly || cfg.Only != nil { // a partial run: no sweep or scenarios
		res.FacadeRSSKB = peakRSSKB("self")
		res.ElapsedSec = time.Since(began).Seconds()
		return res, nil
	}
	if err := cfg.runWhole(ctx, up, who, fx, queries, res); err != nil {
		return nil, err
	}
	res.FacadeRSSKB = peakRSSKB("self")
	if up.pid != 0 {
		res.UpstreamRSSKB = peakRSSKB(strconv.Itoa(up.pid))
	}
	res.ElapsedSec = time.Since(began).Seconds()
	return res, nil
}

// measureMode measures every query on one facade in mode, at upstream
// latency lat, into res.
func (cfg Config) measureMode(ctx context.Context, up *upstream, who http.Header, lat time.Duration, mode string, queries []*benchQuery, res *Results) error {
	f, err := startFacade(up.url, mode, loaders.DefaultConfig())
	if err != nil {
		return err
	}
	defer f.close()
	c := newGQLClient(f.url, who)
	for i, q := range queries {
		qr := res.Queries[i]
		mr := qr.Modes[mode]
		if mr == nil {
			mr = &ModeResult{Calls: map[string]int64{}}
			qr.Modes[mode] = mr
		}
		if err := cfg.measureQuery(ctx, up, f, c, who, lat, q, qr, mode, mr); err != nil {
			return err
		}
	}
	return nil
}

// measureQuery measures q on facade f in mode at latency lat: its calls
// (and, batched, the minimum the data needs and the critical path), its
// latency at each concurrency, and its cost at latency 0.
func (cfg Config) measureQuery(ctx context.Context, up *upstream, f *facade, c *gqlclient.Client, who http.Header, lat time.Duration, q *benchQuery, qr *QueryResult, mode string, mr *ModeResult) error {
	if _, err := do(ctx, c, q); err != nil { // warm up
		return fmt.Errorf("%s (%s, %v): %w", q.Name, mode, lat, err)
	}
	routes, total, data, err := callsOf(ctx, up, c, q)
	if err != nil {
		return fmt.Errorf("%s (%s, %v): %w", q.Name, mode, lat, err)
	}
	mr.Calls[latKey(lat)] = total
	if mr.CallsByRoute == nil {
		mr.CallsByRoute = routes
	}
	if mode == modeBatched && qr.MinByRoute == nil {
		n, err := q.Needs(data)
		if err != nil {
			return fmt.Errorf("%s: minimum: %w", q.Name, err)
		}
		qr.MinCalls, qr.MinByRoute, qr.Rounds, qr.Deps = n.Calls(), n.ByRoute(), n.Rounds(), n.Deps()
	}
	if mode == modeBatched && cfg.CritPathN > 0 && !cfg.CostOnly {
		if err := cfg.measureCritPath(ctx, up, c, lat, q, qr, mode, mr); err != nil {
			return err
		}
	}
	if cfg.CritPathOnly {
		return nil
	}
	for _, conc := range cfg.Conc {
		if cfg.CostOnly {
			break
		}
		r := loadRun(ctx, c, q, conc, cfg.Dur, cfg.MinN)
		r.LatencyMs = ms(lat)
		mr.Runs = append(mr.Runs, r)
		cfg.logf("%-9s %-7s lat=%-5v c=%-3d calls=%-4d p50=%7.2fms p95=%7.2fms p99=%7.2fms qps=%7.1f cpu/q=%6.3fms n=%d err=%d %s",
			q.Name, mode, lat, conc, total, r.P50Ms, r.P95Ms, r.P99Ms, r.QPS, r.CPUMsPerQ, r.N, r.Errors, r.FirstErr)
	}
	if lat == 0 && mr.Cost == nil {
		cost, err := cfg.measureCost(f.handler, who, q, mode)
		if err != nil {
			return fmt.Errorf("%s cost (%s): %w", q.Name, mode, err)
		}
		mr.Cost = &cost
		cfg.logf("%-9s %-7s cost: %.3f ms CPU, %.0f allocs, %.1f KB per query (n=%d)", q.Name, mode, cost.CPUMsPerQuery, cost.AllocsPerQ, cost.KBPerQuery, cost.N)
	}
	return nil
}

// measureCritPath decomposes q's critical path at latency lat into mr.
func (cfg Config) measureCritPath(ctx context.Context, up *upstream, c *gqlclient.Client, lat time.Duration, q *benchQuery, qr *QueryResult, mode string, mr *ModeResult) error {
	cp, err := critPathRun(ctx, up, c, q, qr.Deps, cfg.CritPathN)
	if err != nil {
		return fmt.Errorf("%s critical path (%v): %w", q.Name, lat, err)
	}
	if mr.CritPath == nil {
		mr.CritPath = map[string]*CritPath{}
	}
	mr.CritPath[latKey(lat)] = cp
	d := cp.Median
	cfg.logf("%-9s %-7s lat=%-5v critical path (median of %d): total=%.2fms path=%.2fms own=%+.2fms before=%.2f between=%.2f after=%.2f; path: slept=%.2f handler=%.2f client=%.2f",
		q.Name, mode, lat, cp.N, d.Total, d.CritPath, d.Own, d.Before, d.Between, d.After, d.Slept, d.Handled, d.Client)
	return nil
}

// runWhole measures what only a whole run does: under load, the dashboard
// against concurrency and against the batch wait (at the highest latency
// of the run), and the scenarios.
func (cfg Config) runWhole(ctx context.Context, up *upstream, who http.Header, fx *fixtures, queries []*benchQuery, res *Results) error {
	var err error
	if cfg.Load.Dur > 0 {
		if res.Load, err = runLoadCPU(ctx, cfg, up, who, queries); err != nil {
			return err
		}
	}
	lat := cfg.Latencies[len(cfg.Latencies)-1]
	if err := up.SetLatency(lat); err != nil {
		return err
	}
	dash := queries[0]
	if err := cfg.sweepDashboard(ctx, up, who, dash, lat, res); err != nil {
		return err
	}
	for _, w := range cfg.Waits {
		if err := cfg.dashboardAtWait(ctx, up, who, dash, lat, w, res); err != nil {
			return err
		}
	}
	if cfg.RealDur > 0 {
		if res.RealUpstream, err = runRealUpstream(ctx, cfg, up, fx); err != nil {
			return err
		}
	}
	if cfg.RefreshRounds > 0 {
		if res.Refresh, err = runRefresh(ctx, cfg, up, fx); err != nil {
			return err
		}
	}
	return nil
}

// sweepDashboard runs the dashboard at each concurrency of the sweep, in
// each mode, at latency lat.
func (cfg Config) sweepDashboard(ctx context.Context, up *upstream, who http.Header, dash *benchQuery, lat time.Duration, res *Results) error {
	for _, mode := range modes {
		f, err := startFacade(up.url, mode, loaders.DefaultConfig())
		if err != nil {
			return err
		}
		c := newGQLClient(f.url, who)
		for _, conc := range cfg.Sweep {
			r := loadRun(ctx, c, dash, conc, cfg.Dur, cfg.MinN)
			r.LatencyMs = ms(lat)
			res.Sweep = append(res.Sweep, SweepPoint{Mode: mode, LatRun: r})
			cfg.logf("sweep     %-7s lat=%-5v c=%-3d p50=%7.2fms p95=%7.2fms qps=%7.1f", mode, lat, conc, r.P50Ms, r.P95Ms, r.QPS)
		}
		f.close()
	}
	return nil
}

// dashboardAtWait runs the dashboard on a batched facade whose loaders wait
// w for a batch, at latency lat: its calls and its latency alone.
func (cfg Config) dashboardAtWait(ctx context.Context, up *upstream, who http.Header, dash *benchQuery, lat, w time.Duration, res *Results) error {
	f, err := startFacade(up.url, modeBatched, loaders.Config{Wait: w, MaxConcurrency: loaders.DefaultMaxConcurrency})
	if err != nil {
		return err
	}
	defer f.close()
	c := newGQLClient(f.url, who)
	if _, err := do(ctx, c, dash); err != nil {
		return err
	}
	_, total, _, err := callsOf(ctx, up, c, dash)
	if err != nil {
		return err
	}
	r := loadRun(ctx, c, dash, 1, cfg.Dur, cfg.MinN)
	r.LatencyMs = ms(lat)
	res.Waits = append(res.Waits, WaitResult{WaitMs: ms(w), LatencyMs: ms(lat), Calls: total, Run: r})
	cfg.logf("wait=%-6v lat=%-5v calls=%d p50=%7.2fms p95=%7.2fms", w, lat, total, r.P50Ms, r.P95Ms)
	return nil
}

// findFixtures picks demo data that exercises every link: the first location,
// the invoice (among those with credit notes there) with the most booking
// items and credit notes, the post with the most replies, and a resource that
// accepts one-hour bookings.
func findFixtures(ctx context.Context, up *upstream, who http.Header) (*fixtures, error) {
	f, err := startFacade(up.url, modeBatched, loaders.DefaultConfig())
	if err != nil {
		return nil, err
	}
	defer f.close()
	c := newGQLClient(f.url, who)
	ask := func(text string, vars map[string]any, v any) error {
		data, err := do(ctx, c, &benchQuery{Text: text, Vars: func() map[string]any { return vars }})
		if err != nil {
			return err
		}
		return json.Unmarshal(data, v)
	}
	ids := up.manifest.IDs
	if len(ids["location"]) == 0 || len(ids["post"]) == 0 || len(ids["resource"]) == 0 {
		return nil, errNoFixture
	}
	fx := &fixtures{Location: ids["location"][0]}
	if fx.Invoice, err = richestInvoice(ask, fx.Location); err != nil {
		return nil, err
	}
	if fx.Post, err = busiestPost(ask, ids["post"]); err != nil {
		return nil, err
	}
	if fx.Resource, err = bookableResource(ctx, c, ask, fx, ids["resource"]); err != nil {
		return nil, err
	}
	return fx, nil
}

// asker runs a query of the fixtures' search and decodes its data into v.
type asker func(text string, vars map[string]any, v any) error

// richestInvoice is the invoice, among the first 30 with credit notes in
// location, with the most items, booking items and credit notes (one
// booking item at least).
func richestInvoice(ask asker, location string) (string, error) {
	var cn struct {
		Location struct {
			CreditNotes struct {
				Nodes []struct {
					InvoiceRef string `json:"invoiceRef"`
				} `json:"nodes"`
			} `json:"creditNotes"`
		} `json:"location"`
	}
	if err := ask(`query($l: ID!) { location(id: $l) { creditNotes(first: 100) { nodes { invoiceRef } } } }`, map[string]any{"l": location}, &cn); err != nil {
		return "", fmt.Errorf("fixtures: %w", err)
	}
	seen := map[string]bool{}
	best, invoice := -1, ""
	for _, n := range cn.Location.CreditNotes.Nodes {
		if n.InvoiceRef == "" || seen[n.InvoiceRef] || len(seen) >= 30 {
			continue
		}
		seen[n.InvoiceRef] = true
		var inv struct {
			Invoice struct {
				Items []struct {
					Booking *ref `json:"booking"`
				} `json:"items"`
				CreditNotes struct {
					Nodes []ref `json:"nodes"`
				} `json:"creditNotes"`
			} `json:"invoice"`
		}
		if err := ask(`query($id: ID!) { invoice(id: $id) { items { booking { id } } creditNotes(first: 25) { nodes { id } } } }`, map[string]any{"id": n.InvoiceRef}, &inv); err != nil {
			return "", fmt.Errorf("fixtures: %w", err)
		}
		bookings := 0
		for _, it := range inv.Invoice.Items {
			if it.Booking != nil {
				bookings++
			}
		}
		score := len(inv.Invoice.Items) + bookings + len(inv.Invoice.CreditNotes.Nodes)
		if bookings > 0 && score > best {
			best, invoice = score, n.InvoiceRef
		}
	}
	if invoice == "" {
		return "", fmt.Errorf("fixtures: no invoice with booking items and credit notes: %w", errNoFixture)
	}
	return invoice, nil
}

// busiestPost is the post, among the first 40, with the most replies (then
// comments).
func busiestPost(ask asker, posts []string) (string, error) {
	best, post := -1, ""
	for i, p := range posts {
		if i >= 40 {
			break
		}
		var th struct {
			PostComments []struct {
				ParentCommentRef *string `json:"parentCommentRef"`
			} `json:"postComments"`
		}
		if err := ask(`query($p: ID!) { postComments(postId: $p) { parentCommentRef } }`, map[string]any{"p": p}, &th); err != nil {
			return "", fmt.Errorf("fixtures: %w", err)
		}
		replies := 0
		for _, cm := range th.PostComments {
			if cm.ParentCommentRef != nil {
				replies++
			}
		}
		if score := 2*replies + len(th.PostComments); score > best {
			best, post = score, p
		}
	}
	return post, nil
}

// bookableResource is the first resource outside fx's location that takes
// the suite's one-hour booking (made through c). Bookings add transactions
// to their resource's location: booking in another location, the dashboard
// and the feed read the same data on every execution.
func bookableResource(ctx context.Context, c *gqlclient.Client, ask asker, fx *fixtures, resources []string) (string, error) {
	var lastErr error
	for _, r := range resources {
		var res struct {
			Resource struct {
				LocationRef string `json:"locationRef"`
			} `json:"resource"`
		}
		if err := ask(`query($id: ID!) { resource(id: $id) { locationRef } }`, map[string]any{"id": r}, &res); err != nil {
			return "", fmt.Errorf("fixtures: %w", err)
		}
		if res.Resource.LocationRef == fx.Location {
			continue
		}
		fx.Resource = r
		q := suite(fx)[4] // the mutation
		if _, err := do(ctx, c, q); err == nil {
			return r, nil
		} else {
			lastErr = err
		}
	}
	return "", fmt.Errorf("fixtures: no resource accepts a one-hour booking: %w", errors.Join(errNoFixture, lastErr))
}
