package admission

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"
)

// waitFor polls cond (a hang guard of 30 s, not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// acquireAsync acquires in a goroutine; the channel gets the result.
func acquireAsync(c *Controller, ctx context.Context, client string, n int64) <-chan bool {
	done := make(chan bool, 1)
	go func() {
		ok, _ := c.acquire(ctx, client, n)
		done <- ok
	}()
	return done
}

func must(t *testing.T, c *Controller, client string, n int64) {
	t.Helper()
	if ok, _ := c.acquire(context.Background(), client, n); !ok {
		t.Fatalf("%s: %d units refused (in flight %d)", client, n, c.InFlight())
	}
}

// One client takes its share, and more only while a share stays free for
// the others: its next operation is refused as over its share, while
// another client's fits.
func TestShareLeavesRoomForOthers(t *testing.T) {
	c := New(Config{MaxCostInFlight: 100, ClientShare: 25, Wait: 0})
	for range 3 {
		must(t, c, "B", 25)
	}
	if ok, own := c.acquire(context.Background(), "B", 25); ok || !own {
		t.Fatalf("B's fourth: ok %v, own share %v; want refused by its own share", ok, own)
	}
	must(t, c, "A", 25)
	if ok, own := c.acquire(context.Background(), "C", 1); ok || own {
		t.Fatalf("beyond the bound: ok %v, own share %v; want refused by the bound", ok, own)
	}
	if got := c.InFlight(); got != 100 {
		t.Fatalf("in flight %d, want 100", got)
	}
}

// An operation its own client's share holds back does not hold back
// another client's; it is admitted once its client's units (or others')
// leave the share free.
func TestHeldBackByItsShareHoldsNoOneBack(t *testing.T) {
	c := New(Config{MaxCostInFlight: 100, ClientShare: 25, Wait: time.Minute})
	for range 3 {
		must(t, c, "B", 25)
	}
	fourth := acquireAsync(c, context.Background(), "B", 25)
	waitFor(t, "B's fourth to wait", func() bool { return c.Waiting() == 1 })
	must(t, c, "A", 10) // not behind B's fourth
	c.release("B", 25)  // 50 + 10 in flight: B's fourth would leave 15 free
	select {
	case <-fourth:
		t.Fatal("B's fourth admitted with less than a share free for others")
	default:
	}
	c.release("A", 10)
	if !<-fourth {
		t.Fatal("B's fourth refused")
	}
	if got := c.InFlight(); got != 75 {
		t.Fatalf("in flight %d, want 75", got)
	}
}

// When the bound holds the first waiting operation back, later ones wait
// their turn even if they would fit.
func TestTheBoundServesInArrivalOrder(t *testing.T) {
	c := New(Config{MaxCostInFlight: 100, Wait: time.Minute})
	must(t, c, "X", 90)
	big := acquireAsync(c, context.Background(), "A", 50)
	waitFor(t, "the big one to wait", func() bool { return c.Waiting() == 1 })
	small := acquireAsync(c, context.Background(), "B", 5)
	waitFor(t, "the small one to wait", func() bool { return c.Waiting() == 2 })
	c.release("X", 90)
	if !<-big || !<-small {
		t.Fatal("refused after the release")
	}
}

// A waiting operation that gives up (its context ends) lets those behind it
// in if they fit: no one waits behind an operation no longer there.
func TestGivingUpLetsTheNextIn(t *testing.T) {
	c := New(Config{MaxCostInFlight: 100, Wait: time.Minute})
	must(t, c, "X", 60)
	ctx, cancel := context.WithCancel(context.Background())
	head := acquireAsync(c, ctx, "A", 50)
	waitFor(t, "the head to wait", func() bool { return c.Waiting() == 1 })
	next := acquireAsync(c, context.Background(), "B", 30)
	waitFor(t, "the next to wait", func() bool { return c.Waiting() == 2 })
	cancel()
	if <-head {
		t.Fatal("the head was admitted although nothing was released")
	}
	if !<-next {
		t.Fatal("the next was not admitted once the head gave up")
	}
	if got := c.InFlight(); got != 90 {
		t.Fatalf("in flight %d, want 90", got)
	}
}

// An operation costing more than one client may ever hold counts as that
// much, so it can run.
func TestCostAboveAClientsMostRuns(t *testing.T) {
	c := New(Config{MaxCostInFlight: 100, ClientShare: 25})
	if c.most != 75 {
		t.Fatalf("most %d, want 75 (the bound less a share for others)", c.most)
	}
	if c := New(Config{MaxCostInFlight: 100, ClientShare: 100}); c.share != 0 || c.most != 100 {
		t.Fatalf("a share of the whole bound: share %d, most %d; want none and 100", c.share, c.most)
	}
}

// A response written in parts (Keep) holds its units after its status is
// written, until End.
func TestKeepHoldsUnitsUntilEnd(t *testing.T) {
	c := New(Config{MaxCostInFlight: 100, Wait: 0})
	for _, keep := range []bool{false, true} {
		ctx, s := c.Begin(context.Background(), httptest.NewRecorder(), "A")
		if ok, _ := c.acquire(ctx, "A", 10); !ok {
			t.Fatal("refused")
		}
		ctx.Value(slotKey{}).(*slot).held = 10
		if keep {
			Keep(ctx)
		}
		s.Writer().WriteHeader(200)
		want := int64(0)
		if keep {
			want = 10
		}
		if got := c.InFlight(); got != want {
			t.Fatalf("keep %v: %d units in flight after the status, want %d", keep, got, want)
		}
		s.End()
		if got := c.InFlight(); got != 0 {
			t.Fatalf("keep %v: %d units in flight after End", keep, got)
		}
	}
}
