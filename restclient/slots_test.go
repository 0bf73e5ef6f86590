package restclient

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// grants records the order in which waiters got their slots.
type grants struct {
	mu    sync.Mutex
	order []string
}

func (g *grants) add(s string) { g.mu.Lock(); g.order = append(g.order, s); g.mu.Unlock() }

// waitQueued waits until id has n waiters queued.
func waitQueued(t *testing.T, s *slots, id string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		got := len(s.waiting[id])
		s.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d waiters, want %d", id, got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSlotsServeWaitingClientsRoundRobin(t *testing.T) {
	s := newSlots(2, 2)
	ctx := t.Context()
	for range 2 { // B holds every slot
		if err := s.acquire(ctx, "B"); err != nil {
			t.Fatal(err)
		}
	}
	g := &grants{}
	var wg sync.WaitGroup
	queue := func(id string, n int) {
		for i := range n {
			wg.Go(func() {
				if err := s.acquire(ctx, id); err != nil {
					t.Error(err)
					return
				}
				g.add(id)
			})
			waitQueued(t, s, id, i+1)
		}
	}
	queue("B", 3) // B's flood queues first
	queue("A", 1) // then A's one call
	// Each release grants one slot; A's turn comes second, not after B's 3.
	for i := range 4 {
		s.release("B")
		waitGranted(t, g, i+1)
	}
	wg.Wait()
	if got := g.snapshot(); !slices.Equal(got, []string{"B", "A", "B", "B"}) {
		t.Errorf("grant order %v, want B A B B", got)
	}
}

func (g *grants) snapshot() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.order)
}

func waitGranted(t *testing.T, g *grants, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(g.snapshot()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d grants, want %d", len(g.snapshot()), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSlotsPerClientBoundLeavesRoomForOthers(t *testing.T) {
	s := newSlots(4, 2)
	ctx := t.Context()
	for range 2 {
		if err := s.acquire(ctx, "B"); err != nil {
			t.Fatal(err)
		}
	}
	// B is at its bound: its third call waits although slots are free...
	third := make(chan error, 1)
	go func() { third <- s.acquire(ctx, "B") }()
	waitQueued(t, s, "B", 1)
	// ...and A gets a slot at once.
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.acquire(actx, "A"); err != nil {
		t.Fatalf("A: %v", err)
	}
	s.release("B")
	if err := <-third; err != nil {
		t.Fatal(err)
	}
}

func TestSlotsCancelledWaiterLeavesNoTrace(t *testing.T) {
	s := newSlots(1, 1)
	if err := s.acquire(t.Context(), "B"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.acquire(ctx, "A") }()
	waitQueued(t, s, "A", 0+1)
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("err %v", err)
	}
	s.release("B")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.total != 0 || len(s.held) != 0 || len(s.waiting) != 0 || len(s.ring) != 0 {
		t.Errorf("state after cancel and release: total %d held %v waiting %v ring %v", s.total, s.held, s.waiting, s.ring)
	}
}
