// Package budget paces the requests the facade sends to a rate-limited
// upstream, per upstream client (restclient.Credentials.Identity): the real
// API allows 10 requests per second per client and answers 429 above it.
//
// Each client has a token bucket (golang.org/x/time/rate) sized so that no
// rolling second ever holds more than RPS requests: Burst of them may go
// back to back, and the steady pace is then (RPS+1-Burst) per second minus a
// little slack (100 ms a second) for network jitter. A request without a token waits for one;
// waiters of one client are served by priority (lower first: calls on a
// request's critical path before leaf lookups), then in arrival order. A
// request whose deadline comes before its estimated turn is refused at once
// with an *Error carrying the wait it would have needed, and is never sent.
//
// The budget learns from the upstream (Learn): a 429 pauses the client's
// whole budget until its Retry-After, or, without one, for one second,
// doubling with each further 429; RateLimit-* and X-RateLimit-* headers that
// say nothing remains pause it until their reset.
package budget

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/workspacenet/facade/restclient"
)

// Config sizes a Budget.
type Config struct {
	// RPS is the most requests one client may send in any rolling second;
	// 0 turns pacing off.
	RPS float64
	// Burst is how many of them may go back to back (at least 1, at most RPS).
	Burst int
}

// Defaults: the real API's limit, with a small burst.
const (
	DefaultRPS   = 10
	DefaultBurst = 2
)

// jitterSlack is added to each rolling second the pace is computed for, so
// that requests sent on time do not arrive more than RPS to a second when
// the network delays some more than others.
const jitterSlack = 100 * time.Millisecond

// Validate reports a configuration that cannot pace.
func (c Config) Validate() error {
	switch {
	case c.RPS < 0 || math.IsNaN(c.RPS) || math.IsInf(c.RPS, 0):
		return fmt.Errorf("rps %v must be a non-negative number (0 = off)", c.RPS)
	case c.RPS == 0:
		return nil
	case c.Burst < 1:
		return fmt.Errorf("burst %d must be at least 1", c.Burst)
	case c.RPS >= 1 && float64(c.Burst) > c.RPS:
		return fmt.Errorf("burst %d must not exceed rps %v", c.Burst, c.RPS)
	case c.RPS < 1 && c.Burst != 1:
		return fmt.Errorf("burst %d must be 1 below one request per second", c.Burst)
	}
	return nil
}

// Interval is the steady time between two requests of one client once its
// burst is spent.
func (c Config) Interval() time.Duration {
	if c.RPS < 1 {
		return time.Duration(float64(time.Second) / c.RPS)
	}
	return time.Duration(float64(time.Second+jitterSlack) / (c.RPS + 1 - float64(c.Burst)))
}

// Budget paces requests per client. A nil *Budget paces nothing. Safe for
// concurrent use.
type Budget struct {
	cfg      Config
	interval time.Duration

	mu      sync.Mutex
	clients map[string]*bucket
}

// New returns the budget of c, or nil when c turns pacing off. c must be
// valid (Validate).
func New(c Config) *Budget {
	if c.RPS == 0 {
		return nil
	}
	return &Budget{cfg: c, interval: c.Interval(), clients: map[string]*bucket{}}
}

// Error refuses a request that could not get a slot before its deadline.
type Error struct {
	// RetryAfter is how long the request would have had to wait.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	return fmt.Sprintf("the upstream rate budget of these credentials has no slot before this request's deadline (next in about %v)", e.RetryAfter.Round(time.Millisecond))
}

// maxIdleClients bounds the buckets kept; beyond it idle ones are dropped.
const maxIdleClients = 4096

// bucket is one client's budget.
type bucket struct {
	lim *rate.Limiter

	mu      sync.Mutex
	paused  time.Time // no request before this
	strikes int       // 429s in a row without Retry-After
	queue   waiters
	seq     uint64
	pumping bool
	wake    chan struct{} // pokes the pump: the queue or the pause changed
}

