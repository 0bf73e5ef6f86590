package restclient

import (
	"context"
	"sync"
)

// slots bounds the requests in flight: at most max in all and at most
// perClient for one upstream identity (Credentials.Identity). When slots are
// scarce, waiting identities are served round-robin, each in arrival order,
// so one identity's flood of slow calls cannot starve another's.
type slots struct {
	max, perClient int

	mu      sync.Mutex
	total   int
	held    map[string]int             // in flight per identity
	waiting map[string][]chan struct{} // FIFO per identity
	ring    []string                   // identities with waiters, in turn order
}

func newSlots(max, perClient int) *slots {
	return &slots{max: max, perClient: perClient, held: map[string]int{}, waiting: map[string][]chan struct{}{}}
}

// acquire takes a slot for id, waiting for one until ctx ends.
func (s *slots) acquire(ctx context.Context, id string) error {
	s.mu.Lock()
	if len(s.waiting[id]) == 0 && s.free(id) {
		s.take(id)
		s.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	if len(s.waiting[id]) == 0 {
		s.ring = append(s.ring, id)
	}
	s.waiting[id] = append(s.waiting[id], ch)
	s.mu.Unlock()

	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		select {
		case <-ch: // granted meanwhile: hand it on
			s.releaseLocked(id)
		default:
			s.dropWaiter(id, ch)
		}
		return ctx.Err()
	}
}

// release returns id's slot and grants freed slots to waiters in turn.
func (s *slots) release(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked(id)
}

func (s *slots) free(id string) bool {
	return s.total < s.max && (s.perClient <= 0 || s.held[id] < s.perClient)
}

func (s *slots) take(id string) {
	s.total++
	s.held[id]++
}

func (s *slots) releaseLocked(id string) {
	s.total--
	if s.held[id]--; s.held[id] == 0 {
		delete(s.held, id)
	}
	// Round-robin: the first identity in turn that may take a slot gets
	// one, then goes to the back of the ring if it still waits.
	for i := 0; i < len(s.ring) && s.total < s.max; {
		next := s.ring[i]
		if !s.free(next) {
			i++
			continue
		}
		q := s.waiting[next]
		ch := q[0]
		s.waiting[next] = q[1:]
		s.take(next)
		close(ch)
		s.ring = append(s.ring[:i], s.ring[i+1:]...)
		if len(s.waiting[next]) > 0 {
			s.ring = append(s.ring, next)
		} else {
			delete(s.waiting, next)
		}
	}
}

// dropWaiter removes a waiter that gave up.
func (s *slots) dropWaiter(id string, ch chan struct{}) {
	q := s.waiting[id]
	for i, c := range q {
		if c == ch {
			q = append(q[:i], q[i+1:]...)
			break
		}
	}
	if len(q) > 0 {
		s.waiting[id] = q
		return
	}
	delete(s.waiting, id)
	for i, r := range s.ring {
		if r == id {
			s.ring = append(s.ring[:i], s.ring[i+1:]...)
			break
		}
	}
}
