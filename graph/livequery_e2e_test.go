package graph_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// liveDashboard is the README dashboard as a live query.
var liveDashboard = strings.Replace(queries.BenchDashboard, "query Dashboard($l: ID!) {", "query Dashboard($l: ID!) @live {", 1)

// liveResult is one result of a live query as the convention shapes it.
type liveResult struct {
	Data       json.RawMessage
	Patch      []map[string]any
	Revision   int
	Errors     []map[string]any
	Extensions struct {
		Live struct {
			Watched    []map[string]any
			NotWatched []map[string]any
			KeptBytes  int
		}
		Upstream struct{ Count, CacheHits int }
	}
}

func nextLive(t *testing.T, c *wsClient, id string) (liveResult, json.RawMessage) {
	t.Helper()
	m := c.next(id)
	var r liveResult
	if m.Type != "next" || json.Unmarshal(m.Payload, &r) != nil {
		t.Fatalf("operation %s: %s %s", id, m.Type, m.Payload)
	}
	return r, m.Payload
}

// TestLiveQueryDashboardOverWebSocket: the README dashboard with @live over
// graphql-transport-ws: the first result is the ordinary one with revision
// 1 and what is watched; a status change of one order made on the local
// service reaches the client as a patch that, applied to the first result,
// equals a fresh query's result, and its re-run calls the upstream for
// nothing (the poll's answer serves it); an unchanged source sends nothing
// more, and another network's live query receives nothing.
func TestLiveQueryDashboardOverWebSocket(t *testing.T) {
	env := liveEnv(t, nil)
	bearer := env.Bearer()
	loc := env.ID(t, "location", 0)
	vars := map[string]any{"l": loc}
	order := firstOrder(t, env, loc)

	init := initOf(bearer)
	init["X-Upstream-Trace"] = "1"
	c := connectLive(t, env, init)
	c.subscribe("1", liveDashboard, vars)
	first, firstRaw := nextLive(t, c, "1")
	raw := firstRaw
	if first.Revision != 1 || len(first.Data) == 0 || string(first.Data) == "null" || len(first.Extensions.Live.Watched) == 0 {
		t.Fatalf("first result %s, want revision 1, data and what is watched", raw)
	}
	fresh := env.Query(t, bearer, queries.BenchDashboard, vars)
	if !sameJSON(t, first.Data, fresh.Data) {
		t.Fatalf("first result's data differs from the query without @live")
	}
	// Another network's dashboard, live on its own connection.
	oc := connectLive(t, env, initOf(env.Other(t)))
	oc.subscribe("1", liveDashboard, map[string]any{"l": env.Manifest.OtherNetworks[0].IDs["location"][0]})
	if other, raw := nextLive(t, oc, "1"); other.Revision != 1 || len(other.Extensions.Live.Watched) == 0 {
		t.Fatalf("other network's first result %.300s", raw)
	} else {
		first.Extensions.Live.Watched = append(first.Extensions.Live.Watched, other.Extensions.Live.Watched...)
	}
	testenv.WaitFor(t, "every watched source polled once", func() bool {
		st := env.Stack.Live.Stats()
		return st.Pollers == len(first.Extensions.Live.Watched) && st.Ready == st.Pollers
	})

	status := "canceled"
	if order.Status == "CANCELED" {
		status = "completed"
	}
	restChange(t, env, "/_test/orders/"+order.ID+"/set", map[string]any{"status": status})
	upd, raw := nextLive(t, c, "1")
	if upd.Revision != 2 || len(upd.Patch) == 0 || upd.Data != nil {
		t.Fatalf("update %s, want revision 2 with a patch and no data", raw)
	}
	if upd.Extensions.Upstream.Count != 0 {
		t.Errorf("re-run made %d upstream calls, want 0 (the poll's answer serves it): %s", upd.Extensions.Upstream.Count, raw)
	}
	t.Logf("kept %d bytes; watched %v, not watched %v; first result %d bytes, update %d bytes: %s", first.Extensions.Live.KeptBytes, first.Extensions.Live.Watched, first.Extensions.Live.NotWatched, len(firstRaw), len(raw), raw)
	patched := applyPatch(t, decodeJSON(t, first.Data), upd.Patch)
	fresh = env.Query(t, bearer, queries.BenchDashboard, vars)
	if !reflect.DeepEqual(patched, decodeJSON(t, fresh.Data)) {
		t.Fatalf("patched result differs from a fresh query's:\npatch %v", upd.Patch)
	}
	if !strings.Contains(string(raw), strings.ToUpper(status)) {
		t.Errorf("patch %s does not carry the new status", raw)
	}

	// Nothing changes for several polls of every source: nothing is sent.
	polls := env.Stack.Live.Stats().Polls[restclient.OpListOrders.Route]
	waitPolls(t, env, restclient.OpListOrders.Route, polls+3)
	for _, ch := range []chan wsMsg{c.ops("1"), oc.ops("1")} {
		select {
		case m := <-ch:
			t.Fatalf("an update without a change (or of another network's change): %s", m.Payload)
		default:
		}
	}
	c.send(wsMsg{ID: "1", Type: "complete"})
	oc.send(wsMsg{ID: "1", Type: "complete"})
	testenv.WaitFor(t, "the live query's sources let go", func() bool { return env.Stack.Live.Stats().Subscriptions == 0 })
}

