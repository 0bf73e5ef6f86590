// Package admission bounds the heavy work the facade does at once: the total
// estimated cost (graph/limits) of the operations in flight. An operation
// that does not fit waits up to Config.Wait for room and is otherwise refused
// with OVERLOADED, HTTP 503 and Retry-After, before any resolver runs (so
// before any upstream call). Its cost units are held until its HTTP response
// has been written.
//
// How it plugs into gqlgen. The cost is known only after gqlgen has parsed,
// validated and measured the operation (graph/limits' OperationContextMutator),
// so admission is an OperationContextMutator too, registered after the limits
// extension. An extension cannot release at the right moment nor choose the
// HTTP status (the transport, graph/overhttp, writes 200 or 400 for request errors), so
// Controller.Wrap wraps the gqlgen handler: it puts a per-request slot in the
// request context, which the extension fills (units held, or refused), swaps
// the status of a refused request for 503 with Retry-After in its
// ResponseWriter, and releases the units once the handler has returned, that
// is when the response is written.
package admission

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"golang.org/x/sync/semaphore"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/limits"
	"github.com/workspacenet/facade/internal/accesslog"
	"github.com/workspacenet/facade/internal/ctxval"
)

// Defaults: the bound holds several operations at the default cost limit
// (limits.DefaultMaxCost) at once; GraphiQL's introspection costs a few units.
const (
	DefaultMaxCostInFlight = 40000
	DefaultWait            = time.Second
)

// Config of the controller; MaxCostInFlight 0 turns admission off.
type Config struct {
	// MaxCostInFlight bounds the summed cost of the operations executing.
	// An operation costing more than the whole bound (possible only when the
	// cost limit is off or above it) counts as the whole bound: it runs
	// alone rather than never.
	MaxCostInFlight int
	// Wait is how long an operation waits for room before it is refused;
	// 0 refuses at once.
	Wait time.Duration
}

// Controller is the weighted semaphore of the cost in flight.
type Controller struct {
	cfg Config
	sem *semaphore.Weighted
	// retryAfterHeader is the Retry-After of a refusal, in whole seconds
	// (at least 1).
	retryAfterHeader string
	waiting          atomic.Int64
	held             atomic.Int64 // units acquired and not yet released
}

// New returns the controller of c, or nil when c.MaxCostInFlight is 0.
func New(c Config) *Controller {
	if c.MaxCostInFlight <= 0 {
		return nil
	}
	ctl := &Controller{cfg: c, sem: semaphore.NewWeighted(int64(c.MaxCostInFlight))}
	ctl.retryAfterHeader = strconv.Itoa(max(1, int(math.Ceil(c.Wait.Seconds()))))
	return ctl
}

// Waiting reports how many operations are waiting for room (tests, metrics).
func (c *Controller) Waiting() int64 { return c.waiting.Load() }

// InFlight reports the cost units held by the operations executing (metrics).
func (c *Controller) InFlight() int64 { return c.held.Load() }

// Limit is the bound of InFlight, MaxCostInFlight.
func (c *Controller) Limit() int64 { return int64(c.cfg.MaxCostInFlight) }

// slot is one request's admission state, shared by the request's Slot and
// the extension.
type slot struct {
	held    int64
	refused bool
}

type slotKey struct{}

// Slot is one request's admission (Begin): its state, and the ResponseWriter
// that answers a refused request 503, in one allocation.
type Slot struct {
	slot
	c *Controller
	w writer
	// ctx is the request's context carrying the slot (Begin).
	ctx ctxval.Context[slotKey, *slot]
}

// Begin starts the admission of one request: it returns ctx carrying the
// request's slot, which the extension fills, and the Slot, whose Writer the
// response must be written through and whose End releases the units once
// the response is written. Wrap does the same around a handler.
func (c *Controller) Begin(ctx context.Context, w http.ResponseWriter) (context.Context, *Slot) {
	s := &Slot{c: c}
	s.w = writer{ResponseWriter: w, s: &s.slot, retryAfter: c.retryAfterHeader}
	s.ctx = ctxval.Context[slotKey, *slot]{Context: ctx, V: &s.slot}
	return &s.ctx, s
}

// Writer is the ResponseWriter of the request (503 with Retry-After when
// refused).
func (s *Slot) Writer() http.ResponseWriter { return &s.w }

// End releases the units the request held.
func (s *Slot) End() {
	if s.held > 0 {
		s.c.sem.Release(s.held)
		s.c.held.Add(-s.held)
	}
}

// Wrap serves next with admission: see the package comment.
func (c *Controller) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, s := c.Begin(r.Context(), w)
		defer s.End()
		next.ServeHTTP(s.Writer(), r.WithContext(ctx))
	})
}

// retryAfter is the Retry-After of a refusal, in whole seconds (at least 1).
func (c *Controller) retryAfter() string { return c.retryAfterHeader }

// writer turns the status of a refused request into 503 with Retry-After.
type writer struct {
	http.ResponseWriter
	s          *slot
	retryAfter string
	wrote      bool
}

func (w *writer) WriteHeader(status int) {
	if w.wrote {
		return
	}
	w.wrote = true
	if w.s.refused {
		w.Header().Set("Retry-After", w.retryAfter)
		status = http.StatusServiceUnavailable
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *writer) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Extension is the gqlgen side of the controller; register it after the
// limits extension, whose measured cost it admits.
func (c *Controller) Extension() graphql.HandlerExtension { return extension{c} }

type extension struct{ c *Controller }

var _ graphql.OperationContextMutator = extension{}

func (extension) ExtensionName() string                   { return "Admission" }
func (extension) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext waits for room for the operation's cost, or
// refuses it with OVERLOADED.
func (x extension) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	s, _ := ctx.Value(slotKey{}).(*slot)
	st := limits.Of(oc)
	if s == nil || st == nil || s.held > 0 {
		return nil
	}
	bound := int64(x.c.cfg.MaxCostInFlight)
	n := min(max(int64(st.Cost), 1), bound)
	if x.c.sem.TryAcquire(n) {
		s.held = n
		x.c.held.Add(n)
		return nil
	}
	if x.c.cfg.Wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, x.c.cfg.Wait)
		x.c.waiting.Add(1)
		err := x.c.sem.Acquire(wctx, n)
		x.c.waiting.Add(-1)
		cancel()
		if err == nil {
			s.held = n
			x.c.held.Add(n)
			return nil
		}
	}
	s.refused = true
	accesslog.From(ctx).AddCodes(errcode.Overloaded)
	e := gqlerror.Errorf("the server is busy with other operations (cost %d does not fit in the %d in flight before %v): retry later", st.Cost, bound, x.c.cfg.Wait)
	e.Extensions = map[string]any{"code": errcode.Overloaded, "cost": st.Cost, "retryAfter": x.c.retryAfterSeconds()}
	return e
}

func (c *Controller) retryAfterSeconds() int {
	n, _ := strconv.Atoi(c.retryAfter())
	return n
}

// String describes the configuration (logs).
func (c *Controller) String() string {
	return fmt.Sprintf("admission: %d cost units in flight, wait %v", c.cfg.MaxCostInFlight, c.cfg.Wait)
}
