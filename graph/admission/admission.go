// Package admission bounds the heavy work the facade does at once: the total
// estimated cost (graph/limits) of the operations executing. An operation
// that does not fit waits up to Config.Wait for room and is otherwise refused
// with OVERLOADED, HTTP 503 and Retry-After, before any resolver runs (so
// before any upstream call). Its cost units are held while it executes and
// released when its response starts to be written: the transport
// (graph/overhttp) writes a response only once the operation has executed
// and the whole response is bytes in memory (its data bounded by
// -max-response-bytes), so a client that reads slowly, or not at all, holds
// no units.
//
// Fairness between upstream clients (the identity of the request's
// credentials; requests without any are one client). One client may hold up
// to Config.ClientShare units whatever the others do; beyond them it takes
// more only while ClientShare units stay free for the other clients. So one
// client's flood, throttled by its own rate budget while it holds its units,
// can take at most MaxCostInFlight-ClientShare of them and never refuses
// another client's operation. Waiting operations are served in arrival
// order, except that one held back by its own client's share does not hold
// back the others. No deadlock: an operation takes its units once, all at
// once, before it executes, and never waits for units while holding some.
//
// How it plugs into gqlgen. The cost is known only after gqlgen has parsed,
// validated and measured the operation (graph/limits' OperationContextMutator),
// so admission is an OperationContextMutator too, registered after the limits
// extension. An extension cannot release at the right moment nor choose the
// HTTP status (the transport writes 200 or 400 for request errors), so the
// handler begins each request's Slot (Begin): it puts the slot in the request
// context, which the extension fills (units held, or refused), and its
// ResponseWriter releases the units when the response's status is written,
// swapping the status of a refused request for 503 with Retry-After.
package admission

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/limits"
	"github.com/workspacenet/facade/internal/base/accesslog"
	"github.com/workspacenet/facade/internal/base/ctxval"
)

// Defaults: the bound holds four operations at the default cost limit
// (limits.DefaultMaxCost) at once, and one client may hold one of them
// whatever the others do; GraphiQL's introspection query costs about 2,100.
const (
	DefaultMaxCostInFlight = 40000
	DefaultClientShare     = limits.DefaultMaxCost
	DefaultWait            = time.Second
)

// Config of the controller; MaxCostInFlight 0 turns admission off.
type Config struct {
	// MaxCostInFlight bounds the summed cost of the operations executing.
	MaxCostInFlight int
	// ClientShare is the cost units one upstream client may hold whatever
	// the others do: beyond them it takes more only while ClientShare units
	// stay free for the other clients. 0, or MaxCostInFlight and above: no
	// share (one client may take every unit). An operation costing more than
	// one client may ever hold (MaxCostInFlight, or with a share the larger
	// of ClientShare and MaxCostInFlight-ClientShare; possible only when the
	// cost limit is off or above it) counts as that much: it runs with less
	// beside it rather than never.
	ClientShare int
	// Wait is how long an operation waits for room before it is refused;
	// 0 refuses at once.
	Wait time.Duration
}

// Controller holds the cost units in flight, in all and per client.
type Controller struct {
	cfg   Config
	limit int64 // MaxCostInFlight
	share int64 // ClientShare in force; 0: none
	most  int64 // the most units one operation counts for
	// retryAfterHeader is the Retry-After of a refusal, in whole seconds
	// (at least 1).
	retryAfterHeader string
	retryAfter       int

	mu      sync.Mutex
	total   int64
	clients map[string]int64 // units held per client (with a share only)
	queue   []*waiter        // arrival order

	waiting atomic.Int64
	held    atomic.Int64 // total, for metrics without the lock
}

type waiter struct {
	client  string
	n       int64
	granted bool
	ready   chan struct{} // closed when granted
}

