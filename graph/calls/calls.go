// Package calls collects, per GraphQL request, the upstream REST calls made
// for it: the data behind the optional extensions.upstream report and the
// per-request call count in logs. A Collector never holds credentials: only
// method, route template, status and duration.
package calls

import (
	"context"
	"sync"

	"github.com/workspacenet/facade/restclient"
)

// Call is one upstream call as reported to clients.
type Call struct {
	Method     string  `json:"method"`
	Path       string  `json:"path"` // route template, e.g. /resources/v1/{id}
	Status     int     `json:"status"`
	DurationMs float64 `json:"durationMs"`
	Retries    int     `json:"retries,omitempty"`
}

// Report is the value of extensions.upstream.
type Report struct {
	Count int    `json:"count"`
	Calls []Call `json:"calls"`
}

// Collector records the calls of one GraphQL request. Safe for concurrent use.
type Collector struct {
	mu    sync.Mutex
	calls []Call
}

type ctxKey struct{}

// WithCollector returns ctx carrying c.
func WithCollector(ctx context.Context, c *Collector) context.Context {
	return context.WithValue(ctx, ctxKey{}, c)
}

// FromContext returns the request's collector, or nil.
func FromContext(ctx context.Context) *Collector {
	c, _ := ctx.Value(ctxKey{}).(*Collector)
	return c
}

// Observe is a restclient.Observer: it records info in the collector of ctx,
// if any.
func Observe(ctx context.Context, info restclient.CallInfo) {
	c := FromContext(ctx)
	if c == nil {
		return
	}
	c.mu.Lock()
	c.calls = append(c.calls, Call{
		Method:     info.Method,
		Path:       info.Route,
		Status:     info.Status,
		DurationMs: float64(info.Duration.Microseconds()) / 1000,
		Retries:    info.Retries,
	})
	c.mu.Unlock()
}

// Count returns the number of calls recorded so far.
func (c *Collector) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls)
}

// Report returns a snapshot of the calls recorded so far, in completion order.
func (c *Collector) Report() Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Call, len(c.calls))
	copy(out, c.calls)
	return Report{Count: len(out), Calls: out}
}
