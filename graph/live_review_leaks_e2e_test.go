package graph_test

import (
	"net/http"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// TestClientsGoingAwayLeaveNothingRunning: a WebSocket client that drops
// its connection with a subscription open, and a client that goes away in
// the middle of a deferred response whose parts wait on the upstream, leave
// no subscription, poller or goroutine behind: the facade cancels the
// deferred parts' upstream calls (goleak, after the env's shutdown, finds
// any goroutine still waiting). The pump's wait in gqlgen's handler for a
// deferred part (which watches no context) is among them when a group
// drops its part: without execGate, 4 of 10 runs left it.
func TestClientsGoingAwayLeaveNothingRunning(t *testing.T) {
	opts := []goleak.Option{goleak.IgnoreCurrent(), goleak.IgnoreTopFunction("github.com/workspacenet/facade/internal/base/workers.(*Pool).worker")}
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) }) // after the env's shutdown
	deferredRoute := regexp.MustCompile(`^/(transactions|billing|resources|events)/`)
	var armed atomic.Bool
	var held, cancelled atomic.Int64
	env := testenv.New(t, testenv.Options{
		Config: func(c *stack.Config) {
			c.Live.Interval, c.Live.AllowFastPolls = 50*time.Millisecond, true
			// The shared keep-alive goroutine ends at its first tick
			// without connections.
			c.Graph.LiveKeepAlive = 20 * time.Millisecond
		},
		OnUpstreamRequest: func(r *http.Request) {
			if armed.Load() && deferredRoute.MatchString(r.URL.Path) {
				held.Add(1)
				<-r.Context().Done()
				cancelled.Add(1)
			}
		},
	})
	loc := env.ID(t, "location", 0)

	c := connectLive(t, env, initOf(env.Bearer()))
	c.subscribe("1", orderEventsQuery, map[string]any{"loc": loc})
	testenv.WaitFor(t, "the poller's baseline", func() bool { return env.Stack.Live.Stats().Ready == 1 })
	c.conn.CloseNow()
	testenv.WaitFor(t, "no subscription", func() bool { st := env.Stack.Live.Stats(); return st.Subscriptions == 0 && st.Pollers == 0 })

	armed.Store(true)
	resp := incrementalRequest(t, env, acceptDefer2022, queries.DeferredDashboard, map[string]any{"locationId": loc})
	if first := parts(t, resp)(); first["hasNext"] != true {
		t.Fatalf("first payload: %v", first)
	}
	testenv.WaitFor(t, "deferred calls held", func() bool { return held.Load() > 0 })
	resp.Body.Close()
	testenv.WaitFor(t, "the held calls cancelled", func() bool { return cancelled.Load() == held.Load() })
}
