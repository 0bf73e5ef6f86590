package live

import (
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/redistest"
	"github.com/workspacenet/facade/restclient"
)

var bob = restclient.Credentials{Authorization: "Bearer bob", NetworkID: "n"}

// readingThing is src reading the entry /things id=T1.
func readingThing(src Source) Source {
	src.Reads = []restclient.Entry{{Route: "/things", Param: "id", Value: "T1"}}
	return src
}

// TestPokePollsTheWritersSourcesNow: with an hour's interval, a poke of
// alice's identity naming an entry her source reads (the id in another
// case) makes her poller poll at once, and her subscriber gets the change;
// bob's poller of the same source is not polled, nor is anyone for an
// entry no source reads, or for every value of another parameter.
func TestPokePollsTheWritersSourcesNow(t *testing.T) {
	h := New(Config{Interval: time.Hour, AllowFastPolls: true})
	defer h.Close()
	src := newHeldSource(item("a", "new", 1))
	subA, err := h.Subscribe(t.Context(), alice, readingThing(src.source(0)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Subscribe(t.Context(), bob, readingThing(src.source(0))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both baselines", func() bool { return h.Stats().Ready == 2 })
	polls := func() int64 { return h.Stats().Polls["/things"] }
	if n := polls(); n != 2 {
		t.Fatalf("%d polls before the poke, want the 2 baselines", n)
	}
	for _, stale := range [][]restclient.Entry{
		{{Route: "/things", Param: "id", Value: "T2"}},
		{{Route: "/other", Param: "id", Value: "T1"}},
		{{Route: "/things", Param: "locationRef", Value: restclient.AnyValue}},
	} {
		if n := h.Poke(alice.Identity(), stale); n != 0 {
			t.Errorf("Poke(%v) poked %d pollers, want none", stale, n)
		}
	}
	src.set([]Item{item("a", "done", 1)}, nil)
	if n := h.Poke(alice.Identity(), []restclient.Entry{{Route: "/things", Param: "id", Value: "t1"}}); n != 1 {
		t.Fatalf("Poke poked %d pollers, want alice's one", n)
	}
	if e, err := next(t, subA); err != nil || e.Kind != Updated || e.ID != "a" {
		t.Fatalf("alice after her poke: %+v %v, want UPDATED a", e, err)
	}
	if n := polls(); n != 3 {
		t.Errorf("%d polls after alice's poke, want 3 (bob's poller not polled)", n)
	}
	if n := h.Poke(alice.Identity(), []restclient.Entry{{Route: "/things", Param: "id", Value: restclient.AnyValue}}); n != 1 {
		t.Errorf("Poke of every id poked %d pollers, want alice's one", n)
	}
}

// TestPokeReachesTheLeaseHolder: alice's source is polled by replica 0,
// which holds the lease; replica 1 follows it and replica 2 has no poller
// of hers. A poke on the follower, then one on replica 2, each makes the
// holder poll at once (over the identity's poke channel), and the change
// reaches both subscribers; the follower never polls.
func TestPokeReachesTheLeaseHolder(t *testing.T) {
	rs := redistest.Start(t)
	reps := []*replica{replicaOn(t, rs.URL, time.Hour), replicaOn(t, rs.URL, time.Hour), replicaOn(t, rs.URL, time.Hour)}
	src := newHeldSource(item("a", "new", 1))
	polls := func(i int) int64 { return reps[i].hub.Stats().Polls["/things"] }
	var subs []*Subscription
	for i, r := range reps[:2] {
		s, err := r.hub.Subscribe(t.Context(), alice, readingThing(src.source(i)))
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
		if i == 0 {
			waitFor(t, "the holder's baseline", func() bool { return polls(0) == 1 })
		}
	}
	waitFor(t, "the follower listening", func() bool { return reps[1].confirmed() == 1 && reps[1].pokeConfirmed() })
	stale := []restclient.Entry{{Route: "/things", Param: "id", Value: "T1"}}
	for round, from := range []int{1, 2} {
		status := []string{"open", "done"}[round]
		src.set([]Item{item("a", status, 1)}, nil)
		if n, want := reps[from].hub.Poke(alice.Identity(), stale), 1-round; n != want {
			t.Errorf("replica %d poked %d of its pollers, want %d", from, n, want)
		}
		for i, s := range subs {
			if e, err := next(t, s); err != nil || e.Kind != Updated || e.Value.(*thing).Status != status {
				t.Fatalf("replica %d after a poke on replica %d: %+v %v, want UPDATED %s", i, from, e, err, status)
			}
		}
		if p0, p1 := polls(0), polls(1); p0 != int64(2+round) || p1 != 0 {
			t.Errorf("after the poke on replica %d: holder %d polls, follower %d, want %d and 0", from, p0, p1, 2+round)
		}
	}
}
