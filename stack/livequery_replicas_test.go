package stack_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/redistest"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// TestLiveQueriesOfOneClientOnTwoReplicas: 20 graphql-sse live queries of
// one credential, 10 on each of two replicas sharing Redis, against the
// local service at 10 requests/s: one order's status changed on the
// service reaches all 20 as a patch; every orders list the upstream served
// after their first results is one poll of the lease holder (the re-runs
// call nothing); the follower never polls; no 429.
func TestLiveQueriesOfOneClientOnTwoReplicas(t *testing.T) {
	rs := redistest.Start(t)
	up, err := stack.StartUpstream(t.Context(), stack.UpstreamConfig{DemoScale: 1, RateLimit: 10, TestEndpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })
	reps := startReplicas(t, 2, rs.URL, up, func(cfg *stack.Config) {
		cfg.MetricsAddr = ""
		cfg.Live.Interval = time.Second
	}, func() *slog.Logger { return slog.New(slog.DiscardHandler) })
	m := up.Manifest
	loc := m.IDs["location"][0]
	query := `query($l: ID!) @live { location(id: $l) { orders(first: 5) { nodes { id status } } } }`

	var streams []<-chan liveEvent
	var firsts []json.RawMessage
	for i := range 20 {
		ev := liveStream(t, reps[i%2].base, "Bearer "+m.BearerToken, m.NetworkID, query, map[string]any{"l": loc})
		first := nextLiveEvent(t, ev)
		if first.Revision != 1 || len(first.Data) == 0 {
			t.Fatalf("client %d: first result revision %d", i, first.Revision)
		}
		streams, firsts = append(streams, ev), append(firsts, first.Data)
	}
	polls := func(st *stack.Stack) int64 { return st.Live.Stats().Polls[restclient.OpListOrders.Route] }
	testenv.WaitFor(t, "the orders source polled", func() bool { return polls(reps[0].st)+polls(reps[1].st) >= 2 })
	hooks := up.Server.Hooks()
	servedBefore, pollsBefore := hooks.Counts()[restclient.OpListOrders.Pattern()], polls(reps[0].st)+polls(reps[1].st)

	var d struct {
		Location struct {
			Orders struct{ Nodes []struct{ ID, Status string } }
		}
	}
	if err := json.Unmarshal(firsts[0], &d); err != nil || len(d.Location.Orders.Nodes) == 0 {
		t.Fatalf("first result %s: %v", firsts[0], err)
	}
	order := d.Location.Orders.Nodes[0]
	status := "canceled"
	if order.Status == "CANCELED" {
		status = "completed"
	}
	resp, err := http.Post(up.URL+"/_test/orders/"+order.ID+"/set", "application/json", bytes.NewReader([]byte(`{"status":"`+status+`"}`)))
	if err != nil || resp.StatusCode >= 300 {
		t.Fatalf("set: %v %v", resp, err)
	}
	resp.Body.Close()
	for i, ev := range streams {
		u := nextLiveEvent(t, ev)
		if u.Revision != 2 || !strings.Contains(string(u.Patch), `"value":"`+strings.ToUpper(status)+`"`) {
			t.Fatalf("client %d: update revision %d patch %s", i, u.Revision, u.Patch)
		}
	}
	if polls(reps[0].st) > 0 && polls(reps[1].st) > 0 {
		t.Errorf("both replicas polled: %d and %d", polls(reps[0].st), polls(reps[1].st))
	}
	served, made := hooks.Counts()[restclient.OpListOrders.Pattern()]-servedBefore, polls(reps[0].st)+polls(reps[1].st)-pollsBefore
	if served != made && served != made+1 { // +1: a poll in flight, not counted yet
		t.Errorf("the upstream served %d order lists, the replicas made %d polls: the re-runs called it", served, made)
	}
	if n := hooks.RateLimited(); n != 0 {
		t.Errorf("the upstream answered 429 %d times", n)
	}
}

type liveEvent struct {
	Data     json.RawMessage
	Patch    json.RawMessage
	Revision int
	Errors   []any
}

// liveStream posts a live query as graphql-sse and returns its events.
func liveStream(t *testing.T, base, auth, network, query string, vars map[string]any) <-chan liveEvent {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", auth)
	req.Header.Set("service-network-id", network)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("live query: %v %v", resp, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	out := make(chan liveEvent, 10)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var e liveEvent
				_ = json.Unmarshal([]byte(data), &e)
				out <- e
			}
		}
	}()
	return out
}

func nextLiveEvent(t *testing.T, ev <-chan liveEvent) liveEvent {
	t.Helper()
	select {
	case e, ok := <-ev:
		if !ok {
			t.Fatal("the stream ended")
		}
		return e
	case <-time.After(60 * time.Second):
		t.Fatal("no event")
		return liveEvent{}
	}
}