func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	return reflect.DeepEqual(decodeJSON(t, a), decodeJSON(t, b))
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// applyPatch applies a JSON Patch (RFC 6902: add, remove, replace) to doc.
func applyPatch(t *testing.T, doc any, ops []map[string]any) any {
	t.Helper()
	for _, op := range ops {
		path, _ := op["path"].(string)
		doc = applyOp(t, doc, splitPointer(path), op["op"].(string), op["value"])
	}
	return doc
}

func splitPointer(p string) []string {
	if p == "" {
		return nil
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts
}

func applyOp(t *testing.T, doc any, path []string, op string, value any) any {
	t.Helper()
	if len(path) == 0 {
		return value
	}
	switch d := doc.(type) {
	case map[string]any:
		if len(path) == 1 {
			if op == "remove" {
				delete(d, path[0])
			} else {
				d[path[0]] = value
			}
			return d
		}
		d[path[0]] = applyOp(t, d[path[0]], path[1:], op, value)
		return d
	case []any:
		i, err := strconv.Atoi(path[0])
		if path[0] == "-" {
			i, err = len(d), nil
		}
		if err != nil || i > len(d) {
			t.Fatalf("bad index %q in a list of %d", path[0], len(d))
		}
		if len(path) > 1 {
			d[i] = applyOp(t, d[i], path[1:], op, value)
			return d
		}
		switch op {
		case "remove":
			return append(d[:i:i], d[i+1:]...)
		case "add":
			return append(d[:i:i], append([]any{value}, d[i:]...)...)
		default:
			d[i] = value
			return d
		}
	}
	t.Fatalf("patch path %v into %T", path, doc)
	return nil
}

// TestLiveQueryOverSSE: the dashboard with @live over graphql-sse: the
// first `next` is the ordinary result with revision 1; a status change of
// one order comes as a patch that, applied, equals a fresh query's result.
// Over plain HTTP the same query answers once, as without @live.
func TestLiveQueryOverSSE(t *testing.T) {
	env := liveEnv(t, nil)
	bearer := env.Bearer()
	loc := env.ID(t, "location", 0)
	vars := map[string]any{"l": loc}
	order := firstOrder(t, env, loc)
	plain := env.Query(t, bearer, liveDashboard, vars)
	if len(plain.Errors) != 0 || plain.Extensions["liveResult"] != nil || strings.Contains(string(plain.Raw), `"revision"`) {
		t.Fatalf("@live over plain HTTP: %s, want the ordinary result", plain.Raw)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := sseDo(t, ctx, env, bearer, map[string]any{"query": liveDashboard, "variables": vars}, nil, nil)
	defer resp.Body.Close()
	mustStream(t, "a live query by POST", resp)
	events := sseEvents(resp)
	first := nextSSE(t, events)
	if first.Revision != 1 || len(first.Data) == 0 || !sameJSON(t, first.Data, plain.Data) {
		t.Fatalf("first result: revision %d, data %s", first.Revision, first.Data)
	}
	testenv.WaitFor(t, "every watched source polled once", func() bool {
		st := env.Stack.Live.Stats()
		return st.Pollers == len(first.Extensions.Live.Watched) && st.Ready == st.Pollers
	})
	status := "canceled"
	if order.Status == "CANCELED" {
		status = "completed"
	}
	restChange(t, env, "/_test/orders/"+order.ID+"/set", map[string]any{"status": status})
	upd := nextSSE(t, events)
	if upd.Revision != 2 || len(upd.Patch) == 0 {
		t.Fatalf("update: revision %d, patch %v", upd.Revision, upd.Patch)
	}
	patched := applyPatch(t, decodeJSON(t, first.Data), upd.Patch)
	if fresh := env.Query(t, bearer, queries.BenchDashboard, vars); !reflect.DeepEqual(patched, decodeJSON(t, fresh.Data)) {
		t.Fatalf("patched result differs from a fresh query's: patch %v", upd.Patch)
	}
}

func nextSSE(t *testing.T, events <-chan string) liveResult {
	t.Helper()
	select {
	case e := <-events:
		t.Logf("event of %d bytes: %.400s", len(e)-len("next "), e)
		var r liveResult
		if !strings.HasPrefix(e, "next ") || json.Unmarshal([]byte(strings.TrimPrefix(e, "next ")), &r) != nil {
			t.Fatalf("event %.300s, want a next event", e)
		}
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no event")
		return liveResult{}
	}
}

// TestLiveQueryBounds: a live query counts against the connection's
// subscriptions, and one whose result is larger than -live-query-max-bytes
// gets its first result, then LIVE_QUERY_TOO_LARGE and its end.
func TestLiveQueryBounds(t *testing.T) {
	env := liveEnv(t, func(c *stack.Config) { c.Graph.LiveMaxPerConnection, c.Graph.LiveQueryMaxBytes = 1, 2000 })
	c := connectLive(t, env, initOf(env.Bearer()))
	vars := map[string]any{"l": env.ID(t, "location", 0)}
	c.subscribe("1", liveDashboard, vars)
	if first, raw := nextLive(t, c, "1"); first.Revision != 1 {
		t.Fatalf("first result %.300s", raw)
	}
	end, raw := nextLive(t, c, "1")
	if len(end.Errors) != 1 || end.Errors[0]["extensions"].(map[string]any)["code"] != "LIVE_QUERY_TOO_LARGE" || end.Revision != 2 {
		t.Fatalf("after a result over the bound: %.300s", raw)
	}
	if m := c.next("1"); m.Type != "complete" {
		t.Fatalf("after LIVE_QUERY_TOO_LARGE: %+v", m)
	}
	testenv.WaitFor(t, "its sources let go", func() bool { return env.Stack.Live.Stats().Subscriptions == 0 })

	// Two live queries on a connection allowing one subscription.
	small := `query($l: ID!) @live { location(id: $l) { orders(first: 1) { nodes { id } } } }`
	c.subscribe("2", small, vars)
	if r, raw := nextLive(t, c, "2"); r.Revision != 1 {
		t.Fatalf("first small live query: %.300s", raw)
	}
	c.subscribe("3", small, vars)
	if r, raw := nextLive(t, c, "3"); len(r.Errors) == 0 || r.Errors[0]["extensions"].(map[string]any)["code"] != "TOO_MANY_SUBSCRIPTIONS" {
		t.Fatalf("second live query on a connection of one: %.300s", raw)
	}
}