func (b *Budget) bucket(client string) *bucket {
	b.mu.Lock()
	defer b.mu.Unlock()
	bk := b.clients[client]
	if bk == nil {
		if len(b.clients) >= maxIdleClients {
			b.dropIdle()
		}
		bk = &bucket{lim: rate.NewLimiter(rate.Every(b.interval), b.cfg.Burst), wake: make(chan struct{}, 1)}
		b.clients[client] = bk
	}
	return bk
}

// dropIdle forgets clients with nobody waiting, no pause and a full bucket.
func (b *Budget) dropIdle() {
	now := time.Now()
	for id, bk := range b.clients {
		bk.mu.Lock()
		idle := len(bk.queue) == 0 && !now.Before(bk.paused) && bk.lim.TokensAt(now) >= float64(b.cfg.Burst)
		bk.mu.Unlock()
		if idle {
			delete(b.clients, id)
		}
	}
}

// Wait blocks until a request of client may be sent and returns how long it
// waited. priority orders the waiters of one client (lower first). It
// returns an *Error at once when ctx's deadline comes before the estimated
// turn, and when the deadline passes while waiting; ctx.Err() when ctx is
// cancelled.
func (b *Budget) Wait(ctx context.Context, client string, priority int) (time.Duration, error) {
	if b == nil {
		return 0, nil
	}
	bk := b.bucket(client)
	now := time.Now()
	bk.mu.Lock()
	if len(bk.queue) == 0 && !now.Before(bk.paused) && bk.lim.AllowN(now, 1) {
		bk.mu.Unlock()
		return 0, nil
	}
	eta := bk.eta(now, priority, b.interval)
	if dl, ok := ctx.Deadline(); ok && eta.After(dl) {
		bk.mu.Unlock()
		return 0, &Error{RetryAfter: eta.Sub(now)}
	}
	w := &waiter{priority: priority, seq: bk.seq, ready: make(chan struct{})}
	bk.seq++
	heap.Push(&bk.queue, w)
	if !bk.pumping {
		bk.pumping = true
		go bk.pump()
	}
	bk.mu.Unlock()

	select {
	case <-w.ready:
		return time.Since(now), nil
	case <-ctx.Done():
	}
	bk.mu.Lock()
	granted := w.index < 0
	if !granted {
		heap.Remove(&bk.queue, w.index)
		bk.poke()
	}
	bk.mu.Unlock()
	if ctx.Err() == context.DeadlineExceeded {
		return time.Since(now), &Error{RetryAfter: time.Until(bk.etaLocked(priority, b.interval))}
	}
	return time.Since(now), ctx.Err()
}

// eta estimates when a new waiter of priority would get its token: after
// the pause, after every queued waiter that goes before it.
func (bk *bucket) eta(now time.Time, priority int, interval time.Duration) time.Time {
	start := now
	if bk.paused.After(start) {
		start = bk.paused
	}
	ahead := 0
	for _, w := range bk.queue {
		if w.priority <= priority {
			ahead++
		}
	}
	need := float64(ahead+1) - bk.lim.TokensAt(start)
	if need <= 0 {
		return start
	}
	return start.Add(time.Duration(need * float64(interval)))
}

func (bk *bucket) etaLocked(priority int, interval time.Duration) time.Time {
	bk.mu.Lock()
	defer bk.mu.Unlock()
	return bk.eta(time.Now(), priority, interval)
}

// poke wakes the pump (bk.mu held).
func (bk *bucket) poke() {
	select {
	case bk.wake <- struct{}{}:
	default:
	}
}

// pump hands tokens to the queued waiters, best first, until none is left.
func (bk *bucket) pump() {
	for {
		bk.mu.Lock()
		if len(bk.queue) == 0 {
			bk.pumping = false
			bk.mu.Unlock()
			return
		}
		now := time.Now()
		if now.Before(bk.paused) {
			d := bk.paused.Sub(now)
			bk.mu.Unlock()
			bk.sleep(d)
			continue
		}
		r := bk.lim.ReserveN(now, 1)
		d := r.DelayFrom(now)
		bk.mu.Unlock()
		if d > 0 && !bk.sleep(d) {
			r.Cancel() // woken early: look again
			continue
		}
		bk.mu.Lock()
		if time.Now().Before(bk.paused) || len(bk.queue) == 0 {
			r.Cancel()
			bk.mu.Unlock()
			continue
		}
		w := heap.Pop(&bk.queue).(*waiter)
		close(w.ready)
		bk.mu.Unlock()
	}
}

