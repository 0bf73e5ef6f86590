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
// request whose deadline comes before its estimated turn, plus one pacing
// interval left for the call itself, is refused at once with an *Error
// carrying the wait it would have needed, and is never sent.
//
// The budget learns from the upstream (Learn): a 429 pauses the client's
// whole budget until its Retry-After, or, without one, for one second,
// doubling with each further 429; RateLimit-* and X-RateLimit-* headers that
// say nothing remains pause it until their reset. No learned pause, nor one
// read from Redis, lasts longer than Config.MaxPause: an upstream (or
// anything in front of it) asking for years pauses the client for MaxPause.
//
// Replicas. With Config.Redis, every replica using the same Redis paces a
// client together: the tokens come from one GCRA in Redis (redis_rate, key
// wnf:budget:<client>) with the same rate and burst as the local bucket, and
// a learned pause is shared too (key wnf:pause:<client>, expiring when the
// pause ends), so every replica respects a 429 that one of them got. The
// order of the waiters (priority, then arrival) holds within each replica;
// across replicas the token goes to whoever asks first once it is due.
// Redis never fails a request: while it is unavailable (redisx degraded)
// each replica paces alone with its share of the budget, RPS/Replicas
// (Config.Share), and its own pause, and it uses Redis again when Redis is
// back. Each Redis operation is bounded by redisx's OpTimeout.
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

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/workspacenet/facade/internal/redisx"
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

// Interval is the steady time between two requests of one client once its
// burst is spent.
func (c Config) Interval() time.Duration {
	if c.RPS < 1 {
		return time.Duration(float64(time.Second) / c.RPS)
	}
	return time.Duration(float64(time.Second+jitterSlack) / (c.RPS + 1 - float64(c.Burst)))
}

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
	cfg      Config
	interval time.Duration // between two tokens of the shared budget
	local    Config        // cfg.Share(): the bucket kept in each replica
	localInt time.Duration // local.Interval()
	maxPause time.Duration

	rc    *redisx.Client // nil: local only
	gcra  *redis_rate.Limiter
	limit redis_rate.Limit

	mu      sync.Mutex
	clients map[string]*bucket
}

// New returns the budget of c, or nil when c turns pacing off. c must be
// valid (Validate).
func New(c Config) *Budget {
	if c.RPS == 0 {
		return nil
	}
	b := &Budget{cfg: c, interval: c.Interval(), local: c.Share(), clients: map[string]*bucket{}, maxPause: c.MaxPause}
	if b.maxPause == 0 {
		b.maxPause = DefaultMaxPause
	}
	b.localInt = b.local.Interval()
	if c.Redis != nil {
		b.rc = c.Redis
		b.gcra = redis_rate.NewLimiter(unprefixed{c.Redis.Redis()})
		b.limit = redis_rate.Limit{Rate: 1, Period: b.interval, Burst: c.Burst}
	}
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

// Redis keys of a client's shared budget.
const (
	gcraKeyPrefix  = "wnf:budget:" // redis_rate's GCRA state
	pauseKeyPrefix = "wnf:pause:"  // a learned pause, expiring when it ends
)

// bucket is one client's budget.
type bucket struct {
	lim      *rate.Limiter // the local pace: alone, or without Redis
	gcraKey  string
	pauseKey string

	mu      sync.Mutex
	paused  time.Time // no request before this
	next    time.Time // the shared GCRA's next token, as Redis last said
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
		bk = &bucket{
			lim:      rate.NewLimiter(rate.Every(b.localInt), b.local.Burst),
			gcraKey:  gcraKeyPrefix + client,
			pauseKey: pauseKeyPrefix + client,
			wake:     make(chan struct{}, 1),
		}
		b.clients[client] = bk
	}
	return bk
}

// dropIdle forgets clients with nobody waiting, no pause and a full bucket.
func (b *Budget) dropIdle() {
	now := time.Now()
	for id, bk := range b.clients {
		bk.mu.Lock()
		idle := len(bk.queue) == 0 && !now.Before(bk.paused) && bk.lim.TokensAt(now) >= float64(b.local.Burst)
		bk.mu.Unlock()
		if idle {
			delete(b.clients, id)
		}
	}
}

