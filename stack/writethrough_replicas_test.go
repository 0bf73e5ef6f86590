package stack_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/policy/live"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/redistest"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// TestWriteThroughReachesTheLeaseHolder: two replicas on one Redis, polls
// a minute apart; a client's subscriber of a visit on the first replica,
// which polls it (holding the source's lease; its first poll waits for its
// channels, the identity's poke channel among them, to be heard). The
// client's updateVisit through the second replica, which has no poller,
// makes the first poll at once (the poke crosses Redis): the subscriber
// gets the change, and the upstream serves the write and that one read.
// (A follower's part, with a subscriber on each replica: the live package's
// TestPokeReachesTheLeaseHolder.)
func TestWriteThroughReachesTheLeaseHolder(t *testing.T) {
	rs := redistest.Start(t)
	up, err := stack.StartUpstream(t.Context(), stack.UpstreamConfig{DemoScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })
	reps := startReplicas(t, 2, rs.URL, up, func(cfg *stack.Config) {
		cfg.MetricsAddr, cfg.Live.Interval = "", time.Minute
	}, func() *slog.Logger { return slog.New(slog.DiscardHandler) })
	m := up.Manifest
	creds := restclient.Credentials{Authorization: "Bearer " + m.BearerToken, NetworkID: m.NetworkID}
	visit := m.IDs["visit"][0]
	polls := func(i int) int64 { return reps[i].st.Live.Stats().Polls[restclient.OpGetVisit.Route] }
	sub, err := reps[0].st.Live.Subscribe(t.Context(), creds, live.Visit(reps[0].st.Client, visit))
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "the holder's baseline", func() bool { return polls(0) == 1 })
	up.Server.Hooks().Reset()

	r, err := reps[1].client(creds.Authorization, creds.NetworkID).Post(t.Context(), gqlclient.Request{
		Query:     `mutation($id: ID!, $in: UpdateVisitInput!) { updateVisit(id: $id, input: $in) { visit { id } } }`,
		Variables: map[string]any{"id": visit, "in": map[string]any{"date": "2030-05-01T10:00:00Z", "comment": "through replica 1"}},
	}, nil)
	if err != nil || len(r.Errors) > 0 {
		t.Fatalf("updateVisit through replica 1: %v %+v", err, r)
	}
	e := nextEvent(t, sub)
	if v, ok := e.Value.(*restclient.Visit); e.Kind != live.Updated || !ok || v.Comment == nil || *v.Comment != "through replica 1" {
		t.Fatalf("replica 0: %+v, want the visit UPDATED", e)
	}
	if p0, p1 := polls(0), polls(1); p0 != 2 || p1 != 0 {
		t.Errorf("polls: replica 0 %d, replica 1 %d; want 2 (the baseline and the poke's) and 0", p0, p1)
	}
	got := up.Server.Hooks().Counts()
	if got[restclient.OpUpdateVisit.Pattern()] != 1 || got[restclient.OpGetVisit.Pattern()] != 1 {
		t.Errorf("upstream calls %v, want the write and one read of the visit", got)
	}
}
