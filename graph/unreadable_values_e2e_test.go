package graph_test

import (
	"encoding/json"
	"fmt"
	"github.com/workspacenet/facade/restclient"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restserver/hooks"
)

// Values that fail as they are written (an unreadable timestamp:
// graph/scalars.MarshalDateTime raises UPSTREAM_INVALID while the response
// is marshalled, after its field resolved) reach the client in every
// payload of a response delivered in parts, and in subscription events:
// the field null, its error at the field's full path, in the payload that
// brings the field, the rest intact. The rewrite fault of the local service
// puts the values in its answers. (Subscription events:
// TestUnknownEnumValuesInSubscriptionEvents.)

// Unreadable timestamps the upstream might send.
const (
	badOrderDate = "last tuesday"
	badTxDate    = "31/12/2025 10:00"
)

// delivered is an error of an incremental response and where it came: the
// payload (0: the first) and what that payload brings: the data of a part
// at path (the first payload's: path []), or a stream's items from to to-1
// of the list at path.
type delivered struct {
	err      map[string]any
	payload  int
	path     []any
	from, to int // a stream's items; -1 for data
}

// readAll reads every payload of resp (one for an ordinary response).
func readAll(t *testing.T, resp *http.Response) []map[string]any {
	t.Helper()
	next := parts(t, resp)
	var out []map[string]any
	for p := next(); p != nil; p = next() {
		out = append(out, p)
		if p["hasNext"] == false {
			if q := next(); q != nil {
				t.Fatalf("a payload after hasNext false: %v", q)
			}
			break
		}
	}
	if len(out) == 0 {
		t.Fatal("no payload")
	}
	return out
}

// mergeIncremental merges payloads (either format) as a client does, a
// @defer part's data at its path, a stream's items appended to their list,
// and returns the result and every error with where it came.
func mergeIncremental(t *testing.T, payloads []map[string]any) (data any, errs []delivered) {
	t.Helper()
	pending := map[string][]any{}
	add := func(e any, i int, path []any, from, to int) {
		for _, x := range asList(e) {
			errs = append(errs, delivered{err: x.(map[string]any), payload: i, path: path, from: from, to: to})
		}
	}
	for i, p := range payloads {
		if i == 0 {
			data = jsonTree(t, p["data"])
		}
		for _, x := range asList(p["pending"]) {
			pe := x.(map[string]any)
			pending[pe["id"].(string)] = pe["path"].([]any)
		}
		add(p["errors"], i, []any{}, -1, -1)
		for _, x := range asList(p["incremental"]) {
			inc := x.(map[string]any)
			path, _ := inc["path"].([]any)
			id, v02 := inc["id"].(string)
			if v02 {
				if path = pending[id]; path == nil {
					t.Fatalf("payload %d: id %s was not pending", i, id)
				}
			}
			items, isItems := inc["items"].([]any)
			if !isItems {
				data = mergeAt(data, path, jsonTree(t, inc["data"]))
				add(inc["errors"], i, path, -1, -1)
				continue
			}
			listPath := path
			if !v02 { // 2022: the path of the first item
				listPath = path[:len(path)-1]
			}
			parent := data
			for _, k := range listPath[:len(listPath)-1] {
				parent = step(parent, k)
			}
			m := parent.(map[string]any)
			key := listPath[len(listPath)-1].(string)
			from := len(asList(m[key]))
			if !v02 && int(path[len(path)-1].(float64)) != from {
				t.Fatalf("payload %d: items at %v, the list has %d", i, path, from)
			}
			m[key] = append(asList(m[key]), jsonTree(t, items).([]any)...)
			add(inc["errors"], i, listPath, from, from+len(items))
		}
		for _, x := range asList(p["completed"]) {
			c := x.(map[string]any)
			add(c["errors"], i, pending[c["id"].(string)], -1, -1)
		}
	}
	return data, errs
}

// step is the member k (a key or an index) of v.
func step(v, k any) any {
	if i, ok := k.(float64); ok {
		return v.([]any)[int(i)]
	}
	return v.(map[string]any)[k.(string)]
}

// dotted is a JSON path as a dotted string (["a", 1, "b"]: "a.1.b").
func dotted(path []any) string {
	s := make([]string, len(path))
	for i, p := range path {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ".")
}