// Wait blocks until a request of client may be sent and returns how long it
// waited. priority orders the waiters of one client (lower first). It
// returns an *Error at once when ctx's deadline comes before the estimated
// turn plus one pacing interval, and when the deadline passes while waiting; ctx.Err() when ctx is
// cancelled. With Redis healthy every request asks Redis for its token
// (through the client's pump); Redis failing never makes Wait fail.
func (b *Budget) Wait(ctx context.Context, client string, priority int) (time.Duration, error) {
	if b == nil {
		return 0, nil
	}
	bk := b.bucket(client)
	now := time.Now()
	shared := b.shared()
	bk.mu.Lock()
	if !shared && len(bk.queue) == 0 && !now.Before(bk.paused) && bk.lim.AllowN(now, 1) {
		bk.mu.Unlock()
		return 0, nil
	}
	eta := b.eta(bk, now, priority, shared)
	// A turn must leave the call one pacing interval before the deadline:
	// a call the deadline would cut still spends the client's token.
	if dl, ok := ctx.Deadline(); ok && eta.Add(b.interval).After(dl) {
		bk.mu.Unlock()
		return 0, &Error{RetryAfter: eta.Sub(now)}
	}
	w := &waiter{priority: priority, seq: bk.seq, ready: make(chan struct{})}
	bk.seq++
	heap.Push(&bk.queue, w)
	if !bk.pumping {
		bk.pumping = true
		go b.pump(bk)
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
		return time.Since(now), &Error{RetryAfter: time.Until(b.etaLocked(bk, priority))}
	}
	return time.Since(now), ctx.Err()
}

// shared reports whether tokens come from Redis now.
func (b *Budget) shared() bool { return b.rc != nil && b.rc.Healthy() }

// eta estimates when a new waiter of priority would get its token: after
// the pause, after every queued waiter that goes before it. Shared, the
// first token is due when Redis last said (bk.next) and the others follow
// at the shared pace; other replicas' waiters are not counted.
func (b *Budget) eta(bk *bucket, now time.Time, priority int, shared bool) time.Time {
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
	if shared {
		if bk.next.After(start) {
			start = bk.next
		}
		return start.Add(time.Duration(ahead) * b.interval)
	}
	need := float64(ahead+1) - bk.lim.TokensAt(start)
	if need <= 0 {
		return start
	}
	return start.Add(time.Duration(need * float64(b.localInt)))
}

func (b *Budget) etaLocked(bk *bucket, priority int) time.Time {
	shared := b.shared()
	bk.mu.Lock()
	defer bk.mu.Unlock()
	return b.eta(bk, time.Now(), priority, shared)
}

// poke wakes the pump (bk.mu held).
func (bk *bucket) poke() {
	select {
	case bk.wake <- struct{}{}:
	default:
	}
}

