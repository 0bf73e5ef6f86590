// Package budget paces the requests the facade sends to a rate-limited
// upstream, per upstream client (restclient.Credentials.Identity): the real
// API allows 10 requests per second per client and answers 429 above it.
//
// Each client has a sliding log of its sends: a request goes when fewer than
// floor(RPS) were sent in the last second plus a little slack for network
// jitter (100 ms), and fewer than Burst in the matching part of it (no more
// than Burst back to back). So no rolling second ever holds more than RPS
// requests at the upstream. A request without a slot waits for one; the
// waiters of one client are served in the order their GraphQL requests
// arrived (Turn.Request, from Arrive), within a request by priority (lower
// first: calls on a request's critical path before leaf lookups), then in
// the order they came: K concurrent requests of C calls each all finish
// within about K·C/RPS, none starved by later ones. A request whose
// deadline comes before its estimated turn, plus one pacing step left for
// the call itself, is refused at once with an *Error carrying the wait it
// would have needed, and is never sent.
//
// The budget learns from the upstream (Learn): a 429 pauses the client's
// whole budget until its Retry-After, or, without one, for one second,
// doubling with each further 429; RateLimit-* and X-RateLimit-* headers that
// say nothing remains pause it until their reset. No learned pause, nor one
// read from Redis, lasts longer than Config.MaxPause: an upstream (or
// anything in front of it) asking for years pauses the client for MaxPause.
//
// Replicas. With Config.Redis, every replica using the same Redis paces a
// client together: the log is a sorted set in Redis (Key: wnf:budget:{client},
// one hash slot in a Cluster) that one Lua script trims, checks and appends
// to atomically, by Redis's clock; a learned pause is a member of it, so
// every replica respects a 429 that one of them got. The key has no TTL (an
// eviction policy of the volatile-* kind never evicts it: docs/redis.md);
// it holds at most a window of sends and disappears a window after its
// client's last one. The order of the waiters holds within each replica;
// across replicas the slot goes to whoever asks first once it is due, but
// background waiters (Turn.Background) give way to interactive ones on any
// replica: a replica whose first waiter is interactive and had to wait
// notes it in the client's wants (a sorted set, WantsKey, one member per
// replica, scored by when the note lapses: the wait and a window more,
// so a replica that dies holds nobody up for long), and the log refuses
// background sends while another replica's note stands.
//
// Redis never fails a request, and switching never lets more than the
// budget through: while Redis is unavailable for the client's key (redisx:
// degraded after a refused connection or timeouts in a row; with a Cluster,
// per master) each replica paces alone with its share of the budget,
// Config.Share, counting that share as spent for the first window (the
// others may have used the whole budget just before). When Redis is back it
// first adds its local sends to the Redis log and, for a window and the
// probes' hysteresis, sends only what both its share and the log allow;
// then the log alone.
package budget

import (
	"container/heap"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/workspacenet/facade/internal/policy/redisx"
	"github.com/workspacenet/facade/restclient"
)

// Config sizes a Budget.
type Config struct {
	// RPS is the most requests one client may send in any rolling second;
	// 0 turns pacing off.
	RPS float64
	// Burst is how many of them may go back to back (at least 1, at most RPS).
	Burst int
	// Redis, when set and healthy, holds the budget every replica shares
	// (see the package doc). Nil: each replica paces alone with its Share.
	Redis *redisx.Client
	// Replicas is how many replicas send with the same upstream clients (0
	// counts as 1). A replica that paces alone (no Redis, or Redis
	// unavailable) keeps to its Share so that together they keep to RPS.
	Replicas int
	// MaxPause caps each pause learned from the upstream (0:
	// DefaultMaxPause).
	MaxPause time.Duration
}

