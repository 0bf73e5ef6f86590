package budget

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// All tests run in a synctest bubble: time is fake and advances only when
// every goroutine is blocked, so nothing depends on the machine's speed, and
// the bubble fails if a pump goroutine is left behind.

func maxInWindow(ts []time.Time, window time.Duration) int {
	best := 0
	for i := range ts {
		n := 0
		for j := i; j < len(ts) && ts[j].Sub(ts[i]) < window; j++ {
			n++
		}
		best = max(best, n)
	}
	return best
}

// grantTimes sends n requests of one client at once and returns when each
// was let through, sorted.
func grantTimes(t *testing.T, b *Budget, client string, n int) []time.Time {
	t.Helper()
	var mu sync.Mutex
	var at []time.Time
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := b.Wait(t.Context(), client, Turn{}); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			at = append(at, time.Now())
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	return at
}

func TestNeverMoreThanRPSInAnySecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(Config{RPS: 10, Burst: 2})
		start := time.Now()
		at := grantTimes(t, b, "a", 40)
		// At most 10 in any second, with room to spare for network jitter:
		// still at most 10 in any second and 90 ms.
		if n := maxInWindow(at, time.Second+90*time.Millisecond); n > 10 {
			t.Errorf("%d requests within 1.09 s, want at most 10", n)
		}
		if at[1] != start {
			t.Errorf("the burst of 2 waited: %v", at[1].Sub(start))
		}
		if at[2] == start {
			t.Error("a third request went back to back with the burst of 2")
		}
		// The pace is the budget's, not slower: 10 a window (1.1 s), 2 at a
		// time, so the 40th in the fourth window.
		if got, w := at[39].Sub(start), time.Second+jitterSlack; got < 3*w || got >= 4*w {
			t.Errorf("40 requests took %v, want within the fourth window of %v", got, w)
		}
	})
}

func TestClientsHaveSeparateBudgets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(Config{RPS: 10, Burst: 2})
		done := make(chan struct{})
		go func() { grantTimes(t, b, "flood", 30); close(done) }()
		synctest.Wait() // the flood is queued
		if waited, err := b.Wait(t.Context(), "other", Turn{}); err != nil || waited != 0 {
			t.Errorf("another client waited %v (%v)", waited, err)
		}
		<-done
	})
}

func TestLowerPriorityFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(Config{RPS: 10, Burst: 1})
		if _, err := b.Wait(t.Context(), "a", Turn{}); err != nil { // spend the burst
			t.Fatal(err)
		}
		order := servedOrder(t, b, []Turn{{Priority: 5}, {Priority: 5}, {Priority: 2}, {Priority: 9}, {Priority: 2}})
		if want := []Turn{{Priority: 2}, {Priority: 2}, {Priority: 5}, {Priority: 5}, {Priority: 9}}; !slices.Equal(order, want) {
			t.Errorf("served %v, want by priority", order)
		}
	})
}

func TestRefusedAtOnceWhenTheDeadlineIsTooClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(Config{RPS: 10, Burst: 2})
		done := make(chan struct{})
		go func() { grantTimes(t, b, "a", 20); close(done) }()
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := b.Wait(ctx, "a", Turn{})
		var e *Error
		if !errors.As(err, &e) || time.Since(start) != 0 {
			t.Fatalf("err %v after %v, want an *Error at once", err, time.Since(start))
		}
		// 18 are queued ahead of it at about 117ms each: about 2.2 s.
		if e.RetryAfter < 2*time.Second || e.RetryAfter > 3*time.Second {
			t.Errorf("RetryAfter %v", e.RetryAfter)
		}
		<-done
	})
}

