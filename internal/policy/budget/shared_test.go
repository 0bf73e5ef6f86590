package budget

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/workspacenet/facade/internal/policy/redisx"
	"github.com/workspacenet/facade/internal/testsupport/redistest"
)

// These tests run against a real Redis server, in real time. They assert
// on counts, on events, on lower bounds of durations (a slower machine only
// makes them longer) and on generous upper bounds.

// decision is a slot script Redis answered "allowed": Redis decided between
// sent and answered.
type decision struct{ sent, answered time.Time }

// redisLog watches one replica's Redis commands: the tokens the shared log
// granted for key, and every command sent but the prober's PINGs. While
// gate is set, slot scripts for key wait for it to be closed.
type redisLog struct {
	key string

	cmds    atomic.Int64
	blocked atomic.Int64

	mu      sync.Mutex
	allowed []decision
	gate    chan struct{}
}

func (l *redisLog) DialHook(next redis.DialHook) redis.DialHook { return next }
func (l *redisLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (l *redisLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "ping" && cmd.Name() != "hello" {
			l.cmds.Add(1)
		}
		args := cmd.Args()
		gcra := (cmd.Name() == "evalsha" || cmd.Name() == "eval") && len(args) > 3 && args[3] == l.key
		if gcra {
			l.mu.Lock()
			gate := l.gate
			l.mu.Unlock()
			if gate != nil {
				l.blocked.Add(1)
				select {
				case <-gate:
				case <-ctx.Done():
					cmd.SetErr(ctx.Err())
					return ctx.Err()
				}
			}
		}
		sent := time.Now()
		err := next(ctx, cmd)
		answered := time.Now()
		if gcra && err == nil {
			if v, ok := cmd.(*redis.Cmd).Val().([]any); ok && len(v) > 0 && v[0] == int64(1) {
				l.mu.Lock()
				l.allowed = append(l.allowed, decision{sent, answered})
				l.mu.Unlock()
			}
		}
		return err
	}
}

func (l *redisLog) grants() []decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.allowed)
}

