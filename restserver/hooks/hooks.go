// Package hooks adds test and demo instrumentation to the local REST service:
// per-route request counters, injectable latency and injectable faults.
//
// Route keys are "METHOD /path/template" exactly as registered on
// http.ServeMux, e.g. "GET /resources/v1/{id}". The key "*" in SetLatency and
// SetFault applies to every route; a route's own setting wins over "*".
//
// # Faults
//
// A fault hits a fraction Rate (0..1) of the requests of its route; Rate 1
// hits every request, Rate 0 clears the fault. Injected responses carry the
// header X-Injected-Fault naming the kind (except "reset" and "hang", which
// send nothing). The kinds:
//
//	500        500 {"message": ..., "type": "internal"}
//	503        503 {"message": ..., "type": "unavailable"}
//	429        429 {"message": ..., "type": "rate_limited"}, with
//	           Retry-After in whole seconds (rounded up) when RetryAfter > 0
//	hang       writes nothing until the request context ends (client timeout
//	           or disconnect)
//	truncated  200, Content-Type application/json, a Content-Length larger
//	           than the body sent: the client reads half a JSON document and
//	           then an unexpected EOF
//	malformed  200, Content-Type application/json, a complete body that is
//	           not JSON
//	reset      hijacks the connection and closes it with SO_LINGER 0, so the
//	           client sees a connection reset (HTTP/2: the stream is aborted)
//	rewrite    the route's handler answers, then its 2xx JSON answer is sent
//	           with the fault's Rewrite applied: the upstream's future (a value
//	           or a field the service never writes, such as an order status the
//	           spec does not list), not its data; the database is unchanged
//
// A fault other than rewrite replaces the route's handler: the wrapped
// handler is not called.
//
// Injected faults are counted by route and kind (Injected, and "injected" in
// GET /_stats). A fault counts when its injection begins, so a hang counts
// while it still hangs; a request whose context ends during its latency
// injects nothing and counts nothing. A fault set on "*" counts under the
// route of the request it hit. A rewrite counts only when it changed an
// answer (an answer that is not a 2xx JSON object, or has no record its
// Rewrite selects, is sent as it came).
//
// # Flag syntax (ParseSpec)
//
// A spec is a comma-separated list of ROUTE=VALUE items (a flag may also be
// repeated). ROUTE is "*" or "METHOD /path" as registered; it contains no
// "=" or ",". VALUE is either a latency or a fault:
//
//	latency  FIXED[+JITTER]            Go durations: "20ms", "1s+250ms"
//	fault    KIND[@RATE][:RETRYAFTER]  KIND as above; RATE a fraction 0..1
//	                                   (default 1); RETRYAFTER a Go duration,
//	                                   only for 429
//	rewrite  rewrite[@RATE]:FIELD:VALUE  FIELD of every record of the answer
//	                                   set to VALUE: a JSON value when VALUE
//	                                   is one (12, true, null, "x"), else
//	                                   the string VALUE
//
// Examples:
//
//	*=20ms                          every route waits 20ms
//	*=20ms+5ms                      every route waits 20ms plus 0..5ms
//	GET /resources/v1/{id}=50ms     one route waits 50ms (wins over "*")
//	GET /resources/v1/{id}=503@0.5  half of its requests answer 503
//	*=429@0.1:2s                    10% answer 429 with Retry-After: 2
//	*=hang@0.01                     1% never answer
//	POST /resources/bookings/v1=reset
//	GET /shop/orders/v1=rewrite:status:onHold   every order "onHold"
//
// A latency of 0 clears the route's latency; a rate of 0 clears its fault.
package hooks

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/workspacenet/facade/internal/base/clock"
)

// AllRoutes is the route key that applies a latency or fault to every route.
const AllRoutes = "*"

// FaultHeader is the response header naming the kind of an injected fault
// response, so tests and validators can tell injected answers from real ones.
const FaultHeader = "X-Injected-Fault"

// Latency delays a request by Fixed plus a uniformly random duration in
// [0, Jitter).
type Latency struct {
	Fixed, Jitter time.Duration
}

// FaultKind names an injected fault.
type FaultKind string

// The fault kinds.
const (
	Fault500       FaultKind = "500"
	Fault503       FaultKind = "503"
	Fault429       FaultKind = "429"
	FaultHang      FaultKind = "hang"
	FaultTruncated FaultKind = "truncated"
	FaultMalformed FaultKind = "malformed"
	FaultReset     FaultKind = "reset"
	FaultRewrite   FaultKind = "rewrite"
)