func TestA429PausesTheClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(Config{RPS: 10, Burst: 2})
		start := time.Now()
		b.Learn("a", http.StatusTooManyRequests, http.Header{"Retry-After": {"3"}})
		if _, err := b.Wait(t.Context(), "a", Turn{}); err != nil || time.Since(start) != 3*time.Second {
			t.Fatalf("waited %v (%v), want the Retry-After 3s", time.Since(start), err)
		}
		// Without Retry-After: one second, then two.
		for _, want := range []time.Duration{time.Second, 2 * time.Second} {
			b.Learn("a", http.StatusTooManyRequests, http.Header{})
			start = time.Now()
			if _, err := b.Wait(t.Context(), "a", Turn{}); err != nil || time.Since(start) != want {
				t.Fatalf("waited %v (%v), want %v", time.Since(start), err, want)
			}
		}
		// A success clears the strikes.
		b.Learn("a", http.StatusOK, http.Header{})
		b.Learn("a", http.StatusTooManyRequests, http.Header{})
		if got := b.PausedUntil("a").Sub(time.Now()); got != time.Second {
			t.Errorf("pause after a success and a 429: %v", got)
		}
		if !b.PausedUntil("b").IsZero() {
			t.Error("another client was paused")
		}
		time.Sleep(time.Second)
	})
}

func TestRateLimitHeadersPause(t *testing.T) {
	for name, h := range map[string]http.Header{
		"RateLimit-*":   {"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"2"}},
		"X-RateLimit-*": {"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"2"}},
		"RateLimit":     {"Ratelimit": {"limit=10, remaining=0, reset=2"}},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := New(Config{RPS: 10, Burst: 2})
				b.Learn("a", http.StatusOK, h)
				start := time.Now()
				if _, err := b.Wait(t.Context(), "a", Turn{}); err != nil || time.Since(start) != 2*time.Second {
					t.Fatalf("waited %v (%v), want 2s", time.Since(start), err)
				}
			})
		})
	}
}

func TestCancelledWaiterLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(Config{RPS: 1, Burst: 1})
		if _, err := b.Wait(t.Context(), "a", Turn{}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() { _, err := b.Wait(ctx, "a", Turn{}); errc <- err }()
		synctest.Wait()
		cancel()
		if err := <-errc; err != context.Canceled {
			t.Fatalf("err %v", err)
		}
		// The bubble ends only if the pump went away with the last waiter.
	})
}

func TestConfig(t *testing.T) {
	for _, c := range []Config{{RPS: -1, Burst: 1}, {RPS: 10, Burst: 0}, {RPS: 10, Burst: 11}, {RPS: 0.5, Burst: 2}} {
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	for _, c := range []Config{{}, {RPS: 10, Burst: 2}, {RPS: 0.5, Burst: 1}} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if New(Config{}) != nil {
		t.Error("RPS 0 built a budget")
	}
	var off *Budget
	if d, err := off.Wait(t.Context(), "a", Turn{}); d != 0 || err != nil {
		t.Error("a nil budget paced")
	}
	if got := (Config{RPS: 10, Burst: 2}).Interval(); got != 110*time.Millisecond {
		t.Errorf("interval %v", got)
	}
}

// TestEarlierRequestsFirst: a client's waiters are served by request
// arrival, then by priority: a later request's shallow calls do not
// overtake an earlier request's deep ones; background waiters (polls), even
// queued first, go after all of them.
func TestEarlierRequestsFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(Config{RPS: 10, Burst: 1})
		if _, err := b.Wait(t.Context(), "a", Turn{}); err != nil { // spend the burst
			t.Fatal(err)
		}
		first, second := b.Arrive(), b.Arrive()
		poll := Turn{Background: true}
		order := servedOrder(t, b, []Turn{poll, {Request: second}, {Request: first, Priority: 9}, {Request: second, Priority: 1}, poll, {Request: first, Priority: 3}, {Request: first, Priority: 9}})
		want := []Turn{{Request: first, Priority: 3}, {Request: first, Priority: 9}, {Request: first, Priority: 9}, {Request: second}, {Request: second, Priority: 1}, poll, poll}
		if !slices.Equal(order, want) {
			t.Errorf("served %v, want %v", order, want)
		}
	})
}

// servedOrder queues a wait of client "a" for each of turns, in that order
// (inside a synctest bubble), and returns the turns in the order b served
// them.
func servedOrder(t *testing.T, b *Budget, turns []Turn) []Turn {
	t.Helper()
	var mu sync.Mutex
	var order []Turn
	var wg sync.WaitGroup
	for _, turn := range turns {
		wg.Go(func() {
			if _, err := b.Wait(t.Context(), "a", turn); err != nil {
				t.Error(err)
			}
			mu.Lock()
			order = append(order, turn)
			mu.Unlock()
		})
		synctest.Wait() // queued in this order
	}
	wg.Wait()
	return order
}
