package live

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/policy/redisx"
	"github.com/workspacenet/facade/internal/testsupport/redistest"
)

// heldSource is one source polled by several replicas: each replica's
// Fetch sees the items the test sets and, while the test holds the polls,
// waits until it releases them (or the poll's context ends).
type heldSource struct {
	mu        sync.Mutex
	items     []Item
	hold      chan struct{} // non-nil: polls wait for it to close
	started   chan int      // a replica's held poll began
	cancelled chan int      // a replica's held poll was cancelled
}

func newHeldSource(items ...Item) *heldSource {
	return &heldSource{items: items, started: make(chan int, 100), cancelled: make(chan int, 100)}
}

func (h *heldSource) set(items []Item, hold chan struct{}) {
	h.mu.Lock()
	h.items, h.hold = items, hold
	h.mu.Unlock()
}

// source is the source as replica i polls it.
func (h *heldSource) source(i int) Source {
	return Source{Key: "/things?held", Route: "/things", Decode: decodeThings, Fetch: func(ctx context.Context) ([]Item, error) {
		h.mu.Lock()
		items, hold := h.items, h.hold
		h.mu.Unlock()
		if hold != nil {
			h.started <- i
			select {
			case <-hold:
			case <-ctx.Done():
				h.cancelled <- i
				return nil, ctx.Err()
			}
		}
		return items, nil
	}}
}

func decodeThings(b []byte) ([]any, error) {
	var l struct{ Items []*thing }
	err := json.Unmarshal(b, &l)
	out := make([]any, len(l.Items))
	for i, v := range l.Items {
		out[i] = v
	}
	return out, err
}

// sharedHubs starts n replicas' Hubs on the Redis at url, one secret.
func sharedHubs(t *testing.T, url string, n int, interval time.Duration) ([]*Hub, []*Shared) {
	t.Helper()
	var hubs []*Hub
	var shared []*Shared
	for range n {
		rc, err := redisx.Open(url, redisx.Options{OpTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		sh := NewShared(rc, []byte("a secret of the replicas, 32 b.."))
		h := New(Config{Interval: interval, AllowFastPolls: true, Shared: sh})
		t.Cleanup(func() { h.Close(); _ = rc.Close() })
		hubs, shared = append(hubs, h), append(shared, sh)
	}
	return hubs, shared
}

// TestSharedSlowPollKeepsItsLease: two replicas, one subscriber on each;
// the holder's poll is held for longer than the lease lives (until a key
// set after the poll began with three times the lease's life has expired
// in Redis). The holder keeps the lease all along (renewed while it
// polls), the other replica does not poll meanwhile, and the change that
// poll saw reaches each subscriber once; the next change comes next. (When
// the holder is too late to renew, the other replica may take the lease
// over, but then the holder's poll is cancelled and not published.)
func TestSharedSlowPollKeepsItsLease(t *testing.T) {
	rs := redistest.Start(t)
	const interval = 150 * time.Millisecond
	hubs, shared := sharedHubs(t, rs.URL, 2, interval)
	src := newHeldSource(item("a", "new", 1))
	var subs []*Subscription
	for i, h := range hubs {
		s, err := h.Subscribe(t.Context(), alice, src.source(i))
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	name := shared[0].name(pollerKey{alice.Identity(), "/things?held"})
	lease := sharedPrefix + "lease:" + name
	r := rs.Client()
	ctx := t.Context()
	// The baseline is set.
	waitFor(t, "a first poll", func() bool { return hubs[0].Stats().Polls["/things"]+hubs[1].Stats().Polls["/things"] > 0 })

	release := make(chan struct{})
	src.set([]Item{item("b", "new", 2), item("a", "new", 1)}, release)
	var holder int
	select {
	case holder = <-src.started:
	case <-time.After(30 * time.Second):
		t.Fatal("no poll")
	}
	if v, _ := r.Get(ctx, lease).Result(); v != shared[holder].replica {
		t.Fatalf("replica %d polls, the lease is %q's", holder, v)
	}
	ttl := max(interval*2/3, 2*time.Millisecond)
	if err := r.Set(ctx, "test:probe", "1", 3*ttl).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the probe to expire", func() bool { return r.Exists(ctx, "test:probe").Val() == 0 })
	holderCancelled := false
	select {
	case i := <-src.cancelled:
		holderCancelled = i == holder
		t.Logf("replica %d's held poll was cancelled: the other took the lease over", i)
	default:
	}
	if v, _ := r.Get(ctx, lease).Result(); v != shared[holder].replica && !holderCancelled {
		t.Fatalf("the holder's poll outlived its lease: the lease is %q, not the polling replica %d's (%q)", v, holder, shared[holder].replica)
	}
	select {
	case i := <-src.started:
		if !holderCancelled {
			t.Fatalf("replica %d polled while replica %d's poll was in progress", i, holder)
		}
	default:
	}

	src.set([]Item{item("b", "new", 2), item("a", "new", 1)}, nil)
	close(release)
	for i, s := range subs {
		if e, err := next(t, s); err != nil || e.Kind != Created || e.ID != "b" {
			t.Fatalf("replica %d: %+v %v, want CREATED b", i, e, err)
		}
	}
	src.set([]Item{item("c", "new", 3), item("b", "new", 2), item("a", "new", 1)}, nil)
	for i, s := range subs {
		if e, err := next(t, s); err != nil || e.Kind != Created || e.ID != "c" {
			t.Fatalf("replica %d after b: %+v %v, want CREATED c (b once)", i, e, err)
		}
	}
}

// waitFor waits (30 s at most) for cond.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
