package hooks

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestTimingsSplitSleepFromHandler: with the log on, a request is logged
// with its route, the injected latency it slept and its handler's time
// after it; off (the default) and after Reset, nothing is logged. Only
// lower bounds are asserted (a loaded machine only makes both longer).
func TestTimingsSplitSleepFromHandler(t *testing.T) {
	const latency, work = 15 * time.Millisecond, 10 * time.Millisecond
	h := New()
	h.SetLatency(route, Latency{Fixed: latency})
	srv := httptest.NewServer(h.Wrap(route, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(work)
		w.WriteHeader(http.StatusNoContent)
	})))
	defer srv.Close()
	get := func() {
		t.Helper()
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}

	get()
	if got := h.Timings(); len(got) != 0 {
		t.Fatalf("log off: %d timings", len(got))
	}
	h.RecordTimings(true)
	before := time.Now()
	get()
	got := h.Timings()
	if len(got) != 1 {
		t.Fatalf("%d timings, want 1", len(got))
	}
	if g := got[0]; g.Route != route || g.Arrived.Before(before) || g.Slept < latency || g.Handled < work {
		t.Errorf("timing %+v: want route %q, arrived after %v, slept ≥ %v, handled ≥ %v", g, route, before, latency, work)
	}
	h.Reset()
	if got := h.Timings(); len(got) != 0 {
		t.Fatalf("after Reset: %d timings", len(got))
	}
	h.RecordTimings(false)
	get()
	if got := h.Timings(); len(got) != 0 {
		t.Fatalf("log turned off: %d timings", len(got))
	}
}
