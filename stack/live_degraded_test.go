package stack_test

import (
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/policy/live"
	"github.com/workspacenet/facade/internal/testsupport/redistest"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
)

// TestLiveWithoutRedisMidway: two replicas on one Redis share one poller;
// Redis stops: each replica polls for its own subscriber and both receive
// a new order; Redis is back: one replica holds the lease again (the
// other's polls stop, and the upstream serves the holder's polls only),
// and a new order reaches both subscribers.
func TestLiveWithoutRedisMidway(t *testing.T) {
	rs := redistest.StartOwn(t)
	up, sts, subs := liveReplicas(t, rs.URL, 500*time.Millisecond)
	m, loc := up.Manifest, up.Manifest.IDs["location"][0]
	creds := restclient.Credentials{Authorization: "Bearer " + m.BearerToken, NetworkID: m.NetworkID}
	polls := func(i int) int64 { return sts[i].Live.Stats().Polls[restclient.OpListOrders.Route] }
	served := func() int64 { return int64(up.Server.Hooks().Counts()[restclient.OpListOrders.Pattern()]) }
	// oneHolder waits until, over 5 polls in a row, only one replica
	// polled, and the upstream served those polls only (one more in flight
	// at most); it returns the holder.
	oneHolder := func(what string) int {
		t.Helper()
		holder := -1
		testenv.WaitFor(t, what, func() bool {
			a, b, s := polls(0), polls(1), served()
			testenv.WaitFor(t, "5 polls", func() bool { return polls(0)+polls(1) >= a+b+5 })
			da, db, ds := polls(0)-a, polls(1)-b, served()-s
			switch {
			case db == 0 && (ds == da || ds == da+1):
				holder = 0
			case da == 0 && (ds == db || ds == db+1):
				holder = 1
			default:
				return false
			}
			return true
		})
		return holder
	}
	holder := oneHolder("one lease holder")
	follower := 1 - holder

	// Redis stops: each replica polls for itself.
	rs.Stop()
	before := polls(follower)
	testenv.WaitFor(t, "the follower polls alone", func() bool { return polls(follower) > before+1 })
	hb := polls(holder)
	testenv.WaitFor(t, "the holder goes on polling", func() bool { return polls(holder) > hb+1 })
	created := copyOrder(t, up, firstOrderID(t, sts[0], creds, loc))
	for i, s := range subs {
		if e := eventOf(t, s, created); e.Kind != live.Created {
			t.Fatalf("replica %d without Redis: %+v, want CREATED %s", i, e, created)
		}
	}

	// Redis is back: one holder again.
	rs.Restart()
	testenv.WaitFor(t, "Redis healthy on both replicas", func() bool { return sts[0].Redis.Healthy() && sts[1].Redis.Healthy() })
	oneHolder("one lease holder after Redis is back")
	created = copyOrder(t, up, created)
	for i, s := range subs {
		if e := eventOf(t, s, created); e.Kind != live.Created {
			t.Fatalf("replica %d after Redis is back: %+v, want CREATED %s", i, e, created)
		}
	}
}

// eventOf returns s's next event of node id, skipping the others.
func eventOf(t *testing.T, s *live.Subscription, id string) live.Event {
	t.Helper()
	for {
		if e := nextEvent(t, s); e.ID == id {
			return e
		}
	}
}
