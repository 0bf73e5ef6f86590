package livetransport

import (
	"container/list"
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/guard"
)

// Live connections and their slots
//
// A WebSocket or SSE connection is first opening: from its upgrade (or
// request) until its credentials are proven (connection_init, then
// Client.Authenticate), it counts only against the bound of opening
// connections of its remote address (LiveMaxInitPerAddress) and of the
// replica (LiveMaxConnections again, a pool of its own whose oldest
// connection makes room for a new one), so that no client, however many
// sockets it opens without proving anything, holds a slot of the others. Proven, it is open: it counts against the replica's
// LiveMaxConnections and its upstream client's
// LiveMaxConnectionsPerCredential. A WebSocket open with no operation for
// LiveIdleTimeout is closed (1000, with the reason). A restart (Restart)
// closes every connection: a WebSocket with 1012 and a close frame, an SSE
// stream without `complete`, so that clients reconnect, to another replica.

// Defaults of the connection bounds.
const (
	DefaultLiveMaxConnectionsPerCredential = 100
	DefaultLiveMaxInitPerAddress           = 16
	DefaultLiveIdleTimeout                 = 5 * time.Minute
)

// WebSocket close codes the live transports send (RFC 6455 and graphql-ws).
const (
	closeNormal       = 1000
	closeRestart      = 1012 // service restart: reconnect
	closeTryLater     = 1013 // try again later
	closeBadRequest   = 4400
	closeUnauthorized = 4401
	closeForbidden    = 4403
)

// liveConns holds the slots of one handler's live connections.
type liveConns struct {
	maxOpen, maxPerClient, maxInitPerAddr int // 0: no bound
	idle                                  time.Duration

	mu        sync.Mutex
	open      int
	perClient map[string]int
	byAddr    map[string]int // opening, by remote address
	nOpening  int
	oldest    list.List // the opening connections, oldest first
	all       map[*liveConn]struct{}
	stopped   bool
	empty     chan struct{} // closed when all empties after stopped
}

func newLiveConns(o *Options) *liveConns {
	return &liveConns{maxOpen: o.LiveMaxConnections, maxPerClient: o.LiveMaxConnectionsPerCredential,
		maxInitPerAddr: o.LiveMaxInitPerAddress, idle: o.LiveIdleTimeout,
		perClient: map[string]int{}, byAddr: map[string]int{}, all: map[*liveConn]struct{}{}, empty: make(chan struct{})}
}

// liveConn is one live connection: its slot, the bound of its
// subscriptions (a WebSocket's; an SSE request carries one operation) and,
// for a WebSocket, what its reader learned of the next operation (wsConn).
type liveConn struct {
	max int // subscriptions; 0: no bound
	n   atomic.Int64

	reg  *liveConns
	addr string
	ws   bool
	// end ends the connection with a WebSocket close code and reason (an
	// SSE stream ignores them); set before the connection is served.
	end func(code int, reason string)

	// Under reg.mu.
	state  connState
	queued *list.Element // in reg.oldest while opening
	client string
	ops    int
	timer  *time.Timer
	timerN uint64 // the idle timer's generation

	// The next operation read from the WebSocket (wsConn, liveParams).
	next struct {
		sync.Mutex
		refusal    *gqlerror.Error
		documentID string
	}
}

type connState uint8

const (
	connOpening connState = iota
	connOpen
	connGone
)

type liveConnKey struct{}

func connFrom(ctx context.Context) *liveConn {
	if c, ok := ctx.Value(liveConnKey{}).(*liveConn); ok {
		return c
	}
	return &liveConn{}
}

func (c *liveConn) take() bool {
	if c.n.Add(1) > int64(c.max) && c.max > 0 {
		c.n.Add(-1)
		return false
	}
	return true
}

func (c *liveConn) give() { c.n.Add(-1) }

// opening takes an opening slot for a connection from addr (a WebSocket
// when ws, ended by end), or refuses it: 503 TOO_MANY_CONNECTIONS when the
// replica's open connections are at LiveMaxConnections (or it is
// restarting), 429 when addr's opening ones are at LiveMaxInitPerAddress.
// When the replica's opening connections are at LiveMaxConnections, the
// oldest of them is ended (1013) to make room: a client proves its
// credentials in one round trip and an upstream call, so the oldest is the
// one that waits on purpose. The connection is released by release,
// whatever becomes of it.
func (l *liveConns) opening(addr string, ws bool, max int, end func(code int, reason string)) (*liveConn, *guard.Refusal) {
	l.mu.Lock()
	switch {
	case l.stopped:
		l.mu.Unlock()
		return nil, &guard.Refusal{Status: http.StatusServiceUnavailable, Code: errcode.TooManyConnections,
			Message: "this server is restarting; connect again"}
	case l.maxOpen > 0 && l.open >= l.maxOpen:
		l.mu.Unlock()
		return nil, &guard.Refusal{Status: http.StatusServiceUnavailable, Code: errcode.TooManyConnections,
			Message: fmt.Sprintf("too many live connections on this server (at most %d); retry later", l.maxOpen)}
	case l.maxInitPerAddr > 0 && l.byAddr[addr] >= l.maxInitPerAddr:
		l.mu.Unlock()
		return nil, &guard.Refusal{Status: http.StatusTooManyRequests, Code: errcode.TooManyConnections,
			Message: fmt.Sprintf("too many live connections opening from this address (at most %d that have not proven their credentials yet); retry later", l.maxInitPerAddr)}
	}
	var evicted *liveConn
	if l.maxOpen > 0 && l.nOpening >= l.maxOpen {
		evicted = l.oldest.Front().Value.(*liveConn)
		l.leaveOpeningLocked(evicted)
		evicted.state = connGone
	}
	c := &liveConn{max: max, reg: l, addr: addr, ws: ws, end: end, state: connOpening}
	l.byAddr[addr]++
	l.nOpening++
	c.queued = l.oldest.PushBack(c)
	l.all[c] = struct{}{}
	l.mu.Unlock()
	if evicted != nil {
		evicted.end(closeTryLater, "Try again later: too many connections opening")
	}
	return c, nil
}

