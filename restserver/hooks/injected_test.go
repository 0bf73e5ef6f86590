package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workspacenet/facade/restclient"
)

// injectOne sends one request to route on f and lets the fault of kind run
// its course: a hang is ended by cancelling the request once it is in the
// server, a reset is a connection error.
func injectOne(t *testing.T, f *fixture, kind FaultKind) {
	t.Helper()
	if kind != FaultHang {
		resp, err := f.do(t, t.Context(), http.MethodGet, "/resources/v1/r1")
		if kind == FaultReset {
			if err == nil {
				resp.Body.Close()
				t.Fatalf("reset: got a response %d", resp.StatusCode)
			}
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get(FaultHeader); got != string(kind) {
			t.Fatalf("%s = %q, want %q", FaultHeader, got, kind)
		}
		return
	}
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
		t.Fatalf("hang: client error %v, want context.Canceled", err)
	}
	wait(t, f.done, "the hanging handler to end")
}

func TestInjectedCountsEveryKind(t *testing.T) {
	for _, kind := range FaultKinds {
		t.Run(string(kind), func(t *testing.T) {
			h := New()
			h.SetFault(route, Fault{Kind: kind, Rate: 1, Rewrite: &Rewrite{Set: map[string]any{"status": "x"}}})
			f := newFixture(t, h)
			injectOne(t, f, kind)
			want := map[string]map[FaultKind]int64{route: {kind: 1}}
			if got := h.Injected(); !equalInjected(got, want) {
				t.Fatalf("Injected = %v, want %v", got, want)
			}
			if got := getStats(t, f); !equalInjected(got.Injected, want) || got.Routes[route] != 1 {
				t.Fatalf("/_stats = %+v, want injected %v", got, want)
			}
			if ran := f.called.Load(); ran != 0 && kind != FaultRewrite || ran != 1 && kind == FaultRewrite {
				t.Fatalf("handler ran %d times (a rewrite runs it, other faults replace it)", ran)
			}
		})
	}
}

// TestInjectedMatchesFaultAnswers draws faults at rates below 1 on two routes
// (one through "*") and checks that Injected equals the answers that carry
// the fault header, counted under each route, never under "*".
func TestInjectedMatchesFaultAnswers(t *testing.T) {
	h := New()
	h.Seed(7)
	h.SetFault(AllRoutes, Fault{Kind: Fault503, Rate: 0.5})
	h.SetFault("POST /other", Fault{Kind: Fault429, Rate: 0.3})
	f := newFixture(t, h)
	seen := map[string]map[FaultKind]int64{}
	note := func(route string, resp *http.Response) {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if k := resp.Header.Get(FaultHeader); k != "" {
			if seen[route] == nil {
				seen[route] = map[FaultKind]int64{}
			}
			seen[route][FaultKind(k)]++
		}
	}
	for range 200 {
		resp, err := f.do(t, t.Context(), http.MethodGet, "/resources/v1/r1")
		if err != nil {
			t.Fatal(err)
		}
		note(route, resp)
		resp, err = f.do(t, t.Context(), http.MethodPost, "/other")
		if err != nil {
			t.Fatal(err)
		}
		note("POST /other", resp)
	}
	if seen[route][Fault503] == 0 || seen["POST /other"][Fault429] == 0 || seen[route][Fault503] == 200 {
		t.Fatalf("fault answers %v: want some but not all of each route faulted", seen)
	}
	got := h.Injected()
	if !equalInjected(got, seen) {
		t.Fatalf("Injected = %v, want the fault answers %v", got, seen)
	}
	if _, ok := got[AllRoutes]; ok {
		t.Fatalf("Injected has a %q key: %v", AllRoutes, got)
	}
	if n := 400 - seen[route][Fault503] - seen["POST /other"][Fault429]; f.called.Load() != n {
		t.Fatalf("handler ran %d times, want %d (the requests without a fault)", f.called.Load(), n)
	}
}

