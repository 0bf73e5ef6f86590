package hooks

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/workspacenet/facade/restclient"
)

func TestSeenRecordsTraceHeaders(t *testing.T) {
	h := New()
	var route = restclient.OpGetResource.Pattern()
	ok := h.Wrap(route, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	send := func(tp string) {
		r := httptest.NewRequest(http.MethodGet, "/resources/v1/1", nil)
		if tp != "" {
			r.Header.Set("traceparent", tp)
			r.Header.Set("tracestate", "k=v")
			r.Header.Set("baggage", "b=1")
		}
		ok.ServeHTTP(httptest.NewRecorder(), r)
	}
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	send(tp)
	send("")
	seen := h.Seen()
	if len(seen) != 2 || seen[0] != (Seen{Route: route, Traceparent: tp, Tracestate: "k=v", Baggage: "b=1"}) || seen[1] != (Seen{Route: route}) {
		t.Fatalf("Seen = %+v", seen)
	}
	if got := h.Traceparents(); len(got) != 1 || got[route] != 1 {
		t.Fatalf("Traceparents = %v, want 1 of 2 requests", got)
	}
	rec := httptest.NewRecorder()
	h.StatsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/_stats", nil))
	var stats Stats
	if err := json.Unmarshal(rec.Body.Bytes(), &stats); err != nil || stats.Traceparent[route] != 1 || stats.Routes[route] != 2 {
		t.Fatalf("/_stats = %s (%v)", rec.Body, err)
	}

	// Only the most recent maxRecent requests are kept, oldest first.
	for i := range maxRecent + 3 {
		send(fmt.Sprintf("00-%032x-00f067aa0ba902b7-01", i))
	}
	seen = h.Seen()
	if len(seen) != maxRecent || seen[0].Traceparent != fmt.Sprintf("00-%032x-00f067aa0ba902b7-01", 3) ||
		seen[maxRecent-1].Traceparent != fmt.Sprintf("00-%032x-00f067aa0ba902b7-01", maxRecent+2) {
		t.Fatalf("after %d requests: %d kept, first %q, last %q", maxRecent+5, len(seen), seen[0].Traceparent, seen[len(seen)-1].Traceparent)
	}
	if got := h.Traceparents()[route]; got != maxRecent+4 {
		t.Fatalf("Traceparents = %d, want %d", got, maxRecent+4)
	}
	h.Reset()
	if len(h.Seen()) != 0 || len(h.Traceparents()) != 0 {
		t.Fatal("Reset kept the recorded headers")
	}
}
