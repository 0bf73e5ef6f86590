package hooks

import (
	"net/http"
	"sync"
)

// Request headers the service records for tests: the W3C Trace Context and
// Baggage a caller propagates (a facade with tracing on sends traceparent on
// every call).

// Seen is one request as Wrap saw it: its route and its trace headers (""
// when absent). Tests assert with it that every call carried traceparent,
// and what else reached the service.
type Seen struct {
	Route       string
	Traceparent string
	Tracestate  string
	Baggage     string
}

type seenLog struct {
	mu     sync.Mutex
	recent ring[Seen]       // the last requests
	traced map[string]int64 // route -> requests with a traceparent
}

func (l *seenLog) record(route string, r *http.Request) {
	s := Seen{Route: route, Traceparent: r.Header.Get("traceparent"), Tracestate: r.Header.Get("tracestate"), Baggage: r.Header.Get("baggage")}
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.Traceparent != "" {
		if l.traced == nil {
			l.traced = map[string]int64{}
		}
		l.traced[route]++
	}
	l.recent.add(s)
}

func (l *seenLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recent.reset()
	clear(l.traced)
}

// Seen returns the requests to wrapped routes since the last Reset, oldest
// first (the last 4096 at most), with their trace headers.
func (h *Hooks) Seen() []Seen {
	l := &h.seen
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.recent.all()
}

// Traceparents returns route -> requests that carried a traceparent header
// since the last Reset ("traceparent" in GET /_stats); compare with Counts.
func (h *Hooks) Traceparents() map[string]int64 {
	l := &h.seen
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int64, len(l.traced))
	for k, v := range l.traced {
		if v > 0 {
			out[k] = v
		}
	}
	return out
}