// Defaults: the real API's limit, with a small burst.
const (
	DefaultRPS   = 10
	DefaultBurst = 2
	// DefaultMaxPause is MaxPause's default.
	DefaultMaxPause = time.Minute
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
	case c.Replicas < 0:
		return fmt.Errorf("replicas %d must not be negative", c.Replicas)
	case c.MaxPause < 0:
		return fmt.Errorf("max pause %v must not be negative", c.MaxPause)
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

// Interval is the steady time between two requests of one client: its
// window (a second and the jitter slack) divided by the requests it holds.
func (c Config) Interval() time.Duration { return limitsOf(c).step }

// Share is the RPS and Burst one of Replicas replicas keeps to when it
// paces alone: RPS/Replicas, rounded down to whole requests when at least
// one (with a fractional rate the sizing formula would let some seconds hold
// one request more), Burst at most that and at least 1. With Replicas at
// most RPS the replicas together never send more than RPS in any rolling
// second; with more replicas than that, only on average. With Replicas 0
// or 1 it is RPS and Burst as they are.
func (c Config) Share() Config {
	n := max(c.Replicas, 1)
	if n == 1 || c.RPS == 0 {
		return Config{RPS: c.RPS, Burst: c.Burst}
	}
	rps, burst := c.RPS/float64(n), 1
	if rps >= 1 {
		rps = math.Floor(rps)
		burst = max(1, min(c.Burst, int(rps)))
	}
	return Config{RPS: rps, Burst: burst}
}

// Budget paces requests per client. A nil *Budget paces nothing. Safe for
// concurrent use.
type Budget struct {
	lim      limits // the whole budget: shared through Redis, or alone
	local    limits // Config.Share(): this replica's when it paces alone
	maxPause time.Duration

	rc      *redisx.Client        // nil: local only
	onGrant atomic.Pointer[Grant] // ObserveGrants
	id      string                // names this replica's entries in the shared logs
	members atomic.Uint64
	arrival atomic.Uint64

	mu      sync.Mutex
	clients map[string]*bucket
}

// limits is a sliding log's bound: at most n sends in any window, and at
// most burst in any bwin (window·burst/n: no more than burst back to back).
type limits struct {
	n, burst      int
	window, bwin  time.Duration
	step          time.Duration // window/n: the steady time between two sends
	windowMs, bMs int64
}

func limitsOf(c Config) limits {
	l := limits{n: 1, burst: 1}
	if c.RPS >= 1 {
		l.n = int(math.Floor(c.RPS))
		l.burst = max(1, min(c.Burst, l.n))
		l.window = time.Second + jitterSlack
	} else {
		l.window = time.Duration(float64(time.Second) / c.RPS)
	}
	l.bwin = l.window * time.Duration(l.burst) / time.Duration(l.n)
	l.step = l.window / time.Duration(l.n)
	l.windowMs = int64((l.window + time.Millisecond - 1) / time.Millisecond)
	l.bMs = int64((l.bwin + time.Millisecond - 1) / time.Millisecond)
	return l
}

// next is the earliest time at or after now a send is allowed after the
// sends of log (ascending).
func (l limits) next(log []time.Time, now time.Time) time.Time {
	at := now
	if k := len(log); k >= l.n {
		if t := log[k-l.n].Add(l.window); t.After(at) {
			at = t
		}
	}
	if k := len(log); k >= l.burst {
		if t := log[k-l.burst].Add(l.bwin); t.After(at) {
			at = t
		}
	}
	return at
}

// New returns the budget of c, or nil when c turns pacing off. c must be
// valid (Validate).
func New(c Config) *Budget {
	if c.RPS == 0 {
		return nil
	}
	b := &Budget{lim: limitsOf(c), local: limitsOf(c.Share()), clients: map[string]*bucket{}, maxPause: c.MaxPause, rc: c.Redis}
	if b.maxPause == 0 {
		b.maxPause = DefaultMaxPause
	}
	var id [6]byte
	_, _ = rand.Read(id[:])
	b.id = hex.EncodeToString(id[:])
	return b
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

// KeyPrefix starts the Redis key of a client's shared log:
// wnf:budget:{<client>} (a hash tag: one slot per client in a Cluster).
const KeyPrefix = "wnf:budget:"

// Key is the Redis key of client's shared log.
func Key(client string) string { return KeyPrefix + "{" + client + "}" }

// WantsPrefix starts the Redis key of the replicas waiting interactively
// for a slot of a client: wnf:wants:{<client>} (the log's hash slot).
const WantsPrefix = "wnf:wants:"

// WantsKey is the Redis key of the replicas waiting interactively for a
// slot of client (the package doc).
func WantsKey(client string) string { return WantsPrefix + "{" + client + "}" }

// mode is where a bucket's sends are counted.
type mode int

const (
	fresh      mode = iota // nothing decided yet
	shared                 // the Redis log alone
	local                  // this replica's share alone (Redis unavailable)
	recovering             // Redis is back: the Redis log and the share both
)

// bucket is one client's budget.
type bucket struct {
	client string
	key    string // Key(client)
	wants  string // WantsKey(client)

	mu        sync.Mutex
	mode      mode
	fence     time.Time   // local: no send before (the share counted spent on entry)
	shareAt   time.Time   // recovering: shared from then on
	primed    bool        // recovering: the local sends are in the Redis log
	sent      []time.Time // this replica's sends in the last window, ascending
	paused    time.Time   // no request before this
	next      time.Time   // shared: the Redis log's next slot, as it last said
	strikes   int         // 429s in a row without Retry-After
	queue     waiters
	seq       uint64
	pumping   bool
	trimming  bool          // a trim of the Redis log is scheduled
	wake      chan struct{} // pokes the pump: the queue or the pause changed
	lastGrant time.Time
	noted     time.Time // the pause an interactive waiter was noted for
	// interactive counts the waiters of queue that are not background.
	interactive int
}

func (bk *bucket) push(w *waiter) {
	heap.Push(&bk.queue, w)
	if !w.turn.Background {
		bk.interactive++
	}
}

func (bk *bucket) pop() *waiter {
	w := heap.Pop(&bk.queue).(*waiter)
	if !w.turn.Background {
		bk.interactive--
	}
	return w
}

func (bk *bucket) remove(w *waiter) {
	heap.Remove(&bk.queue, w.index)
	if !w.turn.Background {
		bk.interactive--
	}
}

func (b *Budget) bucket(client string) *bucket {
	b.mu.Lock()
	defer b.mu.Unlock()
	bk := b.clients[client]
	if bk == nil {
		if len(b.clients) >= maxIdleClients {
			b.dropIdle()
		}
		bk = &bucket{client: client, key: Key(client), wants: WantsKey(client), wake: make(chan struct{}, 1)}
		if b.rc == nil {
			bk.mode = local
		}
		b.clients[client] = bk
	}
	return bk
}

// dropIdle forgets clients with nobody waiting, no pause and no send in
// the last window.
func (b *Budget) dropIdle() {
	now := time.Now()
	for id, bk := range b.clients {
		bk.mu.Lock()
		idle := len(bk.queue) == 0 && !now.Before(bk.paused) && len(trimLog(bk.sent, now, b.lim.window)) == 0
		bk.mu.Unlock()
		if idle {
			delete(b.clients, id)
		}
	}
}

// trimLog drops the sends older than window.
func trimLog(log []time.Time, now time.Time, window time.Duration) []time.Time {
	i := 0
	for i < len(log) && !log[i].After(now.Add(-window)) {
		i++
	}
	if i == 0 {
		return log
	}
	return append(log[:0], log[i:]...)
}

// Turn orders a client's waiters: the background ones (Background: the
// pollers') after every other; then by Request (lower first: the request
// that arrived first, Arrive), then by Priority (lower first: calls on a
// request's critical path before its leaf lookups), then by arrival.
// With Redis, a background waiter also gives way to the interactive ones
// waiting on the other replicas (see the package doc).
type Turn struct {
	Background bool
	Request    uint64
	Priority   int
}

// Arrive returns the next request number: requests numbered in the order
// they arrive are served in that order (Turn.Request). 0 for a nil Budget.
func (b *Budget) Arrive() uint64 {
	if b == nil {
		return 0
	}
	return b.arrival.Add(1)
}

// Wait blocks until a request of client may be sent and returns how long it
// waited. It returns an *Error at once when ctx's deadline comes before the
// estimated turn plus one pacing step, and when the deadline passes while
// waiting; ctx.Err() when ctx is cancelled. Redis failing never makes Wait
// fail.
func (b *Budget) Wait(ctx context.Context, client string, t Turn) (time.Duration, error) {
	if b == nil {
		return 0, nil
	}
	bk := b.bucket(client)
	now := time.Now()
	bk.mu.Lock()
	if bk.mode == local && b.rc == nil && len(bk.queue) == 0 && !now.Before(bk.paused) && !b.local.next(bk.sent, now).After(now) {
		b.grant(bk, now, now, t.Background)
		bk.mu.Unlock()
		return 0, nil
	}
	w := &waiter{turn: t, seq: bk.seq, ready: make(chan struct{})}
	eta := b.eta(bk, now, w)
	// A turn must leave the call one pacing step before the deadline: a
	// call the deadline would cut still spends the client's slot.
	if dl, ok := ctx.Deadline(); ok && eta.Add(b.lim.step).After(dl) {
		bk.mu.Unlock()
		return 0, &Error{RetryAfter: eta.Sub(now)}
	}
	bk.seq++
	bk.push(w)
	if !bk.pumping {
		bk.pumping = true
		go b.pump(bk)
	} else {
		bk.poke()
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
		bk.remove(w)
		bk.poke()
	}
	var retry time.Duration
	if !granted && ctx.Err() == context.DeadlineExceeded {
		retry = time.Until(b.eta(bk, time.Now(), w))
	}
	bk.mu.Unlock()
	if granted {
		return time.Since(now), nil
	}
	if ctx.Err() == context.DeadlineExceeded {
		return time.Since(now), &Error{RetryAfter: retry}
	}
	return time.Since(now), ctx.Err()
}

// eta estimates when w would get its slot (bk.mu held): after the pause,
// the fence and the log's next slot, one step after another for every
// queued waiter that goes before it. Shared, other replicas' waiters are not
// counted.
func (b *Budget) eta(bk *bucket, now time.Time, w *waiter) time.Time {
	start := now
	if bk.paused.After(start) {
		start = bk.paused
	}
	lim := b.lim
	switch bk.mode {
	case local, recovering:
		lim = b.local
		if bk.fence.After(start) {
			start = bk.fence
		}
		if t := lim.next(bk.sent, start); t.After(start) {
			start = t
		}
	}
	if bk.mode != local && bk.next.After(start) {
		start = bk.next
	}
	ahead := 0
	for _, o := range bk.queue {
		if o != w && o.before(w) {
			ahead++
		}
	}
	return start.Add(time.Duration(ahead) * lim.step)
}

// poke wakes the pump (bk.mu held).
func (bk *bucket) poke() {
	select {
	case bk.wake <- struct{}{}:
	default:
	}
}

// grant records a slot granted at now, decided at at by the deciding
// clock, to a background waiter or not (bk.mu held).
func (b *Budget) grant(bk *bucket, now, at time.Time, background bool) {
	bk.record(now, b.lim.window)
	if f := b.onGrant.Load(); f != nil {
		(*f)(bk.client, at, background)
	}
}

// Grant is told of a slot granted to client, at the time the clock that
// decided it said (Redis's for the shared log, this process's otherwise),
// and whether it went to a background waiter (or to nobody: the waiter
// left meanwhile).
type Grant func(client string, at time.Time, background bool)

// ObserveGrants makes f told of every slot this replica is granted from
// now on; the requests reach the upstream later, by delays the budget does
// not control. f runs with the client's budget locked and must not block
// (tests check the budget's decisions with it; nil: no more).
func (b *Budget) ObserveGrants(f Grant) {
	switch {
	case b == nil:
	case f == nil:
		b.onGrant.Store(nil)
	default:
		b.onGrant.Store(&f)
	}
}

// record notes a send at now (bk.mu held).
func (bk *bucket) record(now time.Time, window time.Duration) {
	bk.sent = append(trimLog(bk.sent, now, window), now)
	bk.lastGrant = now
}

// retryFailed is how long the pump waits before asking Redis again after
// an operation failed without degrading Redis (one timeout of a few in a
// row: see redisx.TimeoutsToDegrade).
const retryFailed = 20 * time.Millisecond

// setMode moves bk to the mode Redis's health calls for (bk.mu held).
// Leaving shared pacing, the share counts as spent for a whole window (the
// other replicas may have spent the budget just before); coming back, the
// replica keeps its share while it puts its local sends in the Redis log
// and asks the log for each send, until every replica has had time to see
// Redis back (a window and the probes' hysteresis): then the log alone.
func (b *Budget) setMode(bk *bucket, now time.Time) {
	if b.rc == nil {
		bk.mode = local
		return
	}
	healthy := b.rc.HealthyKey(bk.key)
	switch {
	case !healthy && bk.mode != local:
		bk.mode, bk.fence = local, now.Add(b.lim.window)
	case healthy && bk.mode == fresh:
		bk.mode = shared
	case healthy && bk.mode == local:
		bk.mode, bk.primed = recovering, false
		bk.shareAt = now.Add(b.lim.window + redisx.ProbesToRecover*redisx.ProbeInterval)
	case healthy && bk.mode == recovering && !now.Before(bk.shareAt):
		bk.mode = shared
	}
}

// pump hands slots to the queued waiters, best first, until none is left.
func (b *Budget) pump(bk *bucket) {
	for {
		bk.mu.Lock()
		if len(bk.queue) == 0 {
			bk.pumping = false
			b.scheduleTrim(bk)
			bk.mu.Unlock()
			return
		}
		now := time.Now()
		if now.Before(bk.paused) {
			b.sleepOutPause(bk, now)
			continue
		}
		b.setMode(bk, now)
		if at := b.nextSlot(bk, now); at.After(now) {
			bk.mu.Unlock()
			bk.sleep(at.Sub(now))
			continue
		}
		if bk.mode == local {
			b.grantFirst(bk, now, now)
			bk.mu.Unlock()
			continue
		}
		b.askShared(bk, now)
	}
}

// sleepOutPause waits for the end of bk's pause, which runs at now (bk.mu
// held; released). An interactive waiter paused here is noted for the other
// replicas (once a pause): their polls give way at its end.
func (b *Budget) sleepOutPause(bk *bucket, now time.Time) {
	d := bk.paused.Sub(now)
	note := b.rc != nil && bk.mode != local && !bk.queue[0].turn.Background && bk.noted.Before(bk.paused)
	if note {
		bk.noted = bk.paused
	}
	bk.mu.Unlock()
	if note {
		b.notePaused(bk)
	}
	bk.sleep(d)
}

// nextSlot is the earliest time bk's mode lets a slot go, from now (bk.mu
// held): the local share's (after the fence, when local), and not before
// the shared log said to ask again.
func (b *Budget) nextSlot(bk *bucket, now time.Time) time.Time {
	at := now
	if bk.mode == local || bk.mode == recovering {
		at = b.local.next(bk.sent, now)
		if bk.mode == local && bk.fence.After(at) {
			at = bk.fence
		}
	}
	if bk.mode != local && bk.next.After(at) {
		at = bk.next
	}
	return at
}

// grantFirst grants a slot to the best waiter, at now (at by the deciding
// clock), and wakes it (bk.mu held; the queue not empty).
func (b *Budget) grantFirst(bk *bucket, now, at time.Time) {
	b.grant(bk, now, at, bk.queue[0].turn.Background)
	w := bk.pop()
	close(w.ready)
}

// askShared asks the shared log for a slot for the best waiter and acts on
// the answer (bk.mu held; released).
func (b *Budget) askShared(bk *bucket, now time.Time) {
	var primes []time.Time
	if bk.mode == recovering && !bk.primed {
		primes = slices.Clone(trimLog(bk.sent, now, b.lim.window))
	}
	class := askClass(bk)
	bk.mu.Unlock()
	a, err := b.ask(bk, primes, class)
	if err != nil && !redisx.IsKeyError(err) {
		// Counted against Redis; setMode goes local once it is
		// degraded. Until then, ask again shortly.
		if b.rc.HealthyKey(bk.key) {
			bk.sleep(retryFailed)
		}
		return
	}
	bk.mu.Lock()
	d := b.settle(bk, time.Now(), a, err)
	bk.mu.Unlock()
	if d > 0 {
		bk.sleep(d)
	}
}

// askClass is how the best waiter of bk asks the shared log (bk.mu held):
// "b" in the background, "i" interactive, "I" interactive with others
// waiting behind it (its note stays once it is served).
func askClass(bk *bucket) string {
	switch {
	case bk.queue[0].turn.Background:
		return "b"
	case bk.interactive > 1:
		return "I"
	default:
		return "i"
	}
}

// settle acts at now on the shared log's answer a, or on err, a key error
// (bk.mu held): it grants, pauses or puts off the next ask, and returns how
// long the pump sleeps before its next turn (0: none).
func (b *Budget) settle(bk *bucket, now time.Time, a answer, err error) time.Duration {
	if err != nil {
		// The client's key holds something else (written by hand, or by
		// another program): Redis is up, and this client paces with the
		// local share while its key stays broken.
		if at := b.local.next(bk.sent, now); at.After(now) || now.Before(bk.paused) || len(bk.queue) == 0 {
			return max(at.Sub(now), time.Millisecond)
		}
		b.grantFirst(bk, now, now)
		return 0
	}
	bk.primed = true
	switch {
	case a.granted:
		if len(bk.queue) > 0 && !now.Before(bk.paused) {
			b.grantFirst(bk, now, a.at)
		} else { // the slot is lost: Redis cannot take it back
			b.grant(bk, now, a.at, true)
		}
	case a.paused:
		if until := now.Add(min(a.wait, b.maxPause)); until.After(bk.paused) {
			bk.paused = until
		}
	default:
		bk.next = now.Add(max(a.wait, time.Millisecond))
	}
	return 0
}

// answer is what the Redis log said to a request for a slot.
type answer struct {
	granted bool
	paused  bool          // a shared pause runs for wait
	wait    time.Duration // when paused or refused: when to ask again
	at      time.Time     // granted: when, by Redis's clock
}

// slotScript is the shared sliding log of KEYS[1], a sorted set of sends
// scored by Redis's clock in ms, and a member "pause" scored by when the
// client's pause ends. It drops what is older than the window (ARGV[1]
// ms), adds the primed sends (pairs of age in ms and member from ARGV[8]),
// then grants a slot (adding member ARGV[5]) when no pause runs, fewer
// than ARGV[2] sends are in the window and fewer than ARGV[4] in the burst
// window (ARGV[3] ms), and, for a background ask (ARGV[6] "b"), no other
// replica than ARGV[7] notes an interactive wait in KEYS[2] (members:
// replicas, scored by when their note lapses). An interactive ask (ARGV[6]
// "i", or "I" when more interactive waiters of the replica wait behind it)
// refused, or paused, notes its wait there (until the slot or the pause's
// end, and a window more); granted, "i" removes the note and "I" keeps it. It answers {granted, wait ms, paused}. The set
// holds at most a window of sends (and an ended pause for one window
// more); it disappears when its last member is dropped, so it needs no
// TTL. KEYS[2] expires with its latest note.
var slotScript = redis.NewScript(`
local key, wants = KEYS[1], KEYS[2]
local window, n, bwin, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local class, replica = ARGV[6], ARGV[7]
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call("ZREMRANGEBYSCORE", key, "-inf", now - window)
for i = 8, #ARGV, 2 do
  redis.call("ZADD", key, "NX", now - tonumber(ARGV[i]), ARGV[i + 1])
end
local interactive = class == "i" or class == "I"
local function note(at)
  if interactive then
    redis.call("ZADD", wants, "GT", at + window, replica)
    local last = redis.call("ZRANGE", wants, "+inf", "-inf", "BYSCORE", "REV", "LIMIT", 0, 1, "WITHSCORES")
    redis.call("PEXPIREAT", wants, tonumber(last[2]) + 1)
  end
end
local p = redis.call("ZSCORE", key, "pause")
if p and tonumber(p) > now then
  note(tonumber(p))
  return {0, tonumber(p) - now, 1}
end
if ARGV[5] == "" then
  return {0, 0, 0}
end
local e = redis.call("ZRANGE", key, "+inf", "-inf", "BYSCORE", "REV", "LIMIT", 0, n + 1, "WITHSCORES")
local times = {}
for i = 1, #e, 2 do
  if e[i] ~= "pause" then
    times[#times + 1] = tonumber(e[i + 1])
  end
end
local at = now
if #times >= n then at = math.max(at, times[n] + window) end
if #times >= burst then at = math.max(at, times[burst] + bwin) end
if class == "b" then
  redis.call("ZREMRANGEBYSCORE", wants, "-inf", now)
  local others = redis.call("ZCARD", wants)
  if redis.call("ZSCORE", wants, replica) then others = others - 1 end
  if others > 0 then
    -- Ask again when the slot is due, or in a quarter step: the
    -- interactive replica takes it meanwhile.
    return {0, math.max(at - now, math.floor(window / n / 4), 1), 0}
  end
end
if at > now then
  note(at)
  return {0, at - now, 0}
end
redis.call("ZADD", key, now, ARGV[5])
if class == "i" then redis.call("ZREM", wants, replica) end
if class == "I" then note(now) end
return {1, 0, 0, now}
`)

// ask asks the Redis log for one slot of bk's client, first adding primes
// (this replica's local sends) to it, for a waiter of class (slotScript's
// ARGV[6]).
func (b *Budget) ask(bk *bucket, primes []time.Time, class string) (answer, error) {
	args := make([]any, 0, 7+2*len(primes))
	args = append(args, b.lim.windowMs, b.lim.n, b.lim.bMs, b.lim.burst, b.member(), class, b.id)
	now := time.Now()
	for _, t := range primes {
		args = append(args, now.Sub(t).Milliseconds(), b.member())
	}
	var a answer
	err := b.rc.DoKey(context.Background(), bk.key, func(ctx context.Context, r redis.UniversalClient) error {
		v, err := slotScript.Run(ctx, r, []string{bk.key, bk.wants}, args...).Int64Slice()
		if err != nil {
			return err
		}
		if len(v) < 3 || (v[0] == 1 && len(v) != 4) {
			return fmt.Errorf("budget script answered %v", v)
		}
		a = answer{granted: v[0] == 1, paused: v[2] == 1, wait: time.Duration(v[1]) * time.Millisecond}
		if a.granted {
			a.at = time.UnixMilli(v[3])
		}
		return nil
	})
	return a, err
}

// notePaused notes in the Redis log that an interactive waiter of bk's
// client waits for its pause to end (the slot script with no member: it
// grants nothing).
func (b *Budget) notePaused(bk *bucket) {
	_ = b.rc.DoKey(context.Background(), bk.key, func(ctx context.Context, r redis.UniversalClient) error {
		return slotScript.Run(ctx, r, []string{bk.key, bk.wants}, b.lim.windowMs, b.lim.n, b.lim.bMs, b.lim.burst, "", "i", b.id).Err()
	})
}

// member names a new entry of this replica in a shared log.
func (b *Budget) member() string {
	return b.id + ":" + strconv.FormatUint(b.members.Add(1), 36)
}

// trimScript drops the sends older than the window (ARGV[1] ms) from
// KEYS[1]: the key disappears with its last member.
var trimScript = redis.NewScript(`
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - tonumber(ARGV[1]))
return 0
`)

// scheduleTrim trims bk's Redis log a window after its last send or the
// end of its pause, whichever is later (a pause is a member scored at its
// end), unless the client is busy again: the log of a client gone idle
// leaves Redis. bk.mu is held.
func (b *Budget) scheduleTrim(bk *bucket) {
	last := maxTime(bk.lastGrant, bk.paused)
	if b.rc == nil || bk.trimming || last.IsZero() {
		return
	}
	bk.trimming = true
	time.AfterFunc(time.Until(last.Add(b.lim.window+10*time.Millisecond)), func() {
		bk.mu.Lock()
		bk.trimming = false
		idle := !bk.pumping
		later := maxTime(bk.lastGrant, bk.paused).After(last)
		if idle && later { // sent or paused again meanwhile
			b.scheduleTrim(bk)
		}
		bk.mu.Unlock()
		if idle && !later {
			_ = b.rc.DoKey(context.Background(), bk.key, func(ctx context.Context, r redis.UniversalClient) error {
				return trimScript.Run(ctx, r, []string{bk.key}, b.lim.windowMs).Err()
			})
		}
	})
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

// Hooks returns the call hooks that pace upstream calls with b: each call
// waits for its turn (turn: its place among its client's waiting calls) as
// the upstream identity of the credentials its context carries
// (restclient.IdentityFromContext), and b learns from every answer
// (Learn). waited, when set, is told how long each call waited. Queries
// and polls pace their calls with these hooks, each with its own turns.
func (b *Budget) Hooks(turn func(context.Context, restclient.CallStart) Turn, waited func(time.Duration)) restclient.CallHooks {
	return restclient.CallHooks{
		Send: func(ctx context.Context, cs restclient.CallStart) error {
			w, err := b.Wait(ctx, restclient.IdentityFromContext(ctx), turn(ctx, cs))
			if waited != nil {
				waited(w)
			}
			return err
		},
		Answered: func(ctx context.Context, _ restclient.CallStart, resp *http.Response) {
			b.Learn(restclient.IdentityFromContext(ctx), resp.StatusCode, resp.Header)
		},
	}
}

// Learn reads an answer the upstream gave client: a 429 pauses the client's
// budget (Retry-After, else one second doubling with each 429 in a row), and
// rate limit headers saying nothing remains pause it until their reset; each
// pause lasts MaxPause at most.
// With Redis, a pause that extends this replica's is shared with the other
// replicas (one Redis operation). The strikes of 429s without Retry-After
// are counted per replica, and a RateLimit-Remaining below what the local
// log leaves counts as sends in this replica's log.
func (b *Budget) Learn(client string, status int, h http.Header) {
	if b == nil {
		return
	}
	now := time.Now()
	bk := b.bucket(client)
	bk.mu.Lock()
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
		lim := b.local
		if bk.mode == shared {
			lim = b.lim
		}
		bk.sent = trimLog(bk.sent, now, b.lim.window)
		if remaining == 0 && reset.After(until) {
			until = reset
		} else if left := lim.n - len(bk.sent); remaining > 0 && remaining < left {
			for range left - remaining { // the upstream counts more than we did
				bk.sent = append(bk.sent, now)
			}
		}
	}
	until = minTime(until, now.Add(b.maxPause))
	extended := until.After(bk.paused)
	if extended {
		bk.paused = until
		bk.poke()
		if !bk.pumping {
			b.scheduleTrim(bk) // the shared pause leaves Redis with the log
		}
	}
	bk.mu.Unlock()
	if extended && b.rc != nil {
		b.sharePause(bk, until)
	}
}

// pauseScript makes the pause of KEYS[1] end ARGV[1] ms from now by Redis's
// clock, unless it already ends later.
var pauseScript = redis.NewScript(`
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call("ZADD", KEYS[1], "GT", now + tonumber(ARGV[1]), "pause")
return 0
`)

// pauseLeftScript answers the ms left of KEYS[1]'s pause (0: none).
var pauseLeftScript = redis.NewScript(`
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local p = redis.call("ZSCORE", KEYS[1], "pause")
if p and tonumber(p) > now then return tonumber(p) - now end
return 0
`)

// sharePause makes every replica respect bk's pause until until (best
// effort: without Redis the pause stays this replica's).
func (b *Budget) sharePause(bk *bucket, until time.Time) {
	ms := (time.Until(until) + time.Millisecond - 1) / time.Millisecond
	if ms <= 0 {
		return
	}
	_ = b.rc.DoKey(context.Background(), bk.key, func(ctx context.Context, r redis.UniversalClient) error {
		return pauseScript.Run(ctx, r, []string{bk.key}, int64(ms)).Err()
	})
}

// PausedUntil returns when client's pause ends (zero when not paused): this
// replica's, or the shared one when Redis answers and it ends later.
func (b *Budget) PausedUntil(client string) time.Time {
	if b == nil {
		return time.Time{}
	}
	bk := b.bucket(client)
	var shared time.Time
	if b.rc != nil {
		_ = b.rc.DoKey(context.Background(), bk.key, func(ctx context.Context, r redis.UniversalClient) error {
			ms, err := pauseLeftScript.Run(ctx, r, []string{bk.key}).Int64()
			if err == nil && ms > 0 {
				shared = time.Now().Add(min(time.Duration(ms)*time.Millisecond, b.maxPause))
			}
			return err
		})
	}
	bk.mu.Lock()
	defer bk.mu.Unlock()
	until := bk.paused
	if shared.After(until) {
		until = shared
	}
	if time.Now().Before(until) {
		return until
	}
	return time.Time{}
}

// Stats is what this replica's budget holds now (metrics).
type Stats struct {
	Clients int // upstream clients tracked
	Waiting int // requests waiting for a slot
	// Background are those of Waiting with a background turn (polls).
	Background int
	Paused     int // clients paused by a 429 or exhausted RateLimit headers
}

// Stats counts the budget's clients, waiters and pauses (a nil *Budget:
// zeros). It locks each client briefly: call it at scrape time, not per
// request.
func (b *Budget) Stats() Stats {
	var st Stats
	if b == nil {
		return st
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, bk := range b.clients {
		bk.mu.Lock()
		st.Clients++
		st.Waiting += len(bk.queue)
		for _, w := range bk.queue {
			if w.turn.Background {
				st.Background++
			}
		}
		if now.Before(bk.paused) {
			st.Paused++
		}
		bk.mu.Unlock()
	}
	return st
}

// rateLimitHeaders reads the remaining requests and the reset time from
// RateLimit-Remaining/RateLimit-Reset, the combined RateLimit header
// ("limit=10, remaining=0, reset=1"), or X-RateLimit-Remaining/-Reset. A
// reset above 10^9 is taken as a Unix time, else as seconds from now; one
// beyond the year 9999 (or not finite) as the year 9999 (Learn caps it).
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
			reset = time.Unix(int64(min(secs, maxUnix)), 0)
		} else if secs <= 86400 {
			reset = now.Add(time.Duration(secs * float64(time.Second)))
		}
	}
	return n, reset, true
}

// maxUnix is 9999-12-31T23:59:59Z in Unix seconds: any later reset is read
// as this one (converting a larger float to int64 is undefined).
const maxUnix = 253402300799

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.After(b) {
		return b
	}
	return a
}

// waiter is one request waiting for a slot.
type waiter struct {
	turn  Turn
	seq   uint64
	index int // in the heap; -1 once granted or removed
	ready chan struct{}
}

// before reports whether w is served before o.
func (w *waiter) before(o *waiter) bool {
	if w.turn.Background != o.turn.Background {
		return o.turn.Background
	}
	if w.turn.Request != o.turn.Request {
		return w.turn.Request < o.turn.Request
	}
	if w.turn.Priority != o.turn.Priority {
		return w.turn.Priority < o.turn.Priority
	}
	return w.seq < o.seq
}

// waiters is a min-heap by (request, priority, seq).
type waiters []*waiter

func (q waiters) Len() int           { return len(q) }
func (q waiters) Less(i, j int) bool { return q[i].before(q[j]) }
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
