package graph_test

import (
	"context"
	"encoding/json"
	"github.com/workspacenet/facade/restclient"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// TestLiveEventReportsItsPollAndLinks: a subscription whose connection_init
// asks for the upstream call report gets, with each event, extensions.upstream
// listing the poll that saw the change (part "poll") and the link loads of
// the event's node, counted equal to what the local service served for that
// event; a subscriber of the same source that did not ask gets none. The
// order polls pass a gate one at a time, so exactly one poll feeds the event.
func TestLiveEventReportsItsPollAndLinks(t *testing.T) {
	var gating atomic.Bool
	gate := make(chan struct{}, 1)
	env := testenv.New(t, testenv.Options{
		Config: func(c *stack.Config) {
			c.Live.Interval, c.Live.AllowFastPolls = 50*time.Millisecond, true
		},
		OnUpstreamRequest: func(r *http.Request) {
			if gating.Load() && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, restclient.OpListOrders.Route) {
				select {
				case <-gate:
				case <-r.Context().Done():
				}
			}
		},
	})
	loc := env.ID(t, "location", 0)
	order := firstOrder(t, env, loc)
	gating.Store(true)
	init := initOf(env.Bearer())
	init[graph.TraceHeader] = "1"
	c := connectLive(t, env, init)
	query := `subscription($loc: ID!) { orderEvents(locationId: $loc) { kind node { id product { title refundPolicy } } } }`
	c.subscribe("1", query, map[string]any{"loc": loc})
	// Same source, no report asked for, no link: its event makes no call.
	quiet := connectLive(t, env, initOf(env.Bearer()))
	quiet.subscribe("1", `subscription($loc: ID!) { orderEvents(locationId: $loc) { kind node { id } } }`, map[string]any{"loc": loc})
	testenv.WaitFor(t, "two subscriptions", func() bool { return env.Stack.Live.Stats().Subscriptions == 2 })
	gate <- struct{}{} // the baseline
	waitPolls(t, env, restclient.OpListOrders.Route, 1)

	env.ResetCalls()
	created := restChange(t, env, "/_test/orders/"+order.ID+"/copy", map[string]any{"status": "new"})
	gate <- struct{}{} // the poll that sees the new order
	m := c.next("1")
	var ev struct {
		Data struct {
			OrderEvents struct {
				Kind string
				Node *struct{ ID string }
			}
		}
		Extensions struct {
			Upstream struct {
				Count int
				Calls []struct {
					Method, Path, Part string
					Status             int
					StartMs            float64
					DurationMs         float64
				}
			}
		}
	}
	if m.Type != "next" || json.Unmarshal(m.Payload, &ev) != nil {
		t.Fatalf("message %s %s", m.Type, m.Payload)
	}
	if e := ev.Data.OrderEvents; e.Kind != "CREATED" || e.Node == nil || e.Node.ID != created {
		t.Fatalf("event %s, want CREATED of %s", m.Payload, created)
	}
	if q := quiet.next("1"); q.Type != "next" || !strings.Contains(string(q.Payload), created) || strings.Contains(string(q.Payload), `"extensions"`) {
		t.Fatalf("the subscriber that asked for no report: %s %s", q.Type, q.Payload)
	}
	served, _ := env.Calls()
	for k := range served {
		if strings.Contains(k, "/_test/") {
			delete(served, k)
		}
	}
	rep := ev.Extensions.Upstream
	reported := map[string]int64{}
	polls := 0
	for _, call := range rep.Calls {
		reported[call.Method+" "+call.Path]++
		if call.Part == "poll" {
			polls++
			if call.Method+" "+call.Path != restclient.OpListOrders.Pattern() || call.Status != 200 {
				t.Errorf("poll call %+v, want %s answered 200", call, restclient.OpListOrders)
			}
		} else if call.StartMs < 0 || call.DurationMs <= 0 {
			t.Errorf("link call %+v: not on the event's time line", call)
		}
	}
	if polls != 1 || reported[restclient.OpListProducts.Pattern()] != 1 || rep.Count != len(rep.Calls) {
		t.Fatalf("report %s: want the poll (%s) and the product's load in its location (%s), count = calls; served %v", m.Payload, restclient.OpListOrders, restclient.OpListProducts, served)
	}
	if len(reported) != len(served) {
		t.Fatalf("reported %v, the local service served %v", reported, served)
	}
	for k, n := range served {
		if reported[k] != n {
			t.Fatalf("reported %v, the local service served %v", reported, served)
		}
	}
}

// TestLiveEventReportOverSSEAndUpgradeHeader: the report is asked for by
// the header X-Upstream-Trace: 1 of an SSE request, or of a WebSocket's
// upgrade request; each event then starts its report with its poll.
func TestLiveEventReportOverSSEAndUpgradeHeader(t *testing.T) {
	env := liveEnv(t, nil)
	visit := env.ID(t, "visit", 0)
	query := `subscription($id: ID!) { visitEvents(id: $id) { kind node { id checkInDate } } }`
	vars := map[string]any{"id": visit}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := sseDo(t, ctx, env, env.Bearer(), map[string]any{"query": query, "variables": vars}, nil, http.Header{graph.TraceHeader: {"1"}})
	defer resp.Body.Close()
	mustStream(t, "a subscription by POST", resp)
	sse := sseEvents(resp)

	h := env.Bearer().Header()
	h.Set(graph.TraceHeader, "1")
	conn, _, err := dialLive(t, env, h, "graphql-transport-ws")
	if err != nil {
		t.Fatal(err)
	}
	ws := &wsClient{t: t, conn: conn, msgs: map[string]chan wsMsg{}}
	t.Cleanup(func() { conn.CloseNow() })
	ws.send(wsMsg{Type: "connection_init"})
	if m := ws.read(); m.Type != "connection_ack" {
		t.Fatalf("after connection_init: %+v", m)
	}
	go ws.pump()
	ws.subscribe("1", query, vars)

	testenv.WaitFor(t, "two subscriptions", func() bool { return env.Stack.Live.Stats().Subscriptions == 2 })
	waitPolls(t, env, restclient.OpGetVisit.Route, 1)
	restChange(t, env, "/_test/visits/"+visit+"/set", map[string]any{"checkInDate": "2026-01-02T10:00:00Z"})
	var fromSSE string
	select {
	case e := <-sse:
		fromSSE = strings.TrimPrefix(e, "next ")
	case <-time.After(30 * time.Second):
		t.Fatal("no SSE event")
	}
	for what, payload := range map[string]string{"SSE": fromSSE, "WebSocket": string(ws.next("1").Payload)} {
		var ev struct {
			Extensions struct {
				Upstream struct {
					Count int
					Calls []struct{ Method, Path, Part string }
				}
			}
		}
		if err := json.Unmarshal([]byte(payload), &ev); err != nil {
			t.Fatalf("%s: %s: %v", what, payload, err)
		}
		rep := ev.Extensions.Upstream
		if !strings.Contains(payload, `"UPDATED"`) || rep.Count != 1 || len(rep.Calls) != 1 || rep.Calls[0].Path != restclient.OpGetVisit.Route || rep.Calls[0].Part != "poll" {
			t.Fatalf("%s event %s, want UPDATED with its poll in extensions.upstream", what, payload)
		}
	}
}