// FaultKinds lists every fault kind.
var FaultKinds = []FaultKind{Fault500, Fault503, Fault429, FaultHang, FaultTruncated, FaultMalformed, FaultReset, FaultRewrite}

// Valid reports whether k is a known fault kind.
func (k FaultKind) Valid() bool {
	for _, v := range FaultKinds {
		if k == v {
			return true
		}
	}
	return false
}

// Fault injects Kind into a fraction Rate (0..1) of the requests.
// RetryAfter is the Retry-After of a 429 (0: no header); Rewrite is what a
// rewrite changes (nil: nothing, the answer is sent as it came).
type Fault struct {
	Kind       FaultKind
	Rate       float64
	RetryAfter time.Duration
	Rewrite    *Rewrite
}

// Hooks holds counters, latencies and faults. It is safe for concurrent use.
type Hooks struct {
	mu       sync.Mutex
	counts   map[string]int64
	total    int64
	injected map[string]map[FaultKind]int64 // route -> kind -> faults injected
	latency  map[string]Latency
	faults   map[string]Fault
	rng      *rand.Rand
	rates    rates   // the per-client rate limit and one-second counters
	seen     seenLog // trace headers of the requests (traceparent.go)
	timings  timingLog

	// sleep waits d or until ctx ends, returning ctx.Err() in that case;
	// replaced in tests.
	sleep func(ctx context.Context, d time.Duration) error
}

// New returns Hooks with no latency, no faults and zero counters; its random
// source is seeded randomly (see Seed).
func New() *Hooks {
	return &Hooks{
		counts:   map[string]int64{},
		injected: map[string]map[FaultKind]int64{},
		latency:  map[string]Latency{},
		faults:   map[string]Fault{},
		rng:      rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		rates:    rates{now: time.Now},
		sleep:    clock.Sleep,
	}
}

// Seed makes the jitter and fault draws reproducible.
func (h *Hooks) Seed(seed uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// SetLatency sets the latency of route ("*" = every route without its own
// setting). A zero Latency clears it.
func (h *Hooks) SetLatency(route string, l Latency) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l.Fixed <= 0 && l.Jitter <= 0 {
		delete(h.latency, route)
		return
	}
	h.latency[route] = Latency{Fixed: max(l.Fixed, 0), Jitter: max(l.Jitter, 0)}
}

// ClearLatencies removes every latency.
func (h *Hooks) ClearLatencies() {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.latency)
}

// SetFault sets the fault of route ("*" = every route without its own
// setting). Rate <= 0 clears it; Rate >= 1 hits every request.
func (h *Hooks) SetFault(route string, f Fault) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f.Rate <= 0 {
		delete(h.faults, route)
		return
	}
	f.Rate = min(f.Rate, 1)
	h.faults[route] = f
}

// ClearFaults removes every fault.
func (h *Hooks) ClearFaults() {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.faults)
}

// Counts returns route -> number of requests since the last Reset, for
// routes with at least one request.
func (h *Hooks) Counts() map[string]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.countsLocked()
}

func (h *Hooks) countsLocked() map[string]int64 {
	out := make(map[string]int64, len(h.counts))
	for k, v := range h.counts {
		if v > 0 {
			out[k] = v
		}
	}
	return out
}

// Injected returns route -> fault kind -> number of faults injected since
// the last Reset (see the package documentation for what counts). Routes
// are the keys given to Wrap ("GET /resources/v1/{id}", never "*"); only
// routes and kinds with at least one injected fault appear. The result is a
// copy the caller owns.
func (h *Hooks) Injected() map[string]map[FaultKind]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.injectedLocked()
}

func (h *Hooks) injectedLocked() map[string]map[FaultKind]int64 {
	out := make(map[string]map[FaultKind]int64, len(h.injected))
	for route, kinds := range h.injected {
		m := make(map[FaultKind]int64, len(kinds))
		for k, n := range kinds {
			if n > 0 {
				m[k] = n
			}
		}
		if len(m) > 0 {
			out[route] = m
		}
	}
	return out
}

// countInjected counts one fault of kind injected on route.
func (h *Hooks) countInjected(route string, kind FaultKind) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.injected[route]
	if m == nil {
		m = map[FaultKind]int64{}
		h.injected[route] = m
	}
	m[kind]++
}

// Total returns the number of requests to every route since the last Reset.
func (h *Hooks) Total() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.total
}