// New returns the controller of c, or nil when c.MaxCostInFlight is 0.
func New(c Config) *Controller {
	if c.MaxCostInFlight <= 0 {
		return nil
	}
	ctl := &Controller{cfg: c, limit: int64(c.MaxCostInFlight), most: int64(c.MaxCostInFlight)}
	if c.ClientShare > 0 && c.ClientShare < c.MaxCostInFlight {
		ctl.share = int64(c.ClientShare)
		ctl.most = max(ctl.share, ctl.limit-ctl.share)
		ctl.clients = map[string]int64{}
	}
	ctl.retryAfter = max(1, int(math.Ceil(c.Wait.Seconds())))
	ctl.retryAfterHeader = strconv.Itoa(ctl.retryAfter)
	return ctl
}

// Waiting reports how many operations are waiting for room (tests, metrics).
func (c *Controller) Waiting() int64 { return c.waiting.Load() }

// InFlight reports the cost units held by the operations executing (metrics).
func (c *Controller) InFlight() int64 { return c.held.Load() }

// Limit is the bound of InFlight, MaxCostInFlight.
func (c *Controller) Limit() int64 { return c.limit }

// verdict is whether n more units fit for a client now.
type verdict int

const (
	fits      verdict = iota
	overShare         // the client's own share holds it back
	full              // the bound does
)

func (c *Controller) checkLocked(client string, n int64) verdict {
	if c.share > 0 && c.clients[client]+n > c.share && c.total+n > c.limit-c.share {
		return overShare
	}
	if c.total+n > c.limit {
		return full
	}
	return fits
}

func (c *Controller) takeLocked(client string, n int64) {
	c.total += n
	c.held.Add(n)
	if c.share > 0 {
		c.clients[client] += n
	}
}

// grantLocked admits the waiting operations that fit, in arrival order: one
// the bound holds back stops the pass (the later ones, even smaller, wait
// their turn); one its own client's share holds back does not.
func (c *Controller) grantLocked() {
	kept := c.queue[:0]
	blocked := false
	for _, w := range c.queue {
		if !blocked {
			switch c.checkLocked(w.client, w.n) {
			case fits:
				c.takeLocked(w.client, w.n)
				w.granted = true
				close(w.ready)
				continue
			case full:
				blocked = true
			}
		}
		kept = append(kept, w)
	}
	clear(c.queue[len(kept):])
	c.queue = kept
}