// TestInjectedNotCountedWhenLatencyEnds: a request whose context ends during
// its latency gets no fault, so none is counted (the request is).
func TestInjectedNotCountedWhenLatencyEnds(t *testing.T) {
	h := New()
	h.sleep = func(ctx context.Context, d time.Duration) error { return context.Canceled }
	h.SetLatency(route, Latency{Fixed: time.Hour})
	h.SetFault(route, Fault{Kind: Fault500, Rate: 1})
	f := newFixture(t, h)
	resp := f.get(t)
	if resp.Header.Get(FaultHeader) != "" {
		t.Fatalf("fault %q injected after the latency ended the request", resp.Header.Get(FaultHeader))
	}
	if got := h.Injected(); len(got) != 0 {
		t.Fatalf("Injected = %v, want none", got)
	}
	if h.Counts()[route] != 1 {
		t.Fatalf("Counts = %v, want the request counted", h.Counts())
	}
}

func TestInjectedResetAndCopy(t *testing.T) {
	h := New()
	h.SetFault(route, Fault{Kind: Fault500, Rate: 1})
	f := newFixture(t, h)
	for range 3 {
		injectOne(t, f, Fault500)
	}
	got := h.Injected()
	got[route][Fault500] = 99
	got["GET /x"] = map[FaultKind]int64{Fault503: 1}
	want := map[string]map[FaultKind]int64{route: {Fault500: 3}}
	if again := h.Injected(); !equalInjected(again, want) {
		t.Fatalf("changing Injected's result changed the hooks: %v", again)
	}

	h.Reset()
	if got := h.Injected(); len(got) != 0 {
		t.Fatalf("after Reset: Injected = %v", got)
	}
	// The fault is kept: the next request injects and counts again.
	injectOne(t, f, Fault500)
	if got := h.Injected(); !equalInjected(got, map[string]map[FaultKind]int64{route: {Fault500: 1}}) {
		t.Fatalf("after Reset and one request: Injected = %v", got)
	}
	// DELETE /_stats resets the injected counts too.
	resp, err := f.do(t, t.Context(), http.MethodDelete, "/_stats")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := h.Injected(); resp.StatusCode != http.StatusNoContent || len(got) != 0 {
		t.Fatalf("DELETE /_stats: %d, Injected = %v", resp.StatusCode, got)
	}
}

func TestStatsInjectedJSON(t *testing.T) {
	h := New()
	h.SetFault(route, Fault{Kind: Fault503, Rate: 1})
	rec := httptest.NewRecorder()
	h.Wrap(route, http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/resources/v1/r1", nil))
	rec = httptest.NewRecorder()
	h.StatsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/_stats", nil))
	var body struct {
		Injected map[string]map[string]int64 `json:"injected"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if n := body.Injected[restclient.OpGetResource.Pattern()]["503"]; n != 1 || len(body.Injected) != 1 {
		t.Fatalf("/_stats body %s: want injected {%q: {\"503\": 1}}", rec.Body.Bytes(), route)
	}
}

func TestInjectedConcurrent(t *testing.T) {
	h := New()
	h.SetFault(AllRoutes, Fault{Kind: Fault500, Rate: 0.3})
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	wrapped := h.Wrap(route, next)
	var faulted atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				rec := httptest.NewRecorder()
				wrapped.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/resources/v1/r1", nil))
				if rec.Header().Get(FaultHeader) != "" {
					faulted.Add(1)
				}
				h.Injected()
			}
		})
	}
	wg.Wait()
	if got := h.Injected()[route][Fault500]; got != faulted.Load() || got == 0 {
		t.Fatalf("Injected %d, fault answers %d", got, faulted.Load())
	}
}

func equalInjected(a, b map[string]map[FaultKind]int64) bool {
	return maps.EqualFunc(a, b, func(x, y map[FaultKind]int64) bool { return maps.Equal(x, y) })
}
