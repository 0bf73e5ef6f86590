package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/graph/loaders/naive"
	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// facade is the GraphQL facade served on a loopback listener of the bench
// process, started as the program starts it (stack) except for the
// loaders.
type facade struct {
	url     string
	handler http.Handler // every route, middleware included
	close   func()
}

// startFacade serves the facade in mode: modeBatched with the loaders tuned
// by lc, or modeNaive (lc unused).
func startFacade(upstreamURL, mode string, lc loaders.Config) (*facade, error) {
	// These scenarios measure the facade, not the pacing; every execution
	// makes its own calls (no response cache).
	return startFacadeWith(upstreamURL, mode, lc, budget.Config{}, "")
}

// withMetrics (-metrics) records the facade's Prometheus metrics (served on
// a loopback port nobody scrapes), to measure their cost; off by default, as
// in the program with an upstream URL.
var withMetrics bool

// startFacadeWith is startFacade with a rate budget and a response cache
// (cache.ParseTTLs; "" for none, in process).
func startFacadeWith(upstreamURL, mode string, lc loaders.Config, bc budget.Config, cacheTTL string) (*facade, error) {
	cfg := stack.DefaultConfig()
	if withMetrics {
		cfg.MetricsAddr = "127.0.0.1:0"
	}
	// The call report is on for requests asking for it (X-Upstream-Trace:
	// 1): only the critical-path runs do.
	cfg.Upstream, cfg.Playground, cfg.UpstreamTrace = upstreamURL, false, "on"
	cfg.Budget, cfg.CacheTTL = bc, cacheTTL
	cfg.Graph.Loaders = lc
	isNaive := mode == modeNaive
	if isNaive {
		cfg.Graph.NewLoaders = naive.New
	}
	// The naive baseline also turns off the client's sharing of identical
	// concurrent GETs, so it really makes one upstream call per field.
	cfg.ClientOptions = []restclient.Option{restclient.WithSharedGets(!isNaive)}
	st, err := stack.Start(context.Background(), cfg, nil)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.Close()
		return nil, err
	}
	go func() { _ = st.Serve(ln) }()
	return &facade{url: "http://" + ln.Addr().String() + "/graphql", handler: st.Handler, close: func() { _ = st.Close() }}, nil
}

// newGQLClient returns a GraphQL client of a facade sending who (the demo
// credentials, gqlclient.Credentials) with every request, over a connection
// pool sized for the load runs' concurrency.
func newGQLClient(url string, who http.Header) *gqlclient.Client {
	return &gqlclient.Client{URL: url, Header: who, HTTP: &http.Client{Timeout: time.Minute,
		Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxIdleConns: 256}}}
}

func requestBody(q *benchQuery) []byte {
	b, _ := json.Marshal(gqlclient.Request{Query: q.Text, Variables: q.Vars()})
	return b
}

// gqlError is a GraphQL response with errors.
type gqlError struct{ body []byte }

func (e *gqlError) Error() string { return fmt.Sprintf("GraphQL errors: %.400s", e.body) }

// dataOf returns the data of an answer, or an error when there is none to
// trust: no answer, not JSON, GraphQL errors, or a status other than 200.
func dataOf(r *gqlclient.Response, err error) (json.RawMessage, error) {
	var notJSON *gqlclient.NotJSONError
	switch {
	case errors.As(err, &notJSON):
		return nil, fmt.Errorf("status %d, body not JSON: %.200s", notJSON.Status, notJSON.Body)
	case err != nil:
		return nil, err
	case len(r.Errors) > 0 || r.Status != http.StatusOK:
		return nil, &gqlError{r.Raw}
	}
	return r.Data, nil
}

// do runs q once.
func do(ctx context.Context, c *gqlclient.Client, q *benchQuery) (json.RawMessage, error) {
	return post(ctx, c, requestBody(q))
}

// post sends a request body built beforehand (out of the timed section).
func post(ctx context.Context, c *gqlclient.Client, body []byte) (json.RawMessage, error) {
	return dataOf(c.PostBody(ctx, "application/json", body, nil))
}

// exchange sends a request body with header and returns the answer and
// the time from sending it to the last byte of the answer: what the
// facade and HTTP took, without the bench's client decoding the JSON
// (0.5 ms for the feed's 70 KB), which comes after. An answer that is not
// the query's data is an error (dataOf).
func exchange(ctx context.Context, c *gqlclient.Client, body []byte, header http.Header) (*gqlclient.Response, time.Duration, error) {
	t0 := time.Now()
	status, h, raw, err := c.PostRaw(ctx, "application/json", body, header)
	took := time.Since(t0)
	if err != nil {
		return nil, took, err
	}
	r, err := gqlclient.Decode(status, h, raw)
	_, err = dataOf(r, err)
	return r, took, err
}