// brings reports whether d's payload brings the field at d's error's path:
// the path is beneath the part's, and within its items for a stream's.
func (d delivered) brings() bool {
	path := asList(d.err["path"])
	if len(path) <= len(d.path) || dotted(path[:len(d.path)]) != dotted(d.path) {
		return false
	}
	if d.from < 0 {
		return true
	}
	i, ok := path[len(d.path)].(float64)
	return ok && int(i) >= d.from && int(i) < d.to
}

// expectUnreadable fails t unless errs are exactly one UPSTREAM_INVALID
// error at each path of want (dotted), each in the payload that brings its
// field, in the first payload (want's value true) or a later one, its
// message without the value it could not read.
func expectUnreadable(t *testing.T, errs []delivered, want map[string]bool) {
	t.Helper()
	got := map[string]bool{}
	for _, d := range errs {
		path := dotted(asList(d.err["path"]))
		ext, _ := d.err["extensions"].(map[string]any)
		msg, _ := d.err["message"].(string)
		switch initial, ok := want[path]; {
		case ext["code"] != errcode.UpstreamInvalid || !ok || got[path]:
			t.Errorf("error %v in payload %d, want one UPSTREAM_INVALID at each of %v", d.err, d.payload, want)
		case !d.brings():
			t.Errorf("error at %s in payload %d, which brings %v [%d, %d): not the payload of its field", path, d.payload, d.path, d.from, d.to)
		case initial != (d.payload == 0):
			t.Errorf("error at %s in payload %d, want it in the first payload: %v", path, d.payload, initial)
		case strings.Contains(msg, badOrderDate) || strings.Contains(msg, badTxDate):
			t.Errorf("the message shows the upstream's value: %q", msg)
		}
		got[path] = true
	}
	for path := range want {
		if !got[path] {
			t.Errorf("no error at %s; errors: %v", path, errs)
		}
	}
}

var streamDirective = regexp.MustCompile(`@stream\([^)]*\)`)