// acquire takes n units for client, waiting up to Config.Wait (or until ctx
// ends) for room. When it fails, ownShare reports that the client's own
// share held it back.
func (c *Controller) acquire(ctx context.Context, client string, n int64) (ok, ownShare bool) {
	c.mu.Lock()
	if len(c.queue) == 0 { // no one is waiting: no turn to respect
		v := c.checkLocked(client, n)
		if v == fits {
			c.takeLocked(client, n)
			c.mu.Unlock()
			return true, false
		}
		if c.cfg.Wait <= 0 {
			c.mu.Unlock()
			return false, v == overShare
		}
	}
	w := &waiter{client: client, n: n, ready: make(chan struct{})}
	c.queue = append(c.queue, w)
	c.grantLocked()
	if w.granted {
		c.mu.Unlock()
		return true, false
	}
	c.waiting.Add(1)
	c.mu.Unlock()

	timer := time.NewTimer(c.cfg.Wait)
	defer timer.Stop()
	select {
	case <-w.ready:
	case <-timer.C:
	case <-ctx.Done():
	}
	c.waiting.Add(-1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.granted {
		return true, false
	}
	if i := slices.Index(c.queue, w); i >= 0 {
		c.queue = slices.Delete(c.queue, i, i+1)
	}
	// The operations behind one that the bound held back may fit now.
	c.grantLocked()
	return false, c.checkLocked(client, n) == overShare
}

// release gives back n units of client and admits the waiting operations
// that now fit.
func (c *Controller) release(client string, n int64) {
	c.mu.Lock()
	c.total -= n
	c.held.Add(-n)
	if c.share > 0 {
		if c.clients[client] -= n; c.clients[client] <= 0 {
			delete(c.clients, client)
		}
	}
	c.grantLocked()
	c.mu.Unlock()
}

// slot is one request's admission state, shared by the request's Slot, its
// writer and the extension (all on the request's goroutine).
type slot struct {
	c       *Controller
	client  string
	held    int64
	refused bool
	keep    bool // held until End, not released when the status is written
}

func (s *slot) release() {
	if s.held > 0 {
		s.c.release(s.client, s.held)
		s.held = 0
	}
}

type slotKey struct{}

// Slot is one request's admission (Begin): its state, and the ResponseWriter
// that releases the units and answers a refused request 503, in one
// allocation.
type Slot struct {
	slot
	w writer
	// ctx is the request's context carrying the slot (Begin).
	ctx ctxval.Context[slotKey, *slot]
}

// Begin starts the admission of one request of client (the upstream identity
// of its credentials; "" without any): it returns ctx carrying the request's
// slot, which the extension fills, and the Slot. The response must be
// written through the Slot's Writer, which releases the units when the
// status is written; End releases them if no status was.
func (c *Controller) Begin(ctx context.Context, w http.ResponseWriter, client string) (context.Context, *Slot) {
	s := &Slot{slot: slot{c: c, client: client}}
	s.w = writer{ResponseWriter: w, s: &s.slot, retryAfter: c.retryAfterHeader}
	s.ctx = ctxval.Context[slotKey, *slot]{Context: ctx, V: &s.slot}
	return &s.ctx, s
}

// Writer is the ResponseWriter of the request.
func (s *Slot) Writer() http.ResponseWriter { return &s.w }

// End releases the units the request still holds (a request that wrote no
// status, or one that Keep kept).
func (s *Slot) End() { s.release() }

// Keep makes the request of ctx hold its units until its Slot's End rather
// than until its status is written: a response written in several parts
// (incremental delivery) is still executing after its first part. Call it
// on the request's goroutine before the status is written; nothing without
// a slot.
func Keep(ctx context.Context) {
	if s, ok := ctx.Value(slotKey{}).(*slot); ok {
		s.keep = true
	}
}

// writer releases the request's units when the status is written (the
// operation has executed by then), and turns the status of a refused
// request into 503 with Retry-After.
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
	if !w.s.keep {
		w.s.release()
	}
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
// refuses it with OVERLOADED. A subscription is not admitted as a whole:
// each of its events is (Hold).
func (x extension) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	s, _ := ctx.Value(slotKey{}).(*slot)
	st := limits.Of(oc)
	if s == nil || st == nil || s.held > 0 || oc.Operation != nil && oc.Operation.Operation == ast.Subscription {
		return nil
	}
	c := x.c
	n := min(max(int64(st.Cost), 1), c.most)
	ok, ownShare := c.acquire(ctx, s.client, n)
	if ok {
		s.held = n
		return nil
	}
	s.refused = true
	return c.refusal(ctx, st.Cost, ownShare)
}

// refusal is the OVERLOADED error of an operation of cost.
func (c *Controller) refusal(ctx context.Context, cost int, ownShare bool) *gqlerror.Error {
	accesslog.From(ctx).AddCodes(errcode.Overloaded)
	msg := fmt.Sprintf("the server is busy with other operations (cost %d does not fit in the %d in flight before %v): retry later", cost, c.limit, c.cfg.Wait)
	if ownShare {
		msg = fmt.Sprintf("the operations in flight with these credentials hold their share of the server (%d cost units, more only while %d stay free for other clients): cost %d found no room within %v; retry later", c.share, c.share, cost, c.cfg.Wait)
	}
	return gqlerr.New(errcode.Overloaded, msg, map[string]any{"cost": cost, "retryAfter": c.retryAfter})
}

// Hold admits work of cost for client that writes no HTTP status of its
// own (each event of a subscription, executed with the subscription's
// selection): it waits for room as an operation does and returns the
// release of its units, or the OVERLOADED error.
func (c *Controller) Hold(ctx context.Context, client string, cost int) (release func(), err *gqlerror.Error) {
	n := min(max(int64(cost), 1), c.most)
	ok, ownShare := c.acquire(ctx, client, n)
	if !ok {
		return nil, c.refusal(ctx, cost, ownShare)
	}
	return func() { c.release(client, n) }, nil
}

// String describes the configuration (logs).
func (c *Controller) String() string {
	return fmt.Sprintf("admission: %d cost units in flight, %d per client while others wait, wait %v", c.limit, c.share, c.cfg.Wait)
}
