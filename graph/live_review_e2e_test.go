package graph_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/stack"
	"github.com/workspacenet/facade/testenv"
)

// TestLiveQueriesOverWebSocketAreAdmitted: a query sent over a WebSocket
// holds its cost units as it does over HTTP: with 100 units in flight, a
// second operation of cost 62 on the same connection, beside one held at
// its upstream call, is refused OVERLOADED without reaching the upstream
// (the connection is no way around admission control).
func TestLiveQueriesOverWebSocketAreAdmitted(t *testing.T) {
	o, armed, arrived, release, seen := heldFirst(func(g *graph.Options) {
		g.MaxCostInFlight = 100
		g.AdmissionWait = 50 * time.Millisecond
	})
	o.Config = func(c *stack.Config) { c.Live.Interval, c.Live.AllowFastPolls = 50*time.Millisecond, true }
	env := testenv.New(t, o)
	heavy := transactionsQuery(env, t, 60)
	c := connectLive(t, env, initOf(env.Bearer()))
	armed.Store(true)
	c.subscribe("1", heavy, nil)
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the first query made no upstream call")
	}
	c.subscribe("2", heavy, nil)
	m := c.next("2")
	var r struct {
		Errors []struct{ Extensions map[string]any }
	}
	_ = json.Unmarshal(m.Payload, &r)
	if m.Type != "next" || len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != errcode.Overloaded {
		t.Fatalf("second heavy query on the connection: %s %s, want OVERLOADED", m.Type, m.Payload)
	}
	if n := seen.Load(); n != 1 {
		t.Errorf("the upstream received %d requests, want only the held one", n)
	}
	close(release)
	if m := c.next("1"); m.Type != "next" {
		t.Fatalf("the held query: %s %s", m.Type, m.Payload)
	}
}

// TestLiveQueriesOverWebSocketHaveTheRequestDeadline: a query sent over a
// WebSocket ends within RequestTimeout as over HTTP, even when its upstream
// call would wait far longer (a connection's queries are not unbounded).
func TestLiveQueriesOverWebSocketHaveTheRequestDeadline(t *testing.T) {
	o, armed, arrived, _, _ := heldFirst(func(g *graph.Options) { g.RequestTimeout = 300 * time.Millisecond })
	o.Config = func(c *stack.Config) {
		c.Live.Interval, c.Live.AllowFastPolls = 50*time.Millisecond, true
		c.UpstreamTimeout = time.Hour
	}
	env := testenv.New(t, o)
	query := `{ resource(id: "` + env.ID(t, "resource", 0) + `") { id } }`
	c := connectLive(t, env, initOf(env.Bearer()))
	armed.Store(true)
	c.subscribe("1", query, nil)
	<-arrived
	m := c.next("1")
	var r struct {
		Errors []struct{ Extensions map[string]any }
	}
	_ = json.Unmarshal(m.Payload, &r)
	if m.Type != "next" || len(r.Errors) == 0 {
		t.Fatalf("the held query: %s %s, want its errors once the request's deadline passed", m.Type, m.Payload)
	}
}