// TestUnreadableTimestampsInEveryPayload: an unreadable timestamp is null
// with UPSTREAM_INVALID at the field's full path whatever payload brings
// the field: a @defer part (on an object, on each item of a list, on the
// query root), the first payload of a deferred query, a @stream run; in
// each incremental format, as in the one response of a client that accepts
// none. The error comes in the payload that brings its field, the merged
// result is the query's without the faults but for those fields, for the
// same upstream calls.
func TestUnreadableTimestampsInEveryPayload(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	loc := env.ID(t, "location", 0)
	vars := map[string]any{"l": loc}
	ids := mustRun(t, env, env.Bearer(), `query($l: ID!) { location(id: $l) {
  orders(first: 5) { nodes { id createDate } } transactions(first: 10) { nodes { id createDate } } } }`, vars)
	order, tx := str(ids, "location.orders.nodes.1.id"), str(ids, "location.transactions.nodes.6.id")
	if order == "" || tx == "" || str(ids, "location.orders.nodes.1.createDate") == "" || str(ids, "location.transactions.nodes.6.createDate") == "" {
		t.Fatalf("the demo data lacks what the test changes: %s", pretty(ids))
	}
	cases := []struct {
		name, query string
		want        map[string]bool // the fields made null; true: in the first payload
	}{
		{"deferred part", `query($l: ID!) { location(id: $l) { id
  ... @defer(label: "orders") { orders(first: 5) { nodes { id number createDate status product { title } } } } } }`,
			map[string]bool{"location.orders.nodes.1.createDate": false}},
		{"first payload", `query($l: ID!) { location(id: $l) { id orders(first: 5) { nodes { id number createDate } }
  ... @defer(label: "transactions") { transactions(first: 10) { nodes { id amount } } } } }`,
			map[string]bool{"location.orders.nodes.1.createDate": true}},
		{"deferred in each item", `query($l: ID!) { location(id: $l) { id
  transactions(first: 10) { nodes { id amount ... @defer(label: "date") { createDate status } } } } }`,
			map[string]bool{"location.transactions.nodes.6.createDate": false}},
		{"deferred root field", `query($l: ID!) { location(id: $l) { id }
  ... @defer(label: "root") { orders(locationId: $l, first: 5) { nodes { id createDate } } } }`,
			map[string]bool{"orders.nodes.1.createDate": false}},
		{"streamed items", `query($l: ID!) { location(id: $l) { id
  transactions(first: 10) { nodes @stream(initialCount: 2, label: "more") { id amount createDate } } } }`,
			map[string]bool{"location.transactions.nodes.6.createDate": false}},
		{"both", `query($l: ID!) { location(id: $l) { id orders(first: 5) { nodes { id createDate } }
  transactions(first: 10) { nodes @stream(initialCount: 1) { id ... @defer { createDate } } } } }`,
			map[string]bool{"location.orders.nodes.1.createDate": true, "location.transactions.nodes.6.createDate": false}},
	}
	plain := map[string]any{}
	plainCalls := map[string]map[string]int64{}
	for _, c := range cases {
		env.ResetCalls()
		q := withoutDefer(streamDirective.ReplaceAllString(c.query, ""))
		data, errs := mergeIncremental(t, readAll(t, incrementalRequest(t, env, "application/json", q, vars)))
		if len(errs) > 0 {
			t.Fatalf("%s without faults: %v", c.name, errs)
		}
		plain[c.name] = data
		plainCalls[c.name], _ = env.Calls()
	}

	env.Hooks().SetFault(restclient.OpListOrders.Pattern(), hooks.Fault{Kind: hooks.FaultRewrite, Rate: 1,
		Rewrite: &hooks.Rewrite{ID: order, Set: map[string]any{"createDate": badOrderDate}}})
	env.Hooks().SetFault(restclient.OpListTransactions.Pattern(), hooks.Fault{Kind: hooks.FaultRewrite, Rate: 1,
		Rewrite: &hooks.Rewrite{ID: tx, Set: map[string]any{"createDate": badTxDate}}})
	for _, c := range cases {
		for _, accept := range []string{"application/json", acceptDefer2022, acceptV02, acceptSSE, acceptSSEV02} {
			t.Run(c.name+"/"+accept, func(t *testing.T) {
				env.ResetCalls()
				payloads := readAll(t, incrementalRequest(t, env, accept, c.query, vars))
				if n := len(payloads); (accept == "application/json") != (n == 1) {
					t.Fatalf("%d payloads", n)
				}
				data, errs := mergeIncremental(t, payloads)
				want := c.want
				if accept == "application/json" {
					want = map[string]bool{}
					for p := range c.want {
						want[p] = true // one response
					}
				}
				expectUnreadable(t, errs, want)
				var nulls []string
				for p := range c.want {
					nulls = append(nulls, p)
				}
				mustSameData(t, "the merged result", data, withNulls(t, plain[c.name], nulls...))
				calls, total := env.Calls()
				var wantTotal int64
				for _, n := range plainCalls[c.name] {
					wantTotal += n
				}
				expectSameCalls(t, env, accept, "without the faults, @defer and @stream", plainCalls[c.name], wantTotal)
				if calls[restclient.OpListOrders.Pattern()]+calls[restclient.OpListTransactions.Pattern()] == 0 || total == 0 {
					t.Fatalf("no list call: %v", calls)
				}
			})
		}
	}
	if inj := env.Hooks().Injected(); inj[restclient.OpListOrders.Pattern()][hooks.FaultRewrite] == 0 || inj[restclient.OpListTransactions.Pattern()][hooks.FaultRewrite] == 0 {
		t.Fatalf("rewrites injected %v, want both lists rewritten", inj)
	}
}

// gate holds the upstream's answers to the resource GETs of chosen ids
// until each is opened, and tells when each request arrived.
type gate struct {
	mu      sync.Mutex
	held    map[string]chan struct{} // by resource id: closed to let it go
	arrived map[string]chan struct{} // by resource id: closed on arrival
	seen    map[string]bool
	done    chan struct{} // closed when the test ends
}

// newGate returns a gate; the caller closes its done once nothing else
// needs it held (before the upstream stops: a held answer delays that).
func newGate() *gate {
	return &gate{held: map[string]chan struct{}{}, arrived: map[string]chan struct{}{}, seen: map[string]bool{}, done: make(chan struct{})}
}

// watch makes the GET of resource id known on arrival and, if hold, held.
func (g *gate) watch(id string, hold bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.arrived[id], g.seen[id] = make(chan struct{}), false
	if hold {
		g.held[id] = make(chan struct{})
	}
}

