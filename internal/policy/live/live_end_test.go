package live

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/workspacenet/facade/restclient"
)

// TestSubscribeDuringEndAllGetsANewPoller: a subscriber that joins the
// source while a 401 is ending its subscribers (from the offer of one of
// their ends) gets a new poller, whose polls it receives; it is not left on
// the poller that stopped, without events and without an end.
func TestSubscribeDuringEndAllGetsANewPoller(t *testing.T) {
	h := fastHub(Config{})
	defer h.Close()
	p := newPolls()
	var once sync.Once
	joined := make(chan *Subscription, 1)
	ends := make(chan error, 2)
	for range 2 {
		s, err := h.Subscribe(context.Background(), alice, p.source("k"))
		if err != nil {
			t.Fatal(err)
		}
		s.Deliver(func(e Event, end error) bool {
			if end == nil {
				return true
			}
			ends <- end
			once.Do(func() {
				late, err := h.Subscribe(context.Background(), alice, p.source("k"))
				if err != nil {
					t.Error(err)
				}
				joined <- late
			})
			return true
		})
	}
	p.answer(t, nil, nil) // baseline
	p.answer(t, nil, &restclient.ErrorResponse{StatusCode: http.StatusUnauthorized})
	for range 2 {
		if err := <-ends; restclient.StatusCode(err) != http.StatusUnauthorized {
			t.Fatalf("end %v, want the 401", err)
		}
	}
	late := <-joined
	if late == nil {
		t.FailNow()
	}
	p.answer(t, []Item{item("a", "new", 1)}, nil) // the new poller's baseline
	p.answer(t, []Item{item("b", "new", 2), item("a", "new", 1)}, nil)
	if e, err := next(t, late); err != nil || e.Kind != Created || e.ID != "b" {
		t.Fatalf("the late subscriber: %+v %v, want CREATED b", e, err)
	}
	if st := h.Stats(); st.Pollers != 1 || st.Subscriptions != 1 {
		t.Fatalf("stats %+v, want the late subscriber's poller alone", st)
	}
}

// TestSubscribeRacesClose: subscriptions made while the Hub closes end
// (ErrClosed, or refused with it); run with -race, the subscription's
// context hook (stopCtx) is not read by the closing goroutine while
// Subscribe writes it.
func TestSubscribeRacesClose(t *testing.T) {
	for range 200 {
		h := fastHub(Config{})
		p := newPolls()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		subs := make(chan *Subscription, 8)
		for range 8 {
			wg.Go(func() {
				s, err := h.Subscribe(ctx, alice, p.source("k"))
				if err != nil {
					if !errors.Is(err, ErrClosed) {
						t.Error(err)
					}
					return
				}
				subs <- s
			})
		}
		wg.Go(h.Close)
		wg.Wait()
		h.Close()
		close(subs)
		for s := range subs {
			if _, err := next(t, s); !errors.Is(err, ErrClosed) {
				t.Fatalf("a subscription of a closed Hub: %v, want ErrClosed", err)
			}
		}
		cancel()
	}
}
