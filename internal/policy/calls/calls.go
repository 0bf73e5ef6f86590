// Package calls collects, per GraphQL request, the upstream REST calls made
// for it: the data behind the optional extensions.upstream report and the
// per-request call count in logs. A Collector never holds credentials: only
// method, route template, status and duration.
package calls

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/workspacenet/facade/restclient"
)

// Call is one upstream call as reported to clients.
type Call struct {
	Method string `json:"method"`
	Path   string `json:"path"` // route template, e.g. /resources/v1/{id}
	Status int    `json:"status"`
	// StartMs is when the call started, in ms since the request's start
	// (Collector.Start): with DurationMs, the call's bar in a waterfall.
	StartMs    float64 `json:"startMs"`
	DurationMs float64 `json:"durationMs"`
	Retries    int     `json:"retries,omitempty"`
	// Shared is true when this request waited on an identical call another
	// request had already made (same credentials): no call of its own.
	Shared bool `json:"shared,omitempty"`
	// WaitedMs is the time the call waited for its upstream rate budget.
	WaitedMs float64 `json:"waitedMs,omitempty"`
	// RateLimited counts the 429 answers the call was retried after.
	RateLimited int `json:"rateLimited,omitempty"`
	// Cached is true when the response cache answered: no upstream call.
	Cached bool `json:"cached,omitempty"`
	// Batch is, for a call a loader made for one of several keys it
	// dispatched together (WithBatch), the number of those keys; each key is
	// its own call (the REST API has no batch endpoint), made concurrently.
	// 0 otherwise (with -loader-wait 0 every key is dispatched alone).
	Batch int `json:"batch,omitempty"`
	// Part is the part of an incrementally delivered response (@defer) the
	// call served: "initial" or the deferred part's label.
	Part string `json:"part,omitempty"`
}

type batchKey struct{}

// WithBatch returns ctx marking the calls made with it as made for one of n
// keys a loader dispatched together (n > 1); the report shows n as
// Call.Batch.
func WithBatch(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, batchKey{}, n)
}

// Report is the value of extensions.upstream.
type Report struct {
	Count int `json:"count"` // calls made (cache hits excluded)
	// CacheHits counts the calls the response cache answered.
	CacheHits int    `json:"cacheHits,omitempty"`
	Calls     []Call `json:"calls"`
	// FirstPayloadMs is, for a response delivered in parts (@defer,
	// @stream), when its first payload was written, in ms since the
	// request's start (Collector.FirstPayload): every call of a later part
	// starts after it.
	FirstPayloadMs *float64 `json:"firstPayloadMs,omitempty"`
}

// Collector records the calls of one GraphQL request. Safe for concurrent use.
type Collector struct {
	// Max caps the upstream calls one request may start; 0 means no cap.
	// Set it before the collector is shared.
	Max int
	// Start is the request's start, the origin of Call.StartMs; when zero,
	// the start of the first call recorded is. Set it before the collector
	// is shared.
	Start time.Time
	// Keep records each call for Report; without it the collector only
	// counts (the report is built only when a client asked for it). Set it
	// before the collector is shared.
	Keep bool
	// Part, when set, names the part of the response (incremental
	// delivery: "initial" or a deferred part's label) each call recorded
	// with Keep serves, from the call's context ("": not said). Set it
	// before the collector is shared.
	Part func(context.Context) string

	mu       sync.Mutex
	calls    []Call
	ended    int // calls that ended, cache hits included
	reserved int
	waited   time.Duration
	hits     int
	refused  *CredentialsRefusedError // set by the first 401
	first    time.Time                // FirstPayload
}

// CredentialsRefusedError refuses a call once the upstream has answered 401
// to an earlier call of the same request: the credentials are the same, so
// the answer would be too (and a bad header is not sent again and again).
type CredentialsRefusedError struct {
	Method, Route string // the call the upstream answered 401
}

func (e *CredentialsRefusedError) Error() string {
	return "the upstream service refused this request's credentials on " + e.Method + " " + e.Route + "; not called"
}