func (g *gate) onRequest(r *http.Request) {
	id, ok := strings.CutPrefix(r.URL.Path, "/resources/v1/")
	if !ok || r.Method != http.MethodGet {
		return
	}
	g.mu.Lock()
	arrived, held := g.arrived[id], g.held[id]
	first := !g.seen[id]
	g.seen[id] = true
	g.mu.Unlock()
	if arrived != nil && first {
		close(arrived)
	}
	if held != nil {
		select {
		case <-held:
		case <-g.done:
		case <-time.After(20 * time.Second): // a hang guard only
		}
	}
}

// wait waits for the GET of each id to arrive.
func (g *gate) wait(t *testing.T, ids ...string) {
	t.Helper()
	for _, id := range ids {
		g.mu.Lock()
		ch := g.arrived[id]
		g.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(20 * time.Second): // a hang guard only
			t.Fatalf("the GET of resource %s never came", id)
		}
	}
}

func (g *gate) open(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.held[id])
}

// TestStreamItemErrorsComeWithTheirItems: the errors of a streamed item,
// raised as it resolves (a status the schema lacks) and as it is written
// (an unreadable timestamp), come in the payload that brings the item, not
// in an earlier run's. The transactions stream from item 1; items 1 and 3
// load a resource that the upstream holds, item 5 has the bad values and a
// resource of its own. Once item 5's resource was asked for (its status
// resolved before: it is selected first), item 1 is let go: the run it
// starts (item 1, and 2 if complete; item 3 is held) comes without errors;
// then item 3 is let go, and item 5's two errors come with item 5, in
// either format.
func TestStreamItemErrorsComeWithTheirItems(t *testing.T) {
	g := newGate()
	env := testenv.New(t, testenv.Options{OnUpstreamRequest: g.onRequest})
	t.Cleanup(func() { close(g.done) }) // before env's: nothing stays held
	vars := map[string]any{"l": env.ID(t, "location", 0)}
	const query = `query($l: ID!) { location(id: $l) { id transactions(first: 8) {
  nodes @stream(initialCount: 1, label: "more") { id status createDate amount booking { resource { id capacity } } } } } }`
	plain := mustRun(t, env, env.Bearer(), streamDirective.ReplaceAllString(query, ""), vars)
	nodes := list(plain, "location.transactions.nodes")
	resource := func(i int) string { return str(nodes[i], "booking.resource.id") }
	if len(nodes) != 8 || resource(1) == "" || resource(3) == "" || resource(5) == "" || resource(2) != "" || resource(4) != "" ||
		len(map[string]bool{resource(1): true, resource(3): true, resource(5): true}) != 3 {
		t.Fatalf("the test wants bookings of distinct resources at items 1, 3, 5 only: %s", pretty(plain))
	}
	env.Hooks().SetFault(restclient.OpListTransactions.Pattern(), hooks.Fault{Kind: hooks.FaultRewrite, Rate: 1,
		Rewrite: &hooks.Rewrite{ID: str(nodes[5], "id"), Set: map[string]any{"status": futureTxStatus, "createDate": badTxDate}}})
	want := withNulls(t, plain, "location.transactions.nodes.5.status", "location.transactions.nodes.5.createDate")

	for _, accept := range []string{acceptDefer2022, acceptV02} {
		t.Run(accept, func(t *testing.T) {
			g.watch(resource(1), true)
			g.watch(resource(3), true)
			g.watch(resource(5), false)
			next := parts(t, incrementalRequest(t, env, accept, query, vars))
			payloads := []map[string]any{next()}
			if n := len(asList(get(payloads[0]["data"], "location.transactions.nodes"))); n != 1 || payloads[0]["hasNext"] != true {
				t.Fatalf("first payload %v, want item 0 and more to come", payloads[0])
			}
			g.wait(t, resource(1), resource(3), resource(5))
			g.open(resource(1))
			run := next()
			if run == nil {
				t.Fatal("no payload after the first")
			}
			payloads = append(payloads, run)
			_, errs := mergeIncremental(t, payloads)
			if len(errs) > 0 || run["hasNext"] != true {
				t.Fatalf("the run from item 1: %v, want no error and more to come", run)
			}
			g.open(resource(3))
			for p := next(); p != nil; p = next() {
				payloads = append(payloads, p)
			}
			data, errs := mergeIncremental(t, payloads)
			expectErrorsAt(t, errs, map[string]string{
				"location.transactions.nodes.5.status":     errcode.UpstreamInvalid,
				"location.transactions.nodes.5.createDate": errcode.UpstreamInvalid,
			})
			mustSameData(t, "the merged result", data, want)
		})
	}
}

