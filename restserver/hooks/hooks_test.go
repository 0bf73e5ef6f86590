package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/workspacenet/facade/restclient"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var route = restclient.OpGetResource.Pattern()

// wait fails the test if ch is not closed within 10 seconds.
func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// fixture is a test server whose single route goes through h.Wrap; it records
// whether the real handler ran and signals when a request enters and leaves.
type fixture struct {
	srv     *httptest.Server
	called  atomic.Int64
	entered chan struct{} // closed when the first request enters the server
	done    chan struct{} // closed when the first request's handler returned
}

func newFixture(t *testing.T, h *Hooks) *fixture {
	t.Helper()
	f := &fixture{entered: make(chan struct{}), done: make(chan struct{})}
	var once, onceDone sync.Once
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.called.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"resource":{"id":"`+r.PathValue("id")+`"}}`)
	})
	mux := http.NewServeMux()
	wrapped := h.Wrap(route, next)
	mux.Handle(route, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(f.entered) })
		defer onceDone.Do(func() { close(f.done) })
		wrapped.ServeHTTP(w, r)
	}))
	mux.Handle("POST /other", h.Wrap("POST /other", next))
	mux.Handle("/_stats", h.StatsHandler())
	mux.Handle("/_stats/reset", h.StatsHandler())
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) do(t *testing.T, ctx context.Context, method, path string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f.srv.Client().Do(req)
}

func (f *fixture) get(t *testing.T) *http.Response {
	t.Helper()
	resp, err := f.do(t, t.Context(), http.MethodGet, "/resources/v1/r1")
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type errBody struct {
	Message string `json:"message"`
	Type    string `json:"type"`
}

func TestNoHooksPassesThrough(t *testing.T) {
	h := New()
	f := newFixture(t, h)
	resp := f.get(t)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != `{"resource":{"id":"r1"}}` {
		t.Fatalf("got %d %s", resp.StatusCode, b)
	}
	if f.called.Load() != 1 {
		t.Fatalf("handler ran %d times", f.called.Load())
	}
}

func TestCountersAndStats(t *testing.T) {
	h := New()
	f := newFixture(t, h)
	for range 3 {
		f.get(t)
	}
	resp, err := f.do(t, t.Context(), http.MethodPost, "/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	want := map[string]int64{route: 3, "POST /other": 1}
	if got := h.Counts(); !equalCounts(got, want) {
		t.Fatalf("Counts = %v, want %v", got, want)
	}
	if h.Total() != 4 {
		t.Fatalf("Total = %d", h.Total())
	}

	stats := getStats(t, f)
	if !equalCounts(stats.Routes, want) || stats.Total != 4 || len(stats.Injected) != 0 {
		t.Fatalf("/_stats = %+v", stats)
	}

	// DELETE /_stats resets.
	resp, err = f.do(t, t.Context(), http.MethodDelete, "/_stats")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE /_stats: %d", resp.StatusCode)
	}
	if stats := getStats(t, f); len(stats.Routes) != 0 || stats.Total != 0 {
		t.Fatalf("after reset: %+v", stats)
	}

	// POST /_stats/reset resets too.
	f.get(t)
	if h.Total() != 1 {
		t.Fatalf("Total = %d", h.Total())
	}
	resp, err = f.do(t, t.Context(), http.MethodPost, "/_stats/reset")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || h.Total() != 0 || len(h.Counts()) != 0 {
		t.Fatalf("POST /_stats/reset: %d, total %d", resp.StatusCode, h.Total())
	}

	// Other methods are refused.
	resp, err = f.do(t, t.Context(), http.MethodPut, "/_stats")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") == "" {
		t.Fatalf("PUT /_stats: %d allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

func TestStatsEmptyRoutesIsObject(t *testing.T) {
	h := New()
	rec := httptest.NewRecorder()
	h.StatsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/_stats", nil))
	if got := strings.TrimSpace(rec.Body.String()); got != `{"routes":{},"injected":{},"total":0,"perSecond":{},"rateLimited":0,"traceparent":{}}` {
		t.Fatalf("body %s", got)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
}

func getStats(t *testing.T, f *fixture) Stats {
	t.Helper()
	resp, err := f.do(t, t.Context(), http.MethodGet, "/_stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /_stats: %d", resp.StatusCode)
	}
	var raw map[string]json.RawMessage
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &raw); err != nil || len(raw) != 6 || raw["routes"] == nil || raw["injected"] == nil || raw["total"] == nil ||
		raw["perSecond"] == nil || raw["rateLimited"] == nil || raw["traceparent"] == nil {
		t.Fatalf("GET /_stats body %s (%v)", b, err)
	}
	var s Stats
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func equalCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestFaultErrorStatuses(t *testing.T) {
	for _, tc := range []struct {
		f          Fault
		status     int
		typ        string
		retryAfter string
	}{
		{Fault{Kind: Fault500, Rate: 1}, 500, "internal", ""},
		{Fault{Kind: Fault503, Rate: 1}, 503, "unavailable", ""},
		{Fault{Kind: Fault429, Rate: 1, RetryAfter: 1500 * time.Millisecond}, 429, "rate_limited", "2"},
		{Fault{Kind: Fault429, Rate: 1, RetryAfter: 3 * time.Second}, 429, "rate_limited", "3"},
		{Fault{Kind: Fault429, Rate: 1}, 429, "rate_limited", ""},
	} {
		t.Run(string(tc.f.Kind)+"/"+tc.retryAfter, func(t *testing.T) {
			h := New()
			h.SetFault(route, tc.f)
			f := newFixture(t, h)
			resp := f.get(t)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			var e errBody
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Type != tc.typ || e.Message == "" {
				t.Fatalf("body %+v (%v)", e, err)
			}
			if got := resp.Header.Get("Retry-After"); got != tc.retryAfter {
				t.Fatalf("Retry-After %q, want %q", got, tc.retryAfter)
			}
			if resp.Header.Get(FaultHeader) != string(tc.f.Kind) {
				t.Fatalf("%s = %q", FaultHeader, resp.Header.Get(FaultHeader))
			}
			if f.called.Load() != 0 {
				t.Fatal("handler ran despite the fault")
			}
			if h.Total() != 1 {
				t.Fatalf("faulted request not counted: %d", h.Total())
			}
		})
	}
}

func TestFaultTruncated(t *testing.T) {
	h := New()
	h.SetFault(route, Fault{Kind: FaultTruncated, Rate: 1})
	f := newFixture(t, h)
	resp := f.get(t)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var v any
	err := json.NewDecoder(resp.Body).Decode(&v)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("decode error %v, want unexpected EOF", err)
	}
	if f.called.Load() != 0 {
		t.Fatal("handler ran despite the fault")
	}
}

func TestFaultMalformed(t *testing.T) {
	h := New()
	h.SetFault(AllRoutes, Fault{Kind: FaultMalformed, Rate: 1})
	f := newFixture(t, h)
	resp := f.get(t)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("body read: %v", err)
	}
	var v any
	var syn *json.SyntaxError
	if err := json.Unmarshal(b, &v); !errors.As(err, &syn) {
		t.Fatalf("unmarshal %s: %v, want a syntax error", b, err)
	}
}

func TestFaultReset(t *testing.T) {
	h := New()
	h.SetFault(route, Fault{Kind: FaultReset, Rate: 1})
	f := newFixture(t, h)
	resp, err := f.do(t, t.Context(), http.MethodGet, "/resources/v1/r1")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got response %d, want a connection error", resp.StatusCode)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v is a context error", err)
	}
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("error %v: want a connection reset", err)
	}
	if f.called.Load() != 0 {
		t.Fatal("handler ran despite the fault")
	}
}

func TestFaultHangEndsWithClientContext(t *testing.T) {
	h := New()
	h.SetFault(route, Fault{Kind: FaultHang, Rate: 1})
	f := newFixture(t, h)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		resp, err := f.do(t, ctx, http.MethodGet, "/resources/v1/r1")
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	wait(t, f.entered, "the request to reach the server")
	select {
	case err := <-errc:
		t.Fatalf("request ended before the cancel: %v", err)
	default:
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("client error %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("client did not return after cancel")
	}
	wait(t, f.done, "the hanging handler to end")
	if f.called.Load() != 0 {
		t.Fatal("handler ran despite the fault")
	}
}

func TestLatencyCancelledBeforeHandler(t *testing.T) {
	h := New()
	h.SetLatency(route, Latency{Fixed: time.Hour})
	f := newFixture(t, h)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		resp, err := f.do(t, ctx, http.MethodGet, "/resources/v1/r1")
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	wait(t, f.entered, "the request to reach the server")
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("client error %v", err)
	}
	wait(t, f.done, "the delayed handler to give up")
	if f.called.Load() != 0 {
		t.Fatal("handler ran although the client gave up during the latency")
	}
	if h.Total() != 1 {
		t.Fatalf("Total %d", h.Total())
	}
}

// fakeSleep records requested delays and returns at once.
type fakeSleep struct {
	mu sync.Mutex
	ds []time.Duration
}

func (s *fakeSleep) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ds = append(s.ds, d)
	return ctx.Err()
}

func (s *fakeSleep) take() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	ds := s.ds
	s.ds = nil
	return ds
}

func TestLatencyAppliedAndRouteWinsOverStar(t *testing.T) {
	h := New()
	fs := &fakeSleep{}
	h.sleep = fs.sleep
	h.SetLatency(AllRoutes, Latency{Fixed: 20 * time.Millisecond})
	f := newFixture(t, h)

	f.get(t)
	if got := fs.take(); len(got) != 1 || got[0] != 20*time.Millisecond {
		t.Fatalf("delays %v, want [20ms] from *", got)
	}
	h.SetLatency(route, Latency{Fixed: 50 * time.Millisecond})
	f.get(t)
	if got := fs.take(); len(got) != 1 || got[0] != 50*time.Millisecond {
		t.Fatalf("delays %v, want [50ms] from the route", got)
	}
	// Another route still uses "*".
	resp, err := f.do(t, t.Context(), http.MethodPost, "/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := fs.take(); len(got) != 1 || got[0] != 20*time.Millisecond {
		t.Fatalf("delays %v, want [20ms] for the other route", got)
	}
	// Clearing: zero latency removes the setting.
	h.SetLatency(route, Latency{})
	h.SetLatency(AllRoutes, Latency{})
	f.get(t)
	if got := fs.take(); len(got) != 0 {
		t.Fatalf("delays %v after clearing", got)
	}
	if f.called.Load() != 4 {
		t.Fatalf("handler ran %d times, want 4", f.called.Load())
	}
}

func TestJitterWithinBounds(t *testing.T) {
	h := New()
	h.Seed(1)
	h.SetLatency(route, Latency{Fixed: 10 * time.Millisecond, Jitter: 5 * time.Millisecond})
	seen := map[time.Duration]bool{}
	for range 200 {
		d, _ := h.plan(route)
		if d < 10*time.Millisecond || d >= 15*time.Millisecond {
			t.Fatalf("delay %v outside [10ms, 15ms)", d)
		}
		seen[d] = true
	}
	if len(seen) < 10 {
		t.Fatalf("only %d distinct delays: jitter not random", len(seen))
	}
}

func TestFaultRateAndPrecedence(t *testing.T) {
	h := New()
	h.Seed(42)
	h.SetFault(AllRoutes, Fault{Kind: Fault503, Rate: 0.5})
	hits := 0
	for range 1000 {
		if _, f := h.plan(route); f != nil {
			if f.Kind != Fault503 {
				t.Fatalf("kind %s", f.Kind)
			}
			hits++
		}
	}
	if hits < 350 || hits > 650 {
		t.Fatalf("rate 0.5 hit %d of 1000", hits)
	}

	// The route's own fault wins over "*".
	h.SetFault(route, Fault{Kind: Fault500, Rate: 1})
	for range 100 {
		if _, f := h.plan(route); f == nil || f.Kind != Fault500 {
			t.Fatalf("fault %+v, want 500 from the route", f)
		}
	}
	// Rate 0 clears the route's fault, so "*" applies again; ClearFaults clears all.
	h.SetFault(route, Fault{Kind: Fault500, Rate: 0})
	h.SetFault(AllRoutes, Fault{Kind: FaultHang, Rate: 1})
	if _, f := h.plan(route); f == nil || f.Kind != FaultHang {
		t.Fatalf("fault %+v, want hang from *", f)
	}
	h.ClearFaults()
	for range 100 {
		if _, f := h.plan(route); f != nil {
			t.Fatalf("fault %+v after ClearFaults", f)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	h := New()
	h.SetFault(AllRoutes, Fault{Kind: Fault500, Rate: 0.3})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				h.plan(route)
				h.Counts()
			}
		})
	}
	wg.Wait()
	if h.Total() != 800 || h.Counts()[route] != 800 {
		t.Fatalf("total %d counts %v", h.Total(), h.Counts())
	}
}

func TestParseSpecGood(t *testing.T) {
	rules, err := ParseSpec("*=20ms, *=20ms+5ms,GET /resources/v1/{id}=50ms," +
		"GET /resources/v1/{id}=503@0.5,*=429@0.1:2s,*=hang@0.01,POST /resources/bookings/v1=reset,*=0")
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{
		{Route: "*", Latency: &Latency{Fixed: 20 * time.Millisecond}},
		{Route: "*", Latency: &Latency{Fixed: 20 * time.Millisecond, Jitter: 5 * time.Millisecond}},
		{Route: route, Latency: &Latency{Fixed: 50 * time.Millisecond}},
		{Route: route, Fault: &Fault{Kind: Fault503, Rate: 0.5}},
		{Route: "*", Fault: &Fault{Kind: Fault429, Rate: 0.1, RetryAfter: 2 * time.Second}},
		{Route: "*", Fault: &Fault{Kind: FaultHang, Rate: 0.01}},
		{Route: restclient.OpCreateBooking.Pattern(), Fault: &Fault{Kind: FaultReset, Rate: 1}},
		{Route: "*", Latency: &Latency{}},
	}
	if len(rules) != len(want) {
		t.Fatalf("%d rules, want %d", len(rules), len(want))
	}
	for i, r := range rules {
		w := want[i]
		if r.Route != w.Route || (r.Latency == nil) != (w.Latency == nil) || (r.Fault == nil) != (w.Fault == nil) ||
			(r.Latency != nil && *r.Latency != *w.Latency) || (r.Fault != nil && *r.Fault != *w.Fault) {
			t.Errorf("rule %d = %s, want %s", i, show(r), show(w))
		}
	}
	if rules, err := ParseSpec("  "); err != nil || rules != nil {
		t.Fatalf("blank spec: %v %v", rules, err)
	}
}

func show(r Rule) string {
	b, _ := json.Marshal(r)
	return string(b)
}

func TestParseSpecBad(t *testing.T) {
	for _, s := range []string{
		"20ms",                       // no route
		"=20ms",                      // empty route
		"*=",                         // no value
		"*=fast",                     // neither
		"*=-5ms",                     // negative
		"*=20ms+",                    // empty jitter
		"*=20ms+x",                   // bad jitter
		"*=503@1.5",                  // rate > 1
		"*=503@-0.1",                 // rate < 0
		"*=503@half",                 // rate not a number
		"*=503@NaN",                  // NaN
		"*=503:2s",                   // retry-after on a non-429
		"*=429@0.1:soon",             // bad retry-after
		"*=404@0.5",                  // unknown kind (parsed as a duration: fails)
		"/resources/v1/{id}=50ms",    // no method
		"get /resources/v1/{id}=5ms", // lower-case method
		"GET resources=5ms",          // path without slash
		"*=20ms,,*=hang",             // empty item
		"*=rewrite",                  // a rewrite without field and value
		"*=rewrite:status",           // without a value
		"*=rewrite@0.5: :x",          // a blank field
		"*=rewrite@2:status:x",       // rate > 1
	} {
		if _, err := ParseSpec(s); err == nil {
			t.Errorf("ParseSpec(%q): no error", s)
		} else if !strings.HasPrefix(err.Error(), "hooks: spec item") {
			t.Errorf("ParseSpec(%q): error %q lacks context", s, err)
		}
	}
}

func TestApplySpecsAndFlags(t *testing.T) {
	h := New()
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(h.LatencyFlag(), "latency", "latency spec")
	fs.Var(h.FaultFlag(), "fault", "fault spec")
	err := fs.Parse([]string{
		"-latency", "*=20ms+5ms", "-latency", route + "=50ms",
		"-fault", route + "=503@0.5,*=429@1:2s",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := fs.Lookup("latency").Value.String(); got != "*=20ms+5ms,"+route+"=50ms" {
		t.Fatalf("latency flag String %q", got)
	}
	h.mu.Lock()
	lat, faults := h.latency[AllRoutes], h.faults[AllRoutes]
	rlat, rfault := h.latency[route], h.faults[route]
	h.mu.Unlock()
	if lat != (Latency{20 * time.Millisecond, 5 * time.Millisecond}) || rlat != (Latency{Fixed: 50 * time.Millisecond}) {
		t.Fatalf("latencies %v %v", lat, rlat)
	}
	if faults != (Fault{Kind: Fault429, Rate: 1, RetryAfter: 2 * time.Second}) || rfault != (Fault{Kind: Fault503, Rate: 0.5}) {
		t.Fatalf("faults %v %v", faults, rfault)
	}

	// The flags refuse the other kind, and a bad spec applies nothing.
	if err := fs.Parse([]string{"-latency", "*=hang"}); err == nil {
		t.Fatal("latency flag accepted a fault")
	}
	if err := h.ApplyFaultSpec("*=20ms"); err == nil {
		t.Fatal("ApplyFaultSpec accepted a latency")
	}
	if err := h.ApplySpec("*=500, *=bogus"); err == nil {
		t.Fatal("ApplySpec accepted a bad item")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.faults[AllRoutes].Kind != Fault429 {
		t.Fatalf("a failed spec changed the faults: %v", h.faults[AllRoutes])
	}
}