// sleep waits d, or until poked (false).
func (bk *bucket) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-bk.wake:
		return false
	}
}

// Learn reads an answer the upstream gave client: a 429 pauses the client's
// budget (Retry-After, else one second doubling with each 429 in a row), and
// rate limit headers saying nothing remains pause it until their reset.
func (b *Budget) Learn(client string, status int, h http.Header) {
	if b == nil {
		return
	}
	now := time.Now()
	bk := b.bucket(client)
	bk.mu.Lock()
	defer bk.mu.Unlock()
	until := time.Time{}
	if status == http.StatusTooManyRequests {
		if ra := restclient.ParseRetryAfter(h.Get("Retry-After"), now); ra > 0 {
			until = now.Add(ra)
			bk.strikes = 0
		} else {
			until = now.Add(time.Second << min(bk.strikes, 5))
			bk.strikes++
		}
	} else {
		bk.strikes = 0
	}
	if remaining, reset, ok := rateLimitHeaders(h, now); ok {
		if remaining == 0 && reset.After(until) {
			until = reset
		} else if tokens := bk.lim.TokensAt(now); remaining > 0 && float64(remaining) < tokens {
			bk.lim.AllowN(now, int(tokens)-remaining) // the upstream counts more than we did
		}
	}
	if until.After(bk.paused) {
		bk.paused = until
		bk.poke()
	}
}

// PausedUntil returns when client's pause ends (zero when not paused).
func (b *Budget) PausedUntil(client string) time.Time {
	if b == nil {
		return time.Time{}
	}
	bk := b.bucket(client)
	bk.mu.Lock()
	defer bk.mu.Unlock()
	if time.Now().Before(bk.paused) {
		return bk.paused
	}
	return time.Time{}
}

// rateLimitHeaders reads the remaining requests and the reset time from
// RateLimit-Remaining/RateLimit-Reset, the combined RateLimit header
// ("limit=10, remaining=0, reset=1"), or X-RateLimit-Remaining/-Reset. A
// reset above 10^9 is taken as a Unix time, else as seconds from now.
func rateLimitHeaders(h http.Header, now time.Time) (remaining int, reset time.Time, ok bool) {
	rem, res := h.Get("RateLimit-Remaining"), h.Get("RateLimit-Reset")
	if rem == "" {
		rem, res = h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset")
	}
	if rem == "" {
		for part := range strings.SplitSeq(h.Get("RateLimit"), ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
			switch strings.ToLower(k) {
			case "remaining", "r":
				rem = v
			case "reset", "t":
				res = v
			}
		}
	}
	n, err := strconv.Atoi(strings.TrimSpace(rem))
	if err != nil || n < 0 {
		return 0, time.Time{}, false
	}
	if secs, err := strconv.ParseFloat(strings.TrimSpace(res), 64); err == nil && secs > 0 {
		if secs > 1e9 {
			reset = time.Unix(int64(secs), 0)
		} else if secs <= 86400 {
			reset = now.Add(time.Duration(secs * float64(time.Second)))
		}
	}
	return n, reset, true
}

// waiter is one request waiting for a token.
type waiter struct {
	priority int
	seq      uint64
	index    int // in the heap; -1 once granted or removed
	ready    chan struct{}
}

// waiters is a min-heap by (priority, seq).
type waiters []*waiter

func (q waiters) Len() int { return len(q) }
func (q waiters) Less(i, j int) bool {
	if q[i].priority != q[j].priority {
		return q[i].priority < q[j].priority
	}
	return q[i].seq < q[j].seq
}
func (q waiters) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *waiters) Push(x any) {
	w := x.(*waiter)
	w.index = len(*q)
	*q = append(*q, w)
}
func (q *waiters) Pop() any {
	old := *q
	n := len(old)
	w := old[n-1]
	old[n-1] = nil
	w.index = -1
	*q = old[:n-1]
	return w
}
