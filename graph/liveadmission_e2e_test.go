package graph_test

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// TestLiveEventAdmittedAsAnOperation: each event of a subscription is
// admitted with the subscription's cost (admission.Controller.Hold). With
// 100 cost units in flight, a query of cost 100 held at its upstream call
// leaves no room: an event that comes then is refused OVERLOADED (after the
// short admission wait) and the subscription goes on; once the query has
// answered, the next event is delivered with its node.
func TestLiveEventAdmittedAsAnOperation(t *testing.T) {
	var armed atomic.Bool
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	env := testenv.New(t, testenv.Options{
		GraphOpts: func(g *graph.Options) {
			g.MaxCostInFlight = 100
			g.AdmissionWait = 50 * time.Millisecond
		},
		Config: func(c *stack.Config) { c.Live.Interval, c.Live.AllowFastPolls = 50*time.Millisecond, true },
		OnUpstreamRequest: func(r *http.Request) {
			if armed.Load() && strings.Contains(r.URL.Path, "transaction") {
				once.Do(func() { close(arrived) })
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}
		},
	})
	loc := env.ID(t, "location", 0)
	order := firstOrder(t, env, loc)
	c := connectLive(t, env, initOf(env.Bearer()))
	c.subscribe("1", orderEventsQuery, map[string]any{"loc": loc})
	testenv.WaitFor(t, "the subscription", func() bool { return env.Stack.Live.Stats().Subscriptions == 1 })
	waitPolls(t, env, restclient.OpListOrders.Route, 1)

	armed.Store(true)
	var wg sync.WaitGroup
	var held *testenv.Response
	done := make(chan struct{})
	wg.Go(func() { defer close(done); held = env.Query(t, env.Bearer(), transactionsQuery(env, t, 98), nil) })
	waitArrived(t, arrived, done)

	restChange(t, env, "/_test/orders/"+order.ID+"/copy", nil)
	ev := c.nextOrder("1")
	if len(ev.Errors) != 1 || ev.Errors[0].Extensions["code"] != "OVERLOADED" || ev.Data.OrderEvents.Node != nil {
		t.Fatalf("event while a cost-100 query is in flight: %+v, want OVERLOADED and no node", ev)
	}

	close(release)
	wg.Wait()
	if held.Status != http.StatusOK || len(held.Errors) > 0 {
		t.Fatalf("the held query: HTTP %d %s", held.Status, held.Raw)
	}
	created := restChange(t, env, "/_test/orders/"+order.ID+"/copy", nil)
	ev = c.nextOrder("1")
	if len(ev.Errors) != 0 || ev.Data.OrderEvents.Kind != "CREATED" || ev.Data.OrderEvents.Node == nil || ev.Data.OrderEvents.Node.ID != created {
		t.Fatalf("event after the query answered: %+v, want CREATED %s", ev, created)
	}
}