// expectErrorsAt fails t unless errs are exactly one error at each
// dotted path of want with its code, each in the payload that brings its
// field.
func expectErrorsAt(t *testing.T, errs []delivered, want map[string]string) {
	t.Helper()
	var got []string
	for _, d := range errs {
		path := dotted(asList(d.err["path"]))
		ext, _ := d.err["extensions"].(map[string]any)
		got = append(got, path)
		if code := want[path]; code == "" || ext["code"] != code {
			t.Errorf("error %v, want one of %v", d.err, want)
		}
		if !d.brings() {
			t.Errorf("error at %s in payload %d, which brings %v [%d, %d): not the payload of its field", path, d.payload, d.path, d.from, d.to)
		}
	}
	slices.Sort(got)
	if len(got) != len(want) || len(slices.Compact(got)) != len(want) {
		t.Errorf("errors at %v, want one at each of %v", got, want)
	}
}

// TestDeferredQueryOverAWebSocketIsOneResult: graphql-transport-ws has no
// incremental format, so a query with @defer sent over a WebSocket gets
// its whole result in one next message, then complete, even when the
// upgrade request's Accept names one (oc.Headers are that request's); an
// unreadable timestamp in the deferred fragment is null with its error.
func TestDeferredQueryOverAWebSocketIsOneResult(t *testing.T) {
	env := liveEnv(t, nil)
	loc := env.ID(t, "location", 0)
	vars := map[string]any{"l": loc}
	const query = `query($l: ID!) { location(id: $l) { id ... @defer(label: "orders") { orders(first: 3) { nodes { id number createDate } } } } }`
	want := mustRun(t, env, env.Bearer(), withoutDefer(query), vars)
	order := str(want, "location.orders.nodes.1.id")
	if order == "" {
		t.Fatalf("no order: %s", pretty(want))
	}
	env.Hooks().SetFault(restclient.OpListOrders.Pattern(), hooks.Fault{Kind: hooks.FaultRewrite, Rate: 1,
		Rewrite: &hooks.Rewrite{ID: order, Set: map[string]any{"createDate": badOrderDate}}})
	for _, accept := range []string{"", acceptDefer2022, acceptV02} {
		t.Run(accept, func(t *testing.T) {
			h := http.Header{}
			if accept != "" {
				h.Set("Accept", accept)
			}
			conn, _, err := dialLive(t, env, h, "graphql-transport-ws")
			if err != nil {
				t.Fatal(err)
			}
			c := &wsClient{t: t, conn: conn, msgs: map[string]chan wsMsg{}}
			t.Cleanup(func() { conn.CloseNow() })
			c.send(wsMsg{Type: "connection_init", Payload: mustJSON(initOf(env.Bearer()))})
			if m := c.read(); m.Type != "connection_ack" {
				t.Fatalf("after connection_init: %+v", m)
			}
			go c.pump()
			c.subscribe("1", query, vars)
			m := c.next("1")
			var res map[string]any
			if m.Type != "next" || json.Unmarshal(m.Payload, &res) != nil {
				t.Fatalf("first message %s %s, want next", m.Type, m.Payload)
			}
			if _, ok := res["hasNext"]; ok {
				t.Fatalf("a payload of parts: %s", m.Payload)
			}
			var errs []delivered
			for _, e := range asList(res["errors"]) {
				errs = append(errs, delivered{err: e.(map[string]any), path: []any{}, from: -1, to: -1})
			}
			expectUnreadable(t, errs, map[string]bool{"location.orders.nodes.1.createDate": true})
			mustSameData(t, "the result", jsonTree(t, res["data"]), withNulls(t, want, "location.orders.nodes.1.createDate"))
			if m := c.next("1"); m.Type != "complete" {
				t.Fatalf("after the result: %s %s, want complete", m.Type, m.Payload)
			}
		})
	}
}