// pump hands tokens to the queued waiters, best first, until none is left:
// from Redis while it is healthy, else from the local bucket.
func (b *Budget) pump(bk *bucket) {
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
		if b.shared() {
			if now.Before(bk.next) {
				d := bk.next.Sub(now)
				bk.mu.Unlock()
				bk.sleep(d)
				continue
			}
			bk.mu.Unlock()
			a, err := b.ask(bk)
			bk.mu.Lock()
			if err == nil {
				b.take(bk, a)
				bk.mu.Unlock()
				continue
			}
			// Redis failed and is degraded now, or refused this client's
			// key for what it holds (redisx.IsKeyError): pace locally.
			now = time.Now()
			if now.Before(bk.paused) || len(bk.queue) == 0 {
				bk.mu.Unlock()
				continue
			}
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

// answer is what Redis said to a request for a token.
type answer struct {
	granted bool
	paused  bool      // a shared pause runs until until
	until   time.Time // when paused or refused: when to ask again
}

// ask asks Redis for one token of bk's client: refused while the shared
// pause runs, else the GCRA's answer.
func (b *Budget) ask(bk *bucket) (answer, error) {
	var a answer
	err := b.rc.Do(context.Background(), func(ctx context.Context, r redis.UniversalClient) error {
		ttl, err := r.PTTL(ctx, bk.pauseKey).Result()
		if err != nil {
			return err
		}
		if ttl > 0 {
			a.paused, a.until = true, time.Now().Add(min(ttl, b.maxPause))
			return nil
		}
		res, err := b.gcra.Allow(ctx, bk.gcraKey, b.limit)
		if err != nil {
			return err
		}
		a.granted = res.Allowed > 0
		if !a.granted {
			a.until = time.Now().Add(max(res.RetryAfter, time.Millisecond))
		}
		return nil
	})
	return a, err
}

// take acts on Redis's answer (bk.mu held): a token goes to the best
// waiter, unless it has left or a pause began meanwhile (the token is then
// lost: Redis cannot take it back). A shared grant also spends a local
// token when one is there, so that a replica falling back to its local
// bucket does not start with a full burst right after its shared requests.
func (b *Budget) take(bk *bucket, a answer) {
	now := time.Now()
	switch {
	case a.granted:
		bk.lim.AllowN(now, 1)
		if len(bk.queue) > 0 && !now.Before(bk.paused) {
			w := heap.Pop(&bk.queue).(*waiter)
			close(w.ready)
		}
	case a.paused:
		if a.until.After(bk.paused) {
			bk.paused = a.until
		}
	default:
		bk.next = a.until
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
// rate limit headers saying nothing remains pause it until their reset; each
// pause lasts MaxPause at most.
// With Redis, a pause that extends this replica's is shared with the other
// replicas (one Redis operation, bounded by its OpTimeout). The strikes of
// 429s without Retry-After are counted per replica, and the correction of
// the local tokens by a RateLimit-Remaining below them applies to the local
// bucket only.
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
		if remaining == 0 && reset.After(until) {
			until = reset
		} else if tokens := bk.lim.TokensAt(now); remaining > 0 && float64(remaining) < tokens {
			bk.lim.AllowN(now, int(tokens)-remaining) // the upstream counts more than we did
		}
	}
	until = minTime(until, now.Add(b.maxPause))
	extended := until.After(bk.paused)
	if extended {
		bk.paused = until
		bk.poke()
	}
	bk.mu.Unlock()
	if extended && b.rc != nil {
		b.sharePause(bk, until)
	}
}

// extendPause sets KEYS[1] to expire in ARGV[1] ms unless it already lives
// longer; its value is the pause's end in Unix ms (ARGV[2]), for people.
var extendPause = redis.NewScript(`
if redis.call("PTTL", KEYS[1]) < tonumber(ARGV[1]) then
  redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[1])
end
return 0
`)

// sharePause makes every replica respect bk's pause until until (best
// effort: without Redis the pause stays this replica's).
func (b *Budget) sharePause(bk *bucket, until time.Time) {
	ms := (time.Until(until) + time.Millisecond - 1) / time.Millisecond
	if ms <= 0 {
		return
	}
	_ = b.rc.Do(context.Background(), func(ctx context.Context, r redis.UniversalClient) error {
		return extendPause.Run(ctx, r, []string{bk.pauseKey}, int64(ms), until.UnixMilli()).Err()
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
		_ = b.rc.Do(context.Background(), func(ctx context.Context, r redis.UniversalClient) error {
			ttl, err := r.PTTL(ctx, bk.pauseKey).Result()
			if err == nil && ttl > 0 {
				shared = time.Now().Add(min(ttl, b.maxPause))
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
	Paused  int // clients paused by a 429 or exhausted RateLimit headers
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
		if now.Before(bk.paused) {
			st.Paused++
		}
		bk.mu.Unlock()
	}
	return st
}

// unprefixed drops the "rate:" that redis_rate puts before its keys, so
// that the facade's keys all start with wnf: (one ACL key pattern, one SCAN).
type unprefixed struct{ redis.UniversalClient }

func strip(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = strings.TrimPrefix(k, "rate:")
	}
	return out
}

func (u unprefixed) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return u.UniversalClient.Eval(ctx, script, strip(keys), args...)
}

func (u unprefixed) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return u.UniversalClient.EvalSha(ctx, sha1, strip(keys), args...)
}

func (u unprefixed) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return u.UniversalClient.EvalRO(ctx, script, strip(keys), args...)
}

func (u unprefixed) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return u.UniversalClient.EvalShaRO(ctx, sha1, strip(keys), args...)
}

func (u unprefixed) Del(ctx context.Context, keys ...string) *redis.IntCmd {
	return u.UniversalClient.Del(ctx, strip(keys)...)
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

func minTime(a, b time.Time) time.Time {
	if a.After(b) {
		return b
	}
	return a
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
