package live

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/workspacenet/facade/restclient"
)

// polls is a source whose every poll returns the next answer the test
// sends: the test decides what each poll sees, and when.
type polls struct {
	answers chan answer
	fetched chan struct{} // one per poll
}

type answer struct {
	items []Item
	err   error
}

func newPolls() *polls { return &polls{answers: make(chan answer), fetched: make(chan struct{}, 100)} }

func (p *polls) source(key string) Source {
	return Source{Key: key, Route: "/things", Fetch: func(ctx context.Context) ([]Item, error) {
		select {
		case a := <-p.answers:
			p.fetched <- struct{}{}
			return a.items, a.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
}

// answer makes the next poll see items (or err).
func (p *polls) answer(t *testing.T, items []Item, err error) {
	t.Helper()
	select {
	case p.answers <- answer{items, err}:
	case <-time.After(30 * time.Second):
		t.Fatal("no poll")
	}
	<-p.fetched
}

type thing struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

func item(id, status string, created int) Item {
	return Item{ID: id, Created: time.Unix(int64(created), 0), Value: &thing{id, status}}
}

func next(t *testing.T, s *Subscription) (Event, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.Next(ctx)
}

var alice = restclient.Credentials{Authorization: "Bearer alice", NetworkID: "n"}

func fastHub(c Config) *Hub {
	c.Interval, c.AllowFastPolls = time.Millisecond, true
	return New(c)
}

// TestChangesAreCreatedOrUpdated: the first poll is the baseline; a new id
// is CREATED, a changed item UPDATED, an item older than the newest seen
// that enters the page UPDATED, an unchanged one nothing; oldest first.
func TestChangesAreCreatedOrUpdated(t *testing.T) {
	h := fastHub(Config{})
	defer h.Close()
	p := newPolls()
	s, err := h.Subscribe(context.Background(), alice, p.source("k"))
	if err != nil {
		t.Fatal(err)
	}
	p.answer(t, []Item{item("b", "new", 2), item("a", "new", 1)}, nil)
	p.answer(t, []Item{item("d", "new", 4), item("c", "new", 3), item("b", "paid", 2), item("a", "new", 1), item("z", "new", 0)}, nil)
	want := []struct {
		kind Kind
		id   string
	}{{Updated, "z"}, {Updated, "b"}, {Created, "c"}, {Created, "d"}}
	for _, w := range want {
		e, err := next(t, s)
		if err != nil || e.Kind != w.kind || e.ID != w.id {
			t.Fatalf("event %v %s %v, want %v %s", e.Kind, e.ID, err, w.kind, w.id)
		}
	}
	p.answer(t, []Item{item("d", "new", 4), item("c", "new", 3)}, nil) // nothing new
	p.answer(t, []Item{item("d", "done", 4)}, nil)
	if e, _ := next(t, s); e.Kind != Updated || e.ID != "d" || e.Value.(*thing).Status != "done" {
		t.Fatalf("event %+v", e)
	}
}

// TestOnePollerPerIdentityAndSource: subscribers of one source with two
// spellings of one credential share a poller; another credential, or
// another source, has its own; the last subscriber gone stops it.
func TestOnePollerPerIdentityAndSource(t *testing.T) {
	h := fastHub(Config{})
	defer h.Close()
	p := newPolls()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	spelled := restclient.Credentials{Authorization: "bearer  alice", NetworkID: "n"}
	bob := restclient.Credentials{Authorization: "Bearer bob", NetworkID: "n"}
	var subs []*Subscription
	for _, c := range []struct {
		creds restclient.Credentials
		key   string
	}{{alice, "k"}, {spelled, "k"}, {bob, "k"}, {alice, "other"}} {
		s, err := h.Subscribe(ctx, c.creds, p.source(c.key))
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	if st := h.Stats(); st.Pollers != 3 || st.Subscriptions != 4 {
		t.Fatalf("stats %+v, want 3 pollers for 4 subscriptions", st)
	}
	for _, s := range subs {
		s.Close()
	}
	if st := h.Stats(); st.Pollers != 0 || st.Subscriptions != 0 {
		t.Fatalf("stats %+v after every subscriber left", st)
	}
}

// TestSlowSubscriberCoalescesThenEnds: updates of one node waiting for a
// subscriber are one event; more distinct nodes than Buffer end it with
// ErrTooSlow, and the other subscribers of the source go on.
func TestSlowSubscriberCoalescesThenEnds(t *testing.T) {
	h := fastHub(Config{Buffer: 3})
	defer h.Close()
	p := newPolls()
	slow, _ := h.Subscribe(context.Background(), alice, p.source("k"))
	p.answer(t, []Item{item("a", "new", 1)}, nil)
	p.answer(t, []Item{item("b", "new", 2), item("a", "paid", 1)}, nil)
	p.answer(t, []Item{item("b", "new", 2), item("a", "done", 1)}, nil)
	p.answer(t, []Item{item("b", "new", 2), item("a", "done", 1)}, nil) // the previous poll is applied
	e, err := next(t, slow)
	if err != nil || e.ID != "a" || e.Value.(*thing).Status != "done" || e.Kind != Updated {
		t.Fatalf("first event %+v %v: want a's last update, coalesced", e, err)
	}
	fast, _ := h.Subscribe(context.Background(), alice, p.source("k"))
	p.answer(t, []Item{item("e", "new", 5), item("d", "new", 4), item("c", "new", 3), item("b", "new", 2), item("a", "done", 1)}, nil)
	// The next poll is asked for only once this one is applied: slow is
	// read only after c, d and e were offered to it.
	p.answer(t, []Item{item("e", "new", 5), item("d", "new", 4), item("c", "new", 3), item("b", "new", 2), item("a", "done", 1)}, nil)
	for {
		if _, err := next(t, slow); err != nil {
			if !errors.Is(err, ErrTooSlow) {
				t.Fatalf("slow subscriber ended with %v", err)
			}
			break
		}
	}
	for _, id := range []string{"c", "d", "e"} {
		if e, err := next(t, fast); err != nil || e.ID != id {
			t.Fatalf("fast subscriber: %+v %v, want %s", e, err, id)
		}
	}
}

// TestRefusedCredentialsEndOthersReport: a 401 ends every subscription of
// the source with the error; a 500 is a Failed event and polling goes on,
// backing off.
func TestRefusedCredentialsEndOthersReport(t *testing.T) {
	h := fastHub(Config{})
	defer h.Close()
	p := newPolls()
	s, _ := h.Subscribe(context.Background(), alice, p.source("k"))
	p.answer(t, []Item{item("a", "new", 1)}, nil)
	p.answer(t, nil, &restclient.ErrorResponse{StatusCode: http.StatusInternalServerError})
	e, err := next(t, s)
	if err != nil || e.Kind != Failed || e.Err == nil || e.Interval <= h.Interval() {
		t.Fatalf("after a 500: %+v %v, want a Failed event and a longer interval", e, err)
	}
	p.answer(t, []Item{item("a", "paid", 1)}, nil)
	if e, err := next(t, s); err != nil || e.Kind != Updated || e.Interval != h.Interval() {
		t.Fatalf("after recovery: %+v %v", e, err)
	}
	p.answer(t, nil, &restclient.ErrorResponse{StatusCode: http.StatusUnauthorized})
	if _, err := next(t, s); restclient.StatusCode(err) != http.StatusUnauthorized {
		t.Fatalf("after a 401: %v, want the 401", err)
	}
	for deadline := time.Now().Add(30 * time.Second); h.Stats().Pollers != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pollers %d after a 401", h.Stats().Pollers)
		}
	}
}

// TestSubscriptionBounds: per credential and in total.
func TestSubscriptionBounds(t *testing.T) {
	h := fastHub(Config{MaxPerCredential: 1, MaxTotal: 2})
	defer h.Close()
	p := newPolls()
	bob := restclient.Credentials{Authorization: "Bearer bob", NetworkID: "n"}
	carol := restclient.Credentials{Authorization: "Bearer carol", NetworkID: "n"}
	if _, err := h.Subscribe(context.Background(), alice, p.source("k")); err != nil {
		t.Fatal(err)
	}
	var lim *LimitError
	if _, err := h.Subscribe(context.Background(), alice, p.source("j")); !errors.As(err, &lim) || lim.What != "credential" {
		t.Fatalf("second of alice: %v", err)
	}
	if _, err := h.Subscribe(context.Background(), bob, p.source("k")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Subscribe(context.Background(), carol, p.source("k")); !errors.As(err, &lim) || lim.What != "total" {
		t.Fatalf("third in all: %v", err)
	}
}

// TestDeliverOffersOneAtATime: a subscription delivering to an offer hands
// it one event when it has room, keeps the others queued (coalesced: a
// queued CREATED node updated again stays one CREATED event with the new
// value) until Pump, and offers its end last, once.
func TestDeliverOffersOneAtATime(t *testing.T) {
	h := fastHub(Config{})
	p := newPolls()
	s, err := h.Subscribe(context.Background(), alice, p.source("k"))
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan Event, 1)
	ends := make(chan error, 2)
	s.Deliver(func(e Event, end error) bool {
		if end != nil {
			ends <- end
			return true
		}
		select {
		case ch <- e:
			return true
		default:
			return false
		}
	})
	p.answer(t, nil, nil) // baseline
	p.answer(t, []Item{item("c", "new", 3), item("b", "new", 2), item("a", "new", 1)}, nil)
	p.answer(t, []Item{item("c", "paid", 3), item("b", "new", 2), item("a", "new", 1)}, nil)
	p.answer(t, []Item{item("c", "paid", 3), item("b", "new", 2), item("a", "new", 1)}, nil) // the previous poll is delivered
	take := func() Event {
		t.Helper()
		select {
		case e := <-ch:
			return e
		case <-time.After(30 * time.Second):
			t.Fatal("no event")
		}
		return Event{}
	}
	if e := take(); e.ID != "a" || e.Kind != Created {
		t.Fatalf("first %+v", e)
	}
	if len(ch) != 0 {
		t.Fatal("an event was offered without a Pump")
	}
	s.Pump()
	if e := take(); e.ID != "b" || e.Kind != Created {
		t.Fatalf("second %+v", e)
	}
	s.Pump()
	if e := take(); e.ID != "c" || e.Kind != Created || e.Value.(*thing).Status != "paid" {
		t.Fatalf("third %+v", e)
	}
	h.Close()
	if err := <-ends; !errors.Is(err, ErrClosed) {
		t.Fatalf("end %v", err)
	}
	s.Pump()
	if len(ends) != 0 || len(ch) != 0 {
		t.Fatal("offered after the end")
	}
}

// TestReplicaQueueBoundEndsTheSubscribersBehind: past MaxQueued events
// waiting in the Hub, a subscriber that still has events of an earlier
// poll when more come ends with ErrTooSlow; one that takes its events as
// they come gets a whole burst, even over the bound.
func TestReplicaQueueBoundEndsTheSubscribersBehind(t *testing.T) {
	h := fastHub(Config{Buffer: 10, MaxQueued: 4})
	defer h.Close()
	ps, pf := newPolls(), newPolls()
	slow, _ := h.Subscribe(context.Background(), alice, ps.source("slow"))
	fast, _ := h.Subscribe(context.Background(), alice, pf.source("fast"))
	three := []Item{item("c", "new", 3), item("b", "new", 2), item("a", "new", 1)}
	ps.answer(t, nil, nil) // baselines
	pf.answer(t, nil, nil)
	ps.answer(t, three, nil)
	ps.answer(t, three, nil) // the previous poll is applied: 3 wait for slow
	pf.answer(t, three, nil)
	pf.answer(t, three, nil)
	if q := h.Stats().Queued; q != 6 {
		t.Fatalf("%d events queued, want 6", q)
	}
	for _, id := range []string{"a", "b", "c"} {
		if e, err := next(t, fast); err != nil || e.ID != id {
			t.Fatalf("fast subscriber, over the bound: %+v %v, want %s", e, err, id)
		}
	}
	more := append([]Item{item("e", "new", 5), item("d", "new", 4)}, three...)
	ps.answer(t, more, nil) // its last poll: slow ends
	if _, err := next(t, slow); !errors.Is(err, ErrTooSlow) {
		t.Fatalf("slow subscriber behind, over the bound: %v, want ErrTooSlow", err)
	}
	if q := h.Stats().Queued; q != 0 {
		t.Fatalf("%d events queued after the slow subscriber ended, want 0", q)
	}
}
