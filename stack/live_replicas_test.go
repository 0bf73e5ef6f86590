package stack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/policy/live"
	"github.com/workspacenet/facade/internal/testsupport/redistest"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// TestLivePollerSharedByReplicas: two replicas on one Redis, one
// subscriber of one location's orders on each, one credential: only the
// lease holder polls (every list the upstream served is one of its polls);
// a new order reaches both subscribers, the follower's from what the holder
// published (with the holder's poll call); nothing in Redis reads in clear; the holder stopped, the other
// replica takes the lease, polls, and its subscriber goes on receiving.
func TestLivePollerSharedByReplicas(t *testing.T) {
	rs := redistest.Start(t)
	up, sts, subs := liveReplicas(t, rs.URL, 5*time.Second)
	m, loc := up.Manifest, up.Manifest.IDs["location"][0]
	creds := restclient.Credentials{Authorization: "Bearer " + m.BearerToken, NetworkID: m.NetworkID}
	ctx := t.Context()
	polls := func(st *stack.Stack) int64 { return st.Live.Stats().Polls[restclient.OpListOrders.Route] }
	testenv.WaitFor(t, "polls", func() bool { return polls(sts[0])+polls(sts[1]) >= 3 })
	holder, follower := 0, 1
	if polls(sts[1]) > 0 {
		holder, follower = 1, 0
	}
	if polls(sts[follower]) != 0 {
		t.Fatalf("both replicas polled: %d and %d", polls(sts[0]), polls(sts[1]))
	}
	served := up.Server.Hooks().Counts()[restclient.OpListOrders.Pattern()]
	if p := polls(sts[holder]); served != p && served != p+1 {
		t.Fatalf("the upstream served %d order lists, the holder made %d polls", served, p)
	}

	created := copyOrder(t, up, firstOrderID(t, sts[0], creds, loc))
	for i, s := range subs {
		e := nextEvent(t, s)
		if e.Kind != live.Created || e.ID != created || e.Value.(*restclient.Order).ID != created {
			t.Fatalf("replica %d: %+v, want CREATED %s", i, e, created)
		}
		// The follower's event carries the holder's poll call (the report).
		if len(e.Calls) != 1 || e.Calls[0].Path != restclient.OpListOrders.Route || e.Calls[0].Status != http.StatusOK || e.Calls[0].Part != "poll" || e.CallsStart.IsZero() {
			t.Fatalf("replica %d: poll calls %+v, want the holder's one list of orders", i, e.Calls)
		}
	}

	// Nothing in Redis names the location, the order, or the credential.
	r := rs.Client()
	keys, _ := r.Keys(ctx, "wnf:live:*").Result()
	if len(keys) == 0 {
		t.Fatal("no live key in Redis")
	}
	for _, k := range keys {
		v, _ := r.Get(ctx, k).Result()
		for _, secret := range []string{loc, created, m.BearerToken, m.NetworkID} {
			if strings.Contains(k, secret) || strings.Contains(v, secret) {
				t.Fatalf("Redis key %s holds %q in clear", k, secret)
			}
		}
	}

	// The holder gone, the follower takes over.
	if err := sts[holder].Close(); err != nil {
		t.Logf("close: %v", err)
	}
	before := polls(sts[follower])
	testenv.WaitFor(t, "the follower polls", func() bool { return polls(sts[follower]) > before+1 })
	created = copyOrder(t, up, created)
	if e := nextEvent(t, subs[follower]); e.Kind != live.Created || e.ID != created {
		t.Fatalf("after the failover: %+v, want CREATED %s", e, created)
	}
}

func nextEvent(t *testing.T, s *live.Subscription) live.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		e, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind != live.Failed {
			return e
		}
	}
}

func firstOrderID(t *testing.T, st *stack.Stack, creds restclient.Credentials, loc string) string {
	t.Helper()
	ctx := restclient.WithCredentials(context.Background(), creds)
	l, _, err := st.Client.Shop.ListOrders(ctx, &restclient.OrderListOptions{LocationRef: loc, ListOptions: restclient.ListOptions{Limit: 1}})
	if err != nil || len(l) == 0 {
		t.Fatalf("orders: %v", err)
	}
	return l[0].ID
}

// copyOrder makes a new order like id on the upstream and returns its id.
func copyOrder(t *testing.T, up *stack.Upstream, id string) string {
	t.Helper()
	resp, err := http.Post(up.URL+"/_test/orders/"+id+"/copy", "application/json", bytes.NewReader([]byte(`{"status":"new"}`)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("copy: %d %v", resp.StatusCode, err)
	}
	return out.ID
}

// liveReplicas starts the local REST service (with its test endpoints) and
// two replicas of the program on Redis at redisURL (one secret, polls every
// 100 ms, Redis operations timing out after redisTimeout), each with one
// subscriber of the first demo location's orders, with the demo credentials.
func liveReplicas(t *testing.T, redisURL string, redisTimeout time.Duration) (*stack.Upstream, []*stack.Stack, []*live.Subscription) {
	t.Helper()
	up, err := stack.StartUpstream(t.Context(), stack.UpstreamConfig{DemoScale: 1, TestEndpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })
	var sts []*stack.Stack
	for _, r := range startReplicas(t, 2, redisURL, up, func(cfg *stack.Config) {
		cfg.MetricsAddr, cfg.RedisOpTimeout = "", redisTimeout
		cfg.Live.Interval, cfg.Live.AllowFastPolls = 100*time.Millisecond, true
	}, func() *slog.Logger { return slog.New(slog.DiscardHandler) }) {
		sts = append(sts, r.st)
	}
	m := up.Manifest
	creds := restclient.Credentials{Authorization: "Bearer " + m.BearerToken, NetworkID: m.NetworkID}
	var subs []*live.Subscription
	for _, st := range sts {
		s, err := st.Live.Subscribe(t.Context(), creds, live.Orders(st.Client, m.IDs["location"][0], ""))
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	return up, sts, subs
}