// replica opens a Redis client of its own for a budget of cfg on url and
// watches its slot scripts for client.
func replica(t *testing.T, url string, cfg Config, client string, opTimeout time.Duration) (*Budget, *redisx.Client, *redisLog) {
	t.Helper()
	rc, err := redisx.Open(url, redisx.Options{Logger: slog.New(slog.DiscardHandler), OpTimeout: opTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	if !rc.Healthy() {
		t.Fatalf("redis at %s: %+v", url, rc.Status())
	}
	log := &redisLog{key: Key(client)}
	rc.Redis().AddHook(log)
	cfg.Redis = rc
	return New(cfg), rc, log
}

// waitAll runs n Waits of client on b at once and returns when each
// returned.
func waitAll(t *testing.T, b *Budget, client string, n int, wg *sync.WaitGroup, mu *sync.Mutex, at *[]time.Time) {
	for range n {
		wg.Go(func() {
			if _, err := b.Wait(t.Context(), client, Turn{}); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			*at = append(*at, time.Now())
			mu.Unlock()
		})
	}
}

// surelyWithin reports whether some k of ds were certainly decided within
// less than window: their latest answer comes less than window after their
// earliest sending.
func surelyWithin(ds []decision, k int, window time.Duration) bool {
	for _, first := range ds {
		var answers []time.Time
		for _, d := range ds {
			if !d.sent.Before(first.sent) {
				answers = append(answers, d.answered)
			}
		}
		if len(answers) < k {
			continue
		}
		slices.SortFunc(answers, func(a, b time.Time) int { return a.Compare(b) })
		if answers[k-1].Sub(first.sent) < window {
			return true
		}
	}
	return false
}

func TestReplicasShareOneBudget(t *testing.T) {
	s := redistest.Start(t)
	cfg := Config{RPS: 10, Burst: 2, Replicas: 2}
	const client, perReplica = "shared", 15
	// A generous op timeout: this test is about the pace, not the fallback.
	a, rca, la := replica(t, s.URL, cfg, client, 5*time.Second)
	b, rcb, lb := replica(t, s.URL, cfg, client, 5*time.Second)

	var wg sync.WaitGroup
	var mu sync.Mutex
	var returned []time.Time
	start := time.Now()
	waitAll(t, a, client, perReplica, &wg, &mu, &returned)
	waitAll(t, b, client, perReplica, &wg, &mu, &returned)
	wg.Wait()
	took := time.Since(start)
	if !rca.Healthy() || !rcb.Healthy() {
		t.Fatalf("Redis degraded during the test: %+v %+v", rca.Status(), rcb.Status())
	}

	// Every request had exactly one token of the shared log.
	ga, gb := la.grants(), lb.grants()
	if len(ga) != perReplica || len(gb) != perReplica {
		t.Fatalf("Redis granted %d and %d tokens, want %d each", len(ga), len(gb), perReplica)
	}
	all := append(ga, gb...)
	if surelyWithin(all, int(cfg.RPS)+1, time.Second) {
		t.Errorf("Redis granted more than %v tokens within a second", cfg.RPS)
	}
	// Together as slow as one budget: after the burst, one token per
	// interval. Two budgets each alone would take about half as long.
	first, last := all[0].sent, all[0].answered
	for _, d := range all {
		first, last = minTime(first, d.sent), maxTime(last, d.answered)
	}
	// After the first window's RPS, RPS per window.
	floor := time.Duration((2*perReplica-1)/int(cfg.RPS)) * limitsOf(cfg).window
	if got := last.Sub(first); got < floor-time.Millisecond {
		t.Errorf("%d tokens granted in %v, want at least %v", 2*perReplica, got, floor)
	}
	slices.SortFunc(returned, func(a, b time.Time) int { return a.Compare(b) })
	t.Logf("%d Waits on two replicas took %v (floor %v); at most %d returned within any second",
		2*perReplica, took.Round(time.Millisecond), floor, maxInWindow(returned, time.Second))
}

func TestA429LearnedByOneReplicaPausesTheOther(t *testing.T) {
	s := redistest.Start(t)
	cfg := Config{RPS: 10, Burst: 2, Replicas: 2}
	const client = "paused"
	a, _, _ := replica(t, s.URL, cfg, client, 5*time.Second)
	b, _, lb := replica(t, s.URL, cfg, client, 5*time.Second)

	learned := time.Now()
	a.Learn(client, http.StatusTooManyRequests, http.Header{"Retry-After": {"2"}})
	// Redis keeps the pause 2s from when a learned it, to the millisecond.
	if until := b.PausedUntil(client); until.Before(learned.Add(2*time.Second - 5*time.Millisecond)) {
		t.Errorf("the other replica sees the pause ending %v after it was learned, want 2s", until.Sub(learned))
	}
	if _, err := b.Wait(t.Context(), client, Turn{}); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(learned); waited < 2*time.Second-5*time.Millisecond {
		t.Errorf("the other replica sent %v after the 429, want after its Retry-After 2s", waited)
	}
	if n := len(lb.grants()); n != 1 {
		t.Errorf("the other replica had %d tokens from Redis, want 1", n)
	}
	raw := s.Client()
	if n, err := raw.Exists(t.Context(), Key(client)).Result(); err != nil || n != 1 {
		t.Errorf("no key %s in Redis (%v)", Key(client), err)
	}
	// A longer pause learned later replaces it; a shorter one, learned by
	// the other replica, does not.
	a.Learn(client, http.StatusTooManyRequests, http.Header{"Retry-After": {"30"}})
	b.Learn(client, http.StatusTooManyRequests, http.Header{"Retry-After": {"1"}})
	if left := time.Until(b.PausedUntil(client)); left < 25*time.Second {
		t.Errorf("the shared pause ends in %v, want about 30s", left)
	}
}

// TestPausedClientLeavesRedis: a client paused by a 429 that then goes
// quiet leaves Redis a window after its pause ends (the pause is a member
// scored at its end, which a trim a window after the last send keeps).
func TestPausedClientLeavesRedis(t *testing.T) {
	s := redistest.Start(t)
	const client = "paused-then-gone"
	a, _, _ := replica(t, s.URL, Config{RPS: 10, Burst: 2}, client, 5*time.Second)
	if _, err := a.Wait(t.Context(), client, Turn{}); err != nil {
		t.Fatal(err)
	}
	a.Learn(client, http.StatusTooManyRequests, http.Header{"Retry-After": {"1"}})
	raw := s.Client()
	if n, err := raw.Exists(t.Context(), Key(client)).Result(); err != nil || n != 1 {
		t.Fatalf("no key %s in Redis after the pause (%d, %v)", Key(client), n, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := raw.Exists(t.Context(), Key(client)).Result()
		if err == nil && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			members, _ := raw.ZRangeWithScores(t.Context(), Key(client), 0, -1).Result()
			t.Fatalf("the paused client's key is still in Redis 30s later: %v", members)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestWithoutRedisEachReplicaPacesAtItsShare(t *testing.T) {
	s := redistest.StartOwn(t)
	cfg := Config{RPS: 10, Burst: 2, Replicas: 2}
	share := cfg.Share()
	const client, n = "fallback", 8
	a, rca, la := replica(t, s.URL, cfg, client, redisx.DefaultOpTimeout)
	b, rcb, lb := replica(t, s.URL, cfg, client, redisx.DefaultOpTimeout)
	for _, bud := range []*Budget{a, b} {
		if _, err := bud.Wait(t.Context(), client, Turn{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(la.grants()) != 1 || len(lb.grants()) != 1 {
		t.Fatalf("healthy Redis granted %d and %d tokens, want 1 each", len(la.grants()), len(lb.grants()))
	}

	s.Stop()
	cmdsA, cmdsB := la.cmds.Load(), lb.cmds.Load()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var atA, atB []time.Time
	start := time.Now()
	waitAll(t, a, client, n, &wg, &mu, &atA)
	waitAll(t, b, client, n, &wg, &mu, &atB)
	wg.Wait()
	if rca.Healthy() || rcb.Healthy() {
		t.Fatal("Redis is stopped but the clients are healthy")
	}
	// A command or two found Redis gone (a timeout, as go-redis redials,
	// then redisx's own dial is refused); the rest never tried it.
	if da, db := la.cmds.Load()-cmdsA, lb.cmds.Load()-cmdsB; da < 1 || da > redisx.TimeoutsToDegrade || db < 1 || db > redisx.TimeoutsToDegrade {
		t.Errorf("%d and %d commands sent to the stopped Redis, want 1 to %d each", da, db, redisx.TimeoutsToDegrade)
	}
	// Each replica at its share of the pace (5 a window), not the whole
	// budget's, after a window counted spent.
	floor := limitsOf(cfg).window + time.Duration((n-1)/int(share.RPS))*limitsOf(cfg).window
	for name, at := range map[string][]time.Time{"a": atA, "b": atB} {
		if len(at) != n {
			t.Fatalf("replica %s: %d of %d Waits succeeded", name, len(at), n)
		}
		last := slices.MaxFunc(at, func(a, b time.Time) int { return a.Compare(b) })
		if got := last.Sub(start); got < floor-time.Millisecond || got > floor+10*time.Second {
			t.Errorf("replica %s: %d Waits took %v, want at least %v (and not 10s more)", name, n, got, floor)
		}
		t.Logf("replica %s without Redis: %d Waits in %v (floor %v)", name, n, last.Sub(start).Round(time.Millisecond), floor)
	}

	s.Restart()
	for _, rc := range []*redisx.Client{rca, rcb} {
		deadline := time.Now().Add(10 * time.Second)
		for !rc.Healthy() {
			if time.Now().After(deadline) {
				t.Fatalf("not healthy 10s after Restart: %+v", rc.Status())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if _, err := a.Wait(t.Context(), client, Turn{}); err != nil {
		t.Fatal(err)
	}
	if got := len(la.grants()); got != 2 {
		t.Errorf("after Restart: %d tokens from Redis in all, want 2", got)
	}
	if n, err := s.Client().Exists(t.Context(), Key(client)).Result(); err != nil || n != 1 {
		t.Errorf("after Restart the log %s is not in Redis (%d, %v)", Key(client), n, err)
	}
}

func TestHungRedisCostsAFewOpTimeouts(t *testing.T) {
	s := redistest.StartOwn(t)
	const client = "hung"
	b, rc, log := replica(t, s.URL, Config{RPS: 10, Burst: 2, Replicas: 2}, client, redisx.DefaultOpTimeout)
	raw := redis.NewClient(&redis.Options{Addr: strings.TrimSuffix(strings.TrimPrefix(s.URL, "redis://"), "/0"), ReadTimeout: time.Minute})
	defer raw.Close()
	// CLIENT PAUSE holds every client's commands: Redis hangs for 8s.
	if err := raw.Do(t.Context(), "CLIENT", "PAUSE", 8000, "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	pauseOver := make(chan struct{})
	go func() { raw.Ping(context.Background()); close(pauseOver) }()

	cmds := log.cmds.Load()
	for range 3 {
		if _, err := b.Wait(t.Context(), client, Turn{}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-pauseOver:
		t.Error("the Waits lasted as long as Redis hung")
	default:
	}
	if n := log.cmds.Load() - cmds; n != redisx.TimeoutsToDegrade {
		t.Errorf("%d commands sent to the hung Redis, want %d (timed out, then local)", n, redisx.TimeoutsToDegrade)
	}
	if rc.Healthy() {
		t.Error("a hung Redis did not degrade the client")
	}
	<-pauseOver
}

func TestPriorityOrderWithRedis(t *testing.T) {
	s := redistest.Start(t)
	const client = "prio"
	b, _, log := replica(t, s.URL, Config{RPS: 10, Burst: 1}, client, 10*time.Second)
	if _, err := b.Wait(t.Context(), client, Turn{}); err != nil { // spend the burst
		t.Fatal(err)
	}
	// Hold the pump's next slot script until every waiter is queued.
	gate := make(chan struct{})
	log.mu.Lock()
	log.gate = gate
	log.mu.Unlock()
	bk := b.bucket(client)
	queued := func() int {
		bk.mu.Lock()
		defer bk.mu.Unlock()
		return len(bk.queue)
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i, p := range []int{5, 5, 2, 9, 2} {
		wg.Go(func() {
			if _, err := b.Wait(t.Context(), client, Turn{Priority: p}); err != nil {
				t.Error(err)
			}
			mu.Lock()
			order = append(order, p)
			mu.Unlock()
		})
		poll(t, func() bool { return queued() == i+1 && log.blocked.Load() == 1 })
	}
	close(gate)
	wg.Wait()
	if !slices.Equal(order, []int{2, 2, 5, 5, 9}) {
		t.Errorf("served %v, want by priority", order)
	}
	if n := len(log.grants()); n != 6 {
		t.Errorf("%d tokens from Redis, want 6", n)
	}
}

func TestRefusedAtOnceWhenPausedWithRedis(t *testing.T) {
	s := redistest.Start(t)
	const client = "refused"
	b, _, _ := replica(t, s.URL, Config{RPS: 10, Burst: 2}, client, 5*time.Second)
	b.Learn(client, http.StatusTooManyRequests, http.Header{"Retry-After": {"60"}})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := b.Wait(ctx, client, Turn{})
	var e *Error
	if !errors.As(err, &e) || ctx.Err() != nil {
		t.Fatalf("err %v (context: %v), want an *Error before the deadline", err, ctx.Err())
	}
	if e.RetryAfter < 50*time.Second || e.RetryAfter > 60*time.Second {
		t.Errorf("RetryAfter %v, want about 60s", e.RetryAfter)
	}
}

// poll waits for cond, 10s at most.
func poll(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// Without Redis, Replicas alone sizes the local bucket: each replica keeps
// to its share.
func TestReplicasWithoutRedisPaceAtTheirShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Config{RPS: 10, Burst: 2, Replicas: 2}
		b := New(cfg)
		start := time.Now()
		at := grantTimes(t, b, "a", 20)
		if n := maxInWindow(at, time.Second+90*time.Millisecond); n > 5 {
			t.Errorf("%d requests within 1.09 s, want at most 5", n)
		}
		// 5 a window: the last of 20 in the fourth window.
		if got, w := at[19].Sub(start), limitsOf(cfg).window; got < 3*w || got >= 4*w {
			t.Errorf("20 requests took %v, want within the fourth window of %v", got, w)
		}
	})
}

func TestShare(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want Config
	}{
		{Config{RPS: 10, Burst: 2}, Config{RPS: 10, Burst: 2}},
		{Config{RPS: 10, Burst: 2, Replicas: 1}, Config{RPS: 10, Burst: 2}},
		{Config{RPS: 10, Burst: 2, Replicas: 2}, Config{RPS: 5, Burst: 2}},
		{Config{RPS: 10, Burst: 2, Replicas: 3}, Config{RPS: 3, Burst: 2}},
		{Config{RPS: 10, Burst: 4, Replicas: 4}, Config{RPS: 2, Burst: 2}},
		{Config{RPS: 10, Burst: 2, Replicas: 10}, Config{RPS: 1, Burst: 1}},
		{Config{RPS: 10, Burst: 2, Replicas: 20}, Config{RPS: 0.5, Burst: 1}},
	} {
		got := tc.cfg.Share()
		if got != tc.want {
			t.Errorf("%+v: share %+v, want %+v", tc.cfg, got, tc.want)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%+v: share %+v: %v", tc.cfg, got, err)
		}
		// The replicas' shares together keep to RPS in any second (when
		// there are at most RPS replicas).
		if n := max(tc.cfg.Replicas, 1); float64(n) <= tc.cfg.RPS {
			if per := limitsOf(got).n; per*n > int(tc.cfg.RPS) {
				t.Errorf("%+v: %d replicas may send %d each in a window", tc.cfg, n, per)
			}
		}
	}
	if (Config{RPS: 10, Burst: 2, Replicas: -1}).Validate() == nil {
		t.Error("negative replicas accepted")
	}
}

// TestSharedPauseIsCapped: a pause in Redis that lives a year (set by a
// replica with another cap, or by hand) pauses this replica's client for
// its MaxPause at most.
func TestSharedPauseIsCapped(t *testing.T) {
	s := redistest.Start(t)
	const client = "year"
	b, rc, _ := replica(t, s.URL, Config{RPS: 10, Burst: 2, MaxPause: 2 * time.Second}, client, 5*time.Second)
	year := time.Now().Add(365 * 24 * time.Hour).UnixMilli()
	if err := rc.Redis().ZAdd(t.Context(), Key(client), redis.Z{Score: float64(year), Member: "pause"}).Err(); err != nil {
		t.Fatal(err)
	}
	if left := time.Until(b.PausedUntil(client)); left <= 0 || left > 2*time.Second {
		t.Errorf("PausedUntil in %v, want within the 2s cap", left)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	_, err := b.Wait(ctx, client, Turn{})
	var e *Error
	if !errors.As(err, &e) || e.RetryAfter > 2*time.Second {
		t.Fatalf("Wait: %v, want an *Error with RetryAfter within the 2s cap", err)
	}
}

// TestInteractiveBeforeBackgroundAcrossReplicas: one client, two replicas.
// Replica A has four background waiters (polls) whose asks are held; replica
// B's one interactive waiter asks meanwhile, is refused (the slot is not
// due) and notes its wait; A's asks then go. B is served first, then A's
// four: a poll on one replica never takes a slot an interactive call on
// another is waiting for. The note is gone once B was served.
func TestInteractiveBeforeBackgroundAcrossReplicas(t *testing.T) {
	s := redistest.Start(t)
	const client = "across"
	cfg := Config{RPS: 10, Burst: 1, Replicas: 2}
	a, _, logA := replica(t, s.URL, cfg, client, 10*time.Second)
	b, _, logB := replica(t, s.URL, cfg, client, 10*time.Second)
	if _, err := a.Wait(t.Context(), client, Turn{}); err != nil { // spend the burst
		t.Fatal(err)
	}
	gate := make(chan struct{})
	logA.mu.Lock()
	logA.gate = gate
	logA.mu.Unlock()
	bk := a.bucket(client)
	queued := func() int {
		bk.mu.Lock()
		defer bk.mu.Unlock()
		return len(bk.queue)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	served := func(bg *Budget, turn Turn, who string) {
		wg.Go(func() {
			if _, err := bg.Wait(t.Context(), client, turn); err != nil {
				t.Error(err)
			}
			mu.Lock()
			order = append(order, who)
			mu.Unlock()
		})
	}
	for range 4 {
		served(a, Turn{Background: true}, "A poll")
	}
	poll(t, func() bool { return queued() == 4 && logA.blocked.Load() == 1 })
	served(b, Turn{Request: b.Arrive()}, "B query")
	r := s.Client()
	poll(t, func() bool { return r.ZScore(t.Context(), WantsKey(client), b.id).Err() == nil })
	close(gate)
	wg.Wait()
	if want := []string{"B query", "A poll", "A poll", "A poll", "A poll"}; !slices.Equal(order, want) {
		t.Errorf("served %v, want %v", order, want)
	}
	if n := len(logA.grants()) + len(logB.grants()); n != 6 {
		t.Errorf("%d slots from Redis, want 6", n)
	}
	if err := r.ZScore(t.Context(), WantsKey(client), b.id).Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("B's note after it was served: %v, want none", err)
	}
}

// TestObserveGrantsAtTheDecidingClock: each slot granted is told once, at
// the time its decider gave it: the shared log's, by Redis's clock, between
// the script's sending and its answer; alone, this process's.
func TestObserveGrantsAtTheDecidingClock(t *testing.T) {
	s := redistest.Start(t)
	const client = "observed"
	b, _, log := replica(t, s.URL, Config{RPS: 10, Burst: 2}, client, 5*time.Second)
	alone := New(Config{RPS: 10, Burst: 2})
	for _, bg := range []*Budget{b, alone} {
		var mu sync.Mutex
		var seen []time.Time
		bg.ObserveGrants(func(c string, at time.Time, background bool) {
			if c != client || background {
				t.Errorf("told of client %q", c)
			}
			mu.Lock()
			seen = append(seen, at)
			mu.Unlock()
		})
		before := time.Now()
		for range 3 {
			if _, err := bg.Wait(t.Context(), client, Turn{}); err != nil {
				t.Fatal(err)
			}
		}
		bg.ObserveGrants(nil)
		if _, err := bg.Wait(t.Context(), client, Turn{}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if len(seen) != 3 || !slices.IsSortedFunc(seen, time.Time.Compare) || seen[0].Before(before.Truncate(time.Millisecond)) {
			t.Errorf("told %v, want the three grants in order", seen)
		}
		mu.Unlock()
		if bg == b {
			for i, d := range log.grants()[:3] {
				if seen[i].Before(d.sent.Truncate(time.Millisecond)) || seen[i].After(d.answered) {
					t.Errorf("grant %d told at %v, decided by Redis between %v and %v", i, seen[i], d.sent, d.answered)
				}
			}
		}
	}
}