// Reset sets every counter to zero: requests and injected faults; and
// empties the logs (Seen, Timings). Latencies and faults are kept.
func (h *Hooks) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.counts)
	clear(h.injected)
	h.total = 0
	h.rates.reset()
	h.seen.reset()
	h.timings.reset()
}

// plan counts a request to route and draws its delay and fault (nil: none).
func (h *Hooks) plan(route string) (time.Duration, *Fault) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts[route]++
	h.total++

	var delay time.Duration
	l, ok := h.latency[route]
	if !ok {
		l, ok = h.latency[AllRoutes]
	}
	if ok {
		delay = l.Fixed
		if l.Jitter > 0 {
			delay += time.Duration(h.rng.Int64N(int64(l.Jitter)))
		}
	}

	f, ok := h.faults[route]
	if !ok {
		f, ok = h.faults[AllRoutes]
	}
	// Float64 is in [0, 1), so Rate 1 always faults.
	if ok && h.rng.Float64() < f.Rate {
		return delay, &f
	}
	return delay, nil
}

// Wrap counts every request to route (before anything else, so the count is
// what the client sent), then applies the route's latency and fault (counting
// the fault as injected under route) or, with no fault or a rewrite (which
// rewrites next's answer), calls next. If the request context
// ends during the latency, next is not called, nothing is written and no
// fault is injected. While RecordTimings is on, each request that reaches
// next is logged with its timing (Timings).
func (h *Hooks) Wrap(route string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.seen.record(route, r)
		delay, fault := h.plan(route)
		if retryAfter, refused := h.rates.admit(r); refused {
			h.rates.refuse(w, retryAfter)
			return
		}
		timed := h.timings.on.Load()
		var arrived time.Time
		if timed {
			arrived = time.Now()
		}
		if delay > 0 {
			if err := h.sleep(r.Context(), delay); err != nil {
				return
			}
		}
		switch {
		case fault != nil && fault.Kind == FaultRewrite:
			next = h.rewriting(route, fault.Rewrite, next)
		case fault != nil:
			h.countInjected(route, fault.Kind)
			injectFault(w, r, *fault)
			return
		}
		if !timed {
			next.ServeHTTP(w, r)
			return
		}
		woke := time.Now()
		next.ServeHTTP(w, r)
		h.timings.record(Timing{Route: route, Arrived: arrived, Slept: woke.Sub(arrived), Handled: time.Since(woke)})
	})
}

// StatsHandler serves the counters:
//
//	GET    /_stats        200 {"routes": {route: n, ...},
//	                           "injected": {route: {kind: n, ...}, ...},
//	                           "total": n}
//	DELETE /_stats        204, counters reset
//	POST   /_stats/reset  204, counters reset
//
// It does not look at the path beyond a trailing "/reset", so it can be
// mounted on both "/_stats" and "/_stats/reset". Other methods get 405.
func (h *Hooks) StatsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		isReset := strings.HasSuffix(r.URL.Path, "/reset")
		switch {
		case isReset && r.Method == http.MethodPost, !isReset && r.Method == http.MethodDelete:
			h.Reset()
			w.WriteHeader(http.StatusNoContent)
		case !isReset && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			h.mu.Lock()
			stats := Stats{Routes: h.countsLocked(), Injected: h.injectedLocked(), Total: h.total}
			h.mu.Unlock()
			stats.PerSecond, stats.RateLimited = h.MaxPerSecond(), h.RateLimited()
			stats.Traceparent = h.Traceparents()
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			_ = json.NewEncoder(w).Encode(stats)
		default:
			allow := "GET, HEAD, DELETE"
			if isReset {
				allow = "POST"
			}
			w.Header().Set("Allow", allow)
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "method "+r.Method+" is not allowed here")
		}
	})
}

// Stats is the body of GET /_stats: requests by route (Counts), injected
// faults by route and kind (Injected) and the total of requests (Total).
type Stats struct {
	Routes   map[string]int64               `json:"routes"`
	Injected map[string]map[FaultKind]int64 `json:"injected"`
	Total    int64                          `json:"total"`
	// PerSecond is, per client, the most requests it sent in any one
	// second (MaxPerSecond); RateLimited the requests the rate limit refused.
	PerSecond   map[string]int `json:"perSecond"`
	RateLimited int64          `json:"rateLimited"`
	// Traceparent is, per route, the requests that carried a W3C
	// traceparent header (Traceparents).
	Traceparent map[string]int64 `json:"traceparent"`
}