// LatRun is one closed-loop load run: Conc clients issuing the query back to
// back.
type LatRun struct {
	LatencyMs float64 `json:"latencyMs"` // injected upstream latency
	Conc      int     `json:"conc"`
	N         int     `json:"n"`
	Errors    int     `json:"errors"`
	P50Ms     float64 `json:"p50Ms"`
	P95Ms     float64 `json:"p95Ms"`
	P99Ms     float64 `json:"p99Ms"`
	QPS       float64 `json:"qps"`
	// CPUMsPerQ is the CPU time per query over the run of the process the
	// run is charged to: for the per-query runs, this one (the facade's,
	// plus the load generator's and both HTTP ends': the same for every
	// build, so comparable between builds, not with Cost); for the runs
	// under load, the facade's process alone.
	CPUMsPerQ float64 `json:"cpuMsPerQuery,omitempty"`
	FirstErr  string  `json:"firstErr,omitempty"`
}

// loadRun runs q with conc concurrent clients until dur has passed and at
// least minN queries completed, or 4*dur has passed; CPU is this process's.
func loadRun(ctx context.Context, c *gqlclient.Client, q *benchQuery, conc int, dur time.Duration, minN int) LatRun {
	return closedLoop(ctx, conc, dur, minN, cpuTime, func() []byte { return requestBody(q) }, func(ctx context.Context, body []byte) (time.Duration, error) {
		_, took, err := exchange(ctx, c, body, nil)
		return took, err
	})
}