// LimitError refuses a call once the request's cap is reached.
type LimitError struct{ Max int }

func (e *LimitError) Error() string {
	return fmt.Sprintf("this request reached its limit of %d upstream calls; ask for less in one operation", e.Max)
}

// Hooks returns the restclient call hooks that cap and record the calls of
// c's request alone (graph's handler installs HooksFrom's, made once for
// every request).
func (c *Collector) Hooks() restclient.CallHooks {
	return restclient.CallHooks{Before: c.reserve, After: c.observe}
}

// HooksFrom returns the hooks Hooks returns, for every request at once:
// each call's hooks find the request's Collector with collector(ctx) (nil:
// the call is neither capped nor recorded). Made once, they cost a request
// no allocation, where Hooks' two method values cost two. collector must
// find the Collector in any context the hooks are installed in.
func HooksFrom(collector func(context.Context) *Collector) restclient.CallHooks {
	return restclient.CallHooks{
		Before: func(ctx context.Context, cs restclient.CallStart) error {
			if c := collector(ctx); c != nil {
				return c.reserve(ctx, cs)
			}
			return nil
		},
		After: func(ctx context.Context, info restclient.CallInfo) {
			if c := collector(ctx); c != nil {
				c.observe(ctx, info)
			}
		},
	}
}

// reserve counts one call about to be made. It refuses it, without counting
// it, with a *CredentialsRefusedError once an earlier call of the request was
// answered 401, and with a *LimitError once the request's cap is reached.
func (c *Collector) reserve(context.Context, restclient.CallStart) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refused != nil {
		return c.refused
	}
	if c.Max > 0 && c.reserved >= c.Max {
		return &LimitError{Max: c.Max}
	}
	c.reserved++
	return nil
}

// observe records a call that ended, and the first 401 of the request.
func (c *Collector) observe(ctx context.Context, info restclient.CallInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refused == nil && restclient.IsUnauthorized(info.Err) {
		c.refused = &CredentialsRefusedError{Method: info.Method, Route: info.Route}
	}
	c.ended++
	if info.Cached {
		c.hits++
	}
	c.waited += info.Waited
	if !c.Keep {
		return
	}
	batch, _ := ctx.Value(batchKey{}).(int)
	var part string
	if c.Part != nil {
		part = c.Part(ctx)
	}
	began := time.Now().Add(-info.Duration)
	if c.Start.IsZero() {
		c.Start = began
	}
	c.calls = append(c.calls, Call{
		Method:      info.Method,
		Path:        info.Route,
		Status:      info.Status,
		StartMs:     max(0, ms(began.Sub(c.Start))),
		DurationMs:  ms(info.Duration),
		Retries:     info.Retries,
		Shared:      info.Shared,
		WaitedMs:    ms(info.Waited),
		RateLimited: info.RateLimited,
		Cached:      info.Cached,
		Batch:       batch,
		Part:        part,
	})
}

// Origin returns the time Call.StartMs counts from: Start, or the start of
// the first call recorded when Start was not set (zero before that call).
func (c *Collector) Origin() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Start
}

// Waited returns the time the request's calls waited for the rate budget.
func (c *Collector) Waited() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waited
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Count returns the number of calls made so far (cache hits excluded).
func (c *Collector) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended - c.hits
}

// CacheHits returns the number of calls the response cache answered.
func (c *Collector) CacheHits() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits
}

// Report returns a snapshot of the calls recorded so far, in completion order
// (Calls is empty unless Keep is set).
func (c *Collector) Report() Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Call, len(c.calls))
	copy(out, c.calls)
	r := Report{Count: c.ended - c.hits, CacheHits: c.hits, Calls: out}
	if !c.first.IsZero() && !c.Start.IsZero() {
		at := max(0, ms(c.first.Sub(c.Start)))
		r.FirstPayloadMs = &at
	}
	return r
}

// FirstPayload records that the first payload of a response delivered in
// parts is written, now (Report.FirstPayloadMs).
func (c *Collector) FirstPayload() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Keep && c.first.IsZero() {
		c.first = time.Now()
	}
}