// establish moves c, whose credentials (upstream identity client) are
// proven, from opening to open; it refuses with the reason when the
// replica or client is at its bound of open connections, or the replica
// is restarting.
func (l *liveConns) establish(c *liveConn, client string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.state != connOpening {
		return "connection closed", false
	}
	l.leaveOpeningLocked(c)
	c.state = connGone
	switch {
	case l.stopped:
		return "service restart", false
	case l.maxOpen > 0 && l.open >= l.maxOpen:
		return fmt.Sprintf("too many live connections on this server (at most %d)", l.maxOpen), false
	case l.maxPerClient > 0 && l.perClient[client] >= l.maxPerClient:
		return fmt.Sprintf("too many live connections for these credentials (at most %d)", l.maxPerClient), false
	}
	c.state, c.client = connOpen, client
	l.open++
	l.perClient[client]++
	l.idleLocked(c)
	return "", true
}

func (l *liveConns) leaveOpeningLocked(c *liveConn) {
	if l.byAddr[c.addr]--; l.byAddr[c.addr] <= 0 {
		delete(l.byAddr, c.addr)
	}
	l.nOpening--
	l.oldest.Remove(c.queued)
	c.queued = nil
}

// release gives back c's slot, once it has ended.
func (l *liveConns) release(c *liveConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch c.state {
	case connOpening:
		l.leaveOpeningLocked(c)
	case connOpen:
		l.open--
		if l.perClient[c.client]--; l.perClient[c.client] <= 0 {
			delete(l.perClient, c.client)
		}
	}
	c.state = connGone
	c.stopTimerLocked()
	delete(l.all, c)
	if l.stopped && len(l.all) == 0 && l.empty != nil {
		close(l.empty)
		l.empty = nil
	}
}

// begin counts an operation of c starting; finish its end.
func (l *liveConns) begin(c *liveConn) {
	l.mu.Lock()
	c.ops++
	c.stopTimerLocked()
	l.mu.Unlock()
}

func (l *liveConns) finish(c *liveConn) {
	l.mu.Lock()
	c.ops--
	l.idleLocked(c)
	l.mu.Unlock()
}

// idleLocked starts c's idle timer when c is an open WebSocket with no
// operation.
func (l *liveConns) idleLocked(c *liveConn) {
	if l.idle <= 0 || !c.ws || c.state != connOpen || c.ops > 0 || c.timer != nil {
		return
	}
	c.timerN++
	n := c.timerN
	c.timer = time.AfterFunc(l.idle, func() {
		l.mu.Lock()
		idle := c.timerN == n && c.state == connOpen && c.ops == 0
		c.timer = nil
		l.mu.Unlock()
		if idle {
			c.end(closeNormal, "idle: no subscription or query for "+l.idle.String())
		}
	})
}

func (c *liveConn) stopTimerLocked() {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
		c.timerN++
	}
}

// restart ends every connection as a restart of the server (1012), refuses
// new ones, and waits until they are gone or ctx ends.
func (l *liveConns) restart(ctx context.Context) {
	l.mu.Lock()
	l.stopped = true
	conns := make([]*liveConn, 0, len(l.all))
	for c := range l.all {
		conns = append(conns, c)
	}
	empty := l.empty
	if len(l.all) == 0 && empty != nil {
		close(empty)
		l.empty = nil
	}
	l.mu.Unlock()
	for _, c := range conns {
		c.end(closeRestart, "service restart: connect again")
	}
	if empty == nil {
		return
	}
	select {
	case <-empty:
	case <-ctx.Done():
	}
}

// counts returns the open and opening connections.
func (l *liveConns) counts() (open, opening int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open, l.nOpening
}

// A Restart ends the live connections of the handlers it is given
// (Options.Restart; graph.Options.LiveRestart) as a restart of the server
// does: every WebSocket is closed with 1012 (service restart) and a close
// frame, every SSE stream ends without `complete`, and new ones are
// refused, so that graphql-ws and graphql-sse clients reconnect, to
// another replica. Close it before the live.Hub, whose end would otherwise
// be delivered as the subscriptions' end.
type Restart struct {
	mu   sync.Mutex
	done bool
	regs []*liveConns
}

// NewRestart returns a Restart not yet closed.
func NewRestart() *Restart { return &Restart{} }

func (r *Restart) add(l *liveConns) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.regs = append(r.regs, l)
	done := r.done
	r.mu.Unlock()
	if done {
		l.restart(context.Background())
	}
}

// Close ends the connections and waits until each is gone (its client
// answered the close frame, or the WebSocket library gave up on it) or
// ctx ends.
func (r *Restart) Close(ctx context.Context) {
	r.mu.Lock()
	r.done = true
	regs := r.regs
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, l := range regs {
		wg.Go(func() { l.restart(ctx) })
	}
	wg.Wait()
}