// closedLoop has conc clients each build a body and send it, back to back,
// until dur has passed and at least minN sends completed, or 4*dur has
// passed; every client sends at least once. Latencies are what send
// reports (exchange's: to the answer's last byte, before decoding it); the
// CPU per send is read from cpu, the clock of the process the run is
// charged to.
func closedLoop(ctx context.Context, conc int, dur time.Duration, minN int, cpu func() time.Duration, build func() []byte, send func(context.Context, []byte) (time.Duration, error)) LatRun {
	var (
		mu       sync.Mutex
		samples  []time.Duration
		errs     int
		firstErr string
		wg       sync.WaitGroup
	)
	start, cpu0 := time.Now(), cpu()
	hard := start.Add(4 * dur)
	ctx, cancel := context.WithDeadline(ctx, hard.Add(30*time.Second))
	defer cancel()
	done := func() bool {
		mu.Lock()
		defer mu.Unlock()
		el := time.Since(start)
		return (el >= dur && len(samples)+errs >= minN) || time.Now().After(hard) || ctx.Err() != nil
	}
	for range conc {
		wg.Go(func() {
			for first := true; first || !done(); first = false { // every client sends at least one query
				body := build()
				el, err := send(ctx, body)
				mu.Lock()
				if err != nil {
					errs++
					if firstErr == "" {
						firstErr = err.Error()
					}
				} else {
					samples = append(samples, el)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed, used := time.Since(start), cpu()-cpu0
	slices.Sort(samples)
	r := LatRun{Conc: conc, N: len(samples), Errors: errs, FirstErr: firstErr,
		P50Ms: ms(percentile(samples, 0.50)), P95Ms: ms(percentile(samples, 0.95)), P99Ms: ms(percentile(samples, 0.99)),
		QPS: float64(len(samples)) / elapsed.Seconds()}
	if n := len(samples) + errs; n > 0 {
		r.CPUMsPerQ = ms(used) / float64(n)
	}
	return r
}

// percentile is the nearest-rank percentile of sorted samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Cost is the facade's own work per query: this process's CPU time (user +
// system, including GC) and heap allocations, over sequential executions
// through the handler (no HTTP client or server in the loop; the upstream
// runs in another process).
type Cost struct {
	N             int     `json:"n"`
	CPUMsPerQuery float64 `json:"cpuMsPerQuery"`
	AllocsPerQ    float64 `json:"allocsPerQuery"`
	KBPerQuery    float64 `json:"kbPerQuery"`
}

// discardWriter is a minimal http.ResponseWriter that keeps the body (to
// check for errors) in a reused buffer.
type discardWriter struct {
	h      http.Header
	status int
	buf    bytes.Buffer
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return w.buf.Write(b) }
func (w *discardWriter) WriteHeader(s int)           { w.status = s }

// costWarmup is the executions of a costRun before the measured ones.
const costWarmup = 3

// costRun executes q through h sequentially for at least dur and minN
// executions and returns the per-query cost: the facade's, not the bench's.
// Requests are built before the measured loop, and a measured answer is
// checked by its first bytes only (a response without errors starts
// {"data": graph/overhttp writes errors first); an answer that does not is
// decoded in full for the error. The warm-up executions are decoded and
// checked in full.
func costRun(h http.Handler, who http.Header, q *benchQuery, dur time.Duration, minN int) (Cost, error) {
	header := who.Clone() // what gqlclient sends: the credentials and the content type
	header.Set("Content-Type", "application/json")
	// Bodies are built per execution (mutations need fresh vars).
	request := func() *http.Request {
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(requestBody(q)))
		maps.Copy(req.Header, header)
		return req
	}
	w := &discardWriter{h: http.Header{}}
	serve := func(req *http.Request) {
		clear(w.h)
		w.buf.Reset()
		w.status = http.StatusOK
		h.ServeHTTP(w, req)
	}
	check := func() error {
		_, err := dataOf(gqlclient.Decode(w.status, w.h, w.buf.Bytes()))
		return err
	}
	// Warm up (query cache, connections), and size the run.
	t0 := time.Now()
	for range costWarmup {
		serve(request())
		if err := check(); err != nil {
			return Cost{}, err
		}
	}
	per := time.Since(t0) / costWarmup
	n := max(minN, int(dur/max(per, time.Microsecond)))
	n = min(n, 5000)
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = request()
	}
	ok := []byte(`{"data":`)
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	c0 := cpuTime()
	for _, req := range reqs {
		serve(req)
		if w.status != http.StatusOK || !bytes.HasPrefix(w.buf.Bytes(), ok) {
			if err := check(); err != nil {
				return Cost{}, err
			}
			return Cost{}, fmt.Errorf("status %d: %.200s", w.status, w.buf.Bytes())
		}
	}
	c1 := cpuTime()
	runtime.ReadMemStats(&m1)
	return Cost{
		N:             n,
		CPUMsPerQuery: ms(c1-c0) / float64(n),
		AllocsPerQ:    float64(m1.Mallocs-m0.Mallocs) / float64(n),
		KBPerQuery:    float64(m1.TotalAlloc-m0.TotalAlloc) / 1024 / float64(n),
	}, nil
}

// measureCost runs costRun cfg.CostRounds times (the median CPU is kept;
// allocations repeat), profiling the batched mode's runs when asked.
func (cfg Config) measureCost(h http.Handler, who http.Header, q *benchQuery, mode string) (Cost, error) {
	profile := mode == modeBatched && (cfg.CPUProfile != "" || cfg.MemProfile != "")
	if profile && cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile + "." + q.Name + ".pprof")
		if err != nil {
			return Cost{}, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return Cost{}, err
		}
		defer pprof.StopCPUProfile()
	}
	if profile && cfg.MemProfile != "" {
		old := runtime.MemProfileRate
		runtime.MemProfileRate = 4096
		defer func() { runtime.MemProfileRate = old }()
	}
	var runs []Cost
	for range max(cfg.CostRounds, 1) {
		c, err := costRun(h, who, q, cfg.CostDur, cfg.CostMinN)
		if err != nil {
			return Cost{}, err
		}
		runs = append(runs, c)
	}
	if profile && cfg.MemProfile != "" {
		if err := writeHeapProfile(cfg.MemProfile + "." + q.Name + ".pprof"); err != nil {
			return Cost{}, err
		}
	}
	slices.SortFunc(runs, func(a, b Cost) int { return cmp.Compare(a.CPUMsPerQuery, b.CPUMsPerQuery) })
	return runs[len(runs)/2], nil
}

// writeHeapProfile writes the allocation profile (alloc_space/alloc_objects
// cover everything allocated since the rate was lowered).
func writeHeapProfile(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// cpuTime is this process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSSKB returns VmHWM of a process ("self" or a pid) in KiB, 0 if unknown.
func peakRSSKB(pid string) int64 {
	m, _ := readProcMem(pid)
	return m.HWM
}

// callsOf runs q once and returns the upstream calls it made, by route, and
// the response data.
func callsOf(ctx context.Context, up *upstream, c *gqlclient.Client, q *benchQuery) (map[string]int64, int64, json.RawMessage, error) {
	if err := up.ResetStats(); err != nil {
		return nil, 0, nil, err
	}
	data, err := do(ctx, c, q)
	if err != nil {
		return nil, 0, nil, err
	}
	s, err := up.Stats()
	if err != nil {
		return nil, 0, nil, err
	}
	return s.Routes, s.Total, data, nil
}

var errNoFixture = errors.New("no suitable demo data")
