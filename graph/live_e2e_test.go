package graph_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/workspacenet/facade/restclient"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// liveEnv starts the stack with polls every 50 ms (below the program's
// 1 s minimum: the tests count polls and events, never time) and cfg's
// other settings.
func liveEnv(t *testing.T, cfg func(*stack.Config)) *testenv.Env {
	t.Helper()
	return liveEnvWith(t, testenv.Options{Config: cfg})
}

// liveEnvWith is liveEnv with o (its Config applied after the polls').
func liveEnvWith(t *testing.T, o testenv.Options) *testenv.Env {
	t.Helper()
	cfg := o.Config
	o.Config = func(c *stack.Config) {
		c.Live.Interval, c.Live.AllowFastPolls = 50*time.Millisecond, true
		if cfg != nil {
			cfg(c)
		}
	}
	return testenv.New(t, o)
}

// wsClient is a graphql-transport-ws client over one WebSocket.
type wsClient struct {
	t    *testing.T
	conn *websocket.Conn
	mu   sync.Mutex
	msgs map[string]chan wsMsg // by operation id
}

type wsMsg struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// dialLive opens a WebSocket to env's /graphql with header h and
// subprotocol, and returns the answer when the upgrade is refused.
func dialLive(t *testing.T, env *testenv.Env, h http.Header, subprotocol string) (*websocket.Conn, *http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return websocket.Dial(ctx, "ws"+strings.TrimPrefix(env.FacadeURL, "http"), &websocket.DialOptions{HTTPHeader: h, Subprotocols: []string{subprotocol}})
}

// connectLive opens a graphql-transport-ws connection with init payload.
func connectLive(t *testing.T, env *testenv.Env, init map[string]any) *wsClient {
	t.Helper()
	conn, _, err := dialLive(t, env, nil, "graphql-transport-ws")
	if err != nil {
		t.Fatal(err)
	}
	c := &wsClient{t: t, conn: conn, msgs: map[string]chan wsMsg{}}
	t.Cleanup(func() { conn.CloseNow() })
	c.send(wsMsg{Type: "connection_init", Payload: mustJSON(init)})
	if m := c.read(); m.Type != "connection_ack" {
		t.Fatalf("after connection_init: %+v", m)
	}
	go c.pump()
	return c
}

// closedAtInit opens a graphql-transport-ws connection with header h and
// sends connection_init with init: it fails t if the connection is
// acknowledged, and returns the close code and reason it got instead.
func closedAtInit(t *testing.T, env *testenv.Env, h http.Header, init map[string]any) (websocket.StatusCode, string) {
	t.Helper()
	conn, _, err := dialLive(t, env, h, "graphql-transport-ws")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	c := &wsClient{t: t, conn: conn, msgs: map[string]chan wsMsg{}}
	c.send(wsMsg{Type: "connection_init", Payload: mustJSON(init)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, b, err := conn.Read(ctx)
	if err == nil {
		t.Fatalf("after connection_init %v: %s, want the connection closed", init, b)
	}
	var ce websocket.CloseError
	if !errors.As(err, &ce) {
		t.Fatalf("after connection_init %v: %v, want a close frame", init, err)
	}
	return ce.Code, ce.Reason
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func (c *wsClient) send(m wsMsg) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, mustJSON(m)); err != nil {
		c.t.Errorf("write: %v", err)
	}
}

func (c *wsClient) read() wsMsg {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, b, err := c.conn.Read(ctx)
	if err != nil {
		return wsMsg{Type: "closed:" + err.Error()}
	}
	var m wsMsg
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Errorf("message %s: %v", b, err)
	}
	return m
}

func (c *wsClient) ops(id string) chan wsMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.msgs[id]
	if ch == nil {
		ch = make(chan wsMsg, 100)
		c.msgs[id] = ch
	}
	return ch
}

// pump sorts the messages by operation, answering pings.
func (c *wsClient) pump() {
	for {
		m := c.read()
		switch {
		case strings.HasPrefix(m.Type, "closed:"):
			c.mu.Lock()
			for _, ch := range c.msgs {
				close(ch)
			}
			c.msgs = map[string]chan wsMsg{}
			c.mu.Unlock()
			return
		case m.Type == "ping":
			c.send(wsMsg{Type: "pong"})
		case m.ID != "":
			c.ops(m.ID) <- m
		}
	}
}

func (c *wsClient) subscribe(id, query string, vars map[string]any) {
	c.ops(id)
	c.send(wsMsg{ID: id, Type: "subscribe", Payload: mustJSON(map[string]any{"query": query, "variables": vars})})
}

// next returns the next message of operation id.
func (c *wsClient) next(id string) wsMsg {
	c.t.Helper()
	select {
	case m, ok := <-c.ops(id):
		if !ok {
			return wsMsg{Type: "closed"}
		}
		return m
	case <-time.After(30 * time.Second):
		c.t.Fatalf("no message for operation %s", id)
		return wsMsg{}
	}
}

type orderEvent struct {
	Data struct {
		OrderEvents struct {
			Kind           string
			PollIntervalMs int
			Node           *struct {
				ID      string
				Status  string
				Product *struct{ Title string }
			}
		}
	}
	Errors []struct {
		Message    string
		Extensions map[string]any
	}
}

func (c *wsClient) nextOrder(id string) orderEvent {
	c.t.Helper()
	m := c.next(id)
	var ev orderEvent
	if m.Type != "next" || json.Unmarshal(m.Payload, &ev) != nil {
		c.t.Fatalf("operation %s: %s %s", id, m.Type, m.Payload)
	}
	return ev
}

// restChange makes a test change on the local REST service.
func restChange(t *testing.T, env *testenv.Env, path string, body map[string]any) string {
	t.Helper()
	resp, err := http.Post(env.UpstreamURL+path, "application/json", bytes.NewReader(mustJSON(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode >= 300 {
		t.Fatalf("POST %s: %d %v", path, resp.StatusCode, err)
	}
	return out.ID
}

const orderEventsQuery = `subscription($loc: ID!) { orderEvents(locationId: $loc) { kind pollIntervalMs node { id status product { title } } } }`

func initOf(c testenv.Creds) map[string]any {
	return map[string]any{"Authorization": c.Authorization, "service-network-id": c.NetworkID}
}

// waitPolls waits until the hub has polled route n times more than before.
func waitPolls(t *testing.T, env *testenv.Env, route string, n int64) int64 {
	t.Helper()
	var got int64
	testenv.WaitFor(t, "polls", func() bool { got = env.Stack.Live.Stats().Polls[route]; return got >= n })
	return got
}

// TestLiveOrderEventsShareOnePoller: three subscribers of one location's
// orders on two connections (two spellings of one credential) share one
// poller; a status change and a new order reach each of them exactly once,
// with the node's links resolved; every upstream list call is one poll.
func TestLiveOrderEventsShareOnePoller(t *testing.T) {
	env := liveEnv(t, nil)
	bearer := env.Bearer()
	loc := env.ID(t, "location", 0)
	a := connectLive(t, env, initOf(bearer))
	spelled := initOf(bearer)
	spelled["Authorization"] = "bearer   " + strings.TrimPrefix(bearer.Authorization, "Bearer ")
	b := connectLive(t, env, map[string]any{"headers": spelled})
	a.subscribe("1", orderEventsQuery, map[string]any{"loc": loc})
	a.subscribe("2", orderEventsQuery, map[string]any{"loc": loc})
	b.subscribe("1", orderEventsQuery, map[string]any{"loc": loc})
	testenv.WaitFor(t, "three subscriptions", func() bool { return env.Stack.Live.Stats().Subscriptions == 3 })
	if st := env.Stack.Live.Stats(); st.Pollers != 1 {
		t.Fatalf("pollers = %d, want 1 for one credential and one source", st.Pollers)
	}
	base := waitPolls(t, env, restclient.OpListOrders.Route, 1) // the baseline is set

	// An order of the location, moved to another status.
	order := firstOrder(t, env, loc)
	status := "canceled"
	if order.Status == "CANCELED" {
		status = "completed"
	}
	restChange(t, env, "/_test/orders/"+order.ID+"/set", map[string]any{"status": status})
	for _, s := range []struct {
		c  *wsClient
		id string
	}{{a, "1"}, {a, "2"}, {b, "1"}} {
		ev := s.c.nextOrder(s.id).Data.OrderEvents
		if ev.Kind != "UPDATED" || ev.Node == nil || ev.Node.ID != order.ID || ev.Node.Status != strings.ToUpper(status) || ev.Node.Product == nil || ev.Node.Product.Title == "" {
			t.Fatalf("event %+v, want UPDATED of %s to %s with its product", ev, order.ID, status)
		}
		if ev.PollIntervalMs != 50 {
			t.Errorf("pollIntervalMs = %d, want 50", ev.PollIntervalMs)
		}
	}
	created := restChange(t, env, "/_test/orders/"+order.ID+"/copy", map[string]any{"status": "new"})
	for _, s := range []struct {
		c  *wsClient
		id string
	}{{a, "1"}, {a, "2"}, {b, "1"}} {
		ev := s.c.nextOrder(s.id).Data.OrderEvents
		if ev.Kind != "CREATED" || ev.Node == nil || ev.Node.ID != created {
			t.Fatalf("event %+v, want CREATED of %s", ev, created)
		}
	}
	if base == 0 {
		t.Fatal("no poll")
	}
	// Every list call the upstream served, but firstOrder's query, is one
	// of the hub's polls: three subscribers cost one poller's calls. A poll
	// the last unsubscribe cancelled in flight may have reached the
	// upstream without being counted by the hub.
	a.send(wsMsg{ID: "1", Type: "complete"})
	a.send(wsMsg{ID: "2", Type: "complete"})
	b.send(wsMsg{ID: "1", Type: "complete"})
	testenv.WaitFor(t, "no subscription", func() bool { return env.Stack.Live.Stats().Pollers == 0 })
	got, _ := env.Calls()
	polls := env.Stack.Live.Stats().Polls[restclient.OpListOrders.Route]
	if served := got[restclient.OpListOrders.Pattern()] - 1; served != polls && served != polls+1 {
		t.Fatalf("upstream served %d order lists for the subscriptions, the hub made %d polls", served, polls)
	}
}

type orderRef struct{ ID, Status string }

func firstOrder(t *testing.T, env *testenv.Env, loc string) orderRef {
	t.Helper()
	var d struct {
		Location struct {
			Orders struct{ Nodes []orderRef }
		}
	}
	testenv.MustData(t, env.Query(t, env.Bearer(), `query($loc: ID!) { location(id: $loc) { orders(first: 1) { nodes { id status } } } }`, map[string]any{"loc": loc}), &d)
	if len(d.Location.Orders.Nodes) == 0 {
		t.Fatal("no order in the location")
	}
	return d.Location.Orders.Nodes[0]
}

// TestLiveAttacks: a WebSocket from another origin is refused before the
// upgrade; a credential of another network subscribing to the same source,
// concurrently, gets its own poller and never the other's events; a
// refused credential's subscription ends UNAUTHENTICATED.
func TestLiveAttacks(t *testing.T) {
	env := liveEnv(t, func(c *stack.Config) { c.CORSOrigins = []string{"https://app.example"} })
	h := http.Header{"Origin": {"https://evil.example"}}
	if _, resp, err := dialLive(t, env, h, "graphql-transport-ws"); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("upgrade from another origin: %v %v", resp, err)
	}
	for _, origin := range []string{"https://app.example", env.BaseURL} {
		conn, _, err := dialLive(t, env, http.Header{"Origin": {origin}}, "graphql-transport-ws")
		if err != nil {
			t.Fatalf("upgrade from %s: %v", origin, err)
		}
		conn.CloseNow()
	}

	loc := env.ID(t, "location", 0)
	mine := connectLive(t, env, initOf(env.Bearer()))
	other := connectLive(t, env, initOf(env.Other(t)))
	// A credential the upstream refuses holds no connection.
	if code, reason := closedAtInit(t, env, nil, map[string]any{"Authorization": "Bearer not-a-token", "service-network-id": env.Bearer().NetworkID}); code != 4403 {
		t.Fatalf("refused credential: closed %d %q, want 4403", code, reason)
	}
	mine.subscribe("1", orderEventsQuery, map[string]any{"loc": loc})
	other.subscribe("1", orderEventsQuery, map[string]any{"loc": loc})
	// Both pollers have their baseline (the other network's only when its
	// list answers).
	ready := 1
	if r := env.Query(t, env.Other(t), `query($loc: ID!) { location(id: $loc) { orders(first: 1) { nodes { id } } } }`, map[string]any{"loc": loc}); len(r.Errors) == 0 {
		ready = 2
	}
	testenv.WaitFor(t, "two pollers ready", func() bool { st := env.Stack.Live.Stats(); return st.Pollers == 2 && st.Ready == ready })
	order := firstOrder(t, env, loc)
	restChange(t, env, "/_test/orders/"+order.ID+"/copy", nil)
	if ev := mine.nextOrder("1").Data.OrderEvents; ev.Kind != "CREATED" {
		t.Fatalf("mine: %+v", ev)
	}
	// The other network's poller has polled since the change, and
	// delivered nothing (or only its own errors).
	n := env.Stack.Live.Stats().Polls[restclient.OpListOrders.Route]
	waitPolls(t, env, restclient.OpListOrders.Route, n+4)
	select {
	case m := <-other.ops("1"):
		var ev orderEvent
		_ = json.Unmarshal(m.Payload, &ev)
		if ev.Data.OrderEvents.Node != nil {
			t.Fatalf("another network received %s", m.Payload)
		}
	default:
	}
}

// TestLiveLimitsRefuse: each bound of subscriptions and connections
// refuses with its code, before any upstream call of its own.
func TestLiveLimitsRefuse(t *testing.T) {
	env := liveEnv(t, func(c *stack.Config) {
		c.Graph.LiveMaxPerConnection, c.Live.MaxPerCredential, c.Live.MaxTotal, c.Graph.LiveMaxConnections = 1, 2, 3, 5
	})
	loc := env.ID(t, "location", 0)
	vars := map[string]any{"loc": loc}
	refusedBy := func(c *wsClient, id string) any {
		t.Helper()
		ev := c.nextOrder(id)
		if len(ev.Errors) == 0 || ev.Errors[0].Extensions["code"] != "TOO_MANY_SUBSCRIPTIONS" {
			t.Fatalf("operation %s: %+v", id, ev)
		}
		return ev.Errors[0].Extensions["limit"]
	}
	subs := func(n int) {
		t.Helper()
		testenv.WaitFor(t, "subscriptions", func() bool { return env.Stack.Live.Stats().Subscriptions == n })
	}
	a := connectLive(t, env, initOf(env.Bearer()))
	// The operation limits hold for a subscription's selection.
	aliases := ""
	for i := range 31 {
		aliases += fmt.Sprintf(" k%d: kind", i)
	}
	a.subscribe("x", `subscription($loc: ID!) { orderEvents(locationId: $loc) {`+aliases+` } }`, vars)
	var errs []struct{ Extensions map[string]any }
	if m := a.next("x"); m.Type != "error" || json.Unmarshal(m.Payload, &errs) != nil || len(errs) == 0 || errs[0].Extensions["code"] != "QUERY_TOO_COMPLEX" {
		t.Fatalf("31 aliases: %s %s, want an error message with QUERY_TOO_COMPLEX", m.Type, m.Payload)
	}
	a.subscribe("1", orderEventsQuery, vars)
	subs(1)
	a.subscribe("2", orderEventsQuery, vars)
	if got := refusedBy(a, "2"); got != "connection" {
		t.Fatalf("second on one connection: limit %v", got)
	}
	b := connectLive(t, env, initOf(env.Bearer()))
	b.subscribe("1", orderEventsQuery, vars)
	subs(2)
	c := connectLive(t, env, initOf(env.Basic()))
	c.subscribe("1", orderEventsQuery, vars)
	subs(3)
	d := connectLive(t, env, initOf(env.Other(t)))
	d.subscribe("1", orderEventsQuery, vars)
	if got := refusedBy(d, "1"); got != "total" {
		t.Fatalf("fourth on the server: limit %v", got)
	}
	c.send(wsMsg{ID: "1", Type: "complete"})
	subs(2)
	e := connectLive(t, env, initOf(env.Bearer()))
	e.subscribe("1", orderEventsQuery, vars)
	if got := refusedBy(e, "1"); got != "credential" {
		t.Fatalf("third of one credential: limit %v", got)
	}
	if _, resp, err := dialLive(t, env, nil, "graphql-transport-ws"); err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("sixth connection: %v %v", resp, err)
	}
}

// TestLiveOverSSE: graphql-sse's distinct connections mode: one POST with
// Accept: text/event-stream; a visit's check-in arrives as a `next` event;
// a subscription over plain HTTP is refused.
func TestLiveOverSSE(t *testing.T) {
	env := liveEnv(t, nil)
	visit := env.ID(t, "visit", 0)
	query := `subscription($id: ID!) { visitEvents(id: $id) { kind node { id checkInDate location { id } } } }`

	// Not executable in one response: 400 whichever JSON type is accepted.
	for _, accept := range []string{"application/json", "application/graphql-response+json"} {
		plain := env.Do(t, env.Bearer(), query, map[string]any{"id": visit}, map[string]string{"Accept": accept})
		if plain.Status != http.StatusBadRequest || len(plain.Errors) == 0 || plain.Errors[0].Extensions["code"] != "BAD_REQUEST" {
			t.Fatalf("subscription over plain HTTP accepting %s: HTTP %d %+v", accept, plain.Status, plain.Errors)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := sseDo(t, ctx, env, env.Bearer(), map[string]any{"query": query, "variables": map[string]any{"id": visit}}, nil, nil)
	defer resp.Body.Close()
	mustStream(t, "a subscription by POST", resp)
	testenv.WaitFor(t, "the subscription", func() bool { return env.Stack.Live.Stats().Subscriptions == 1 })
	waitPolls(t, env, restclient.OpGetVisit.Route, 1)
	restChange(t, env, "/_test/visits/"+visit+"/set", map[string]any{"checkInDate": "2026-01-02T10:00:00Z"})
	events := sseEvents(resp)
	select {
	case e := <-events:
		want := `next {"data":{"visitEvents":{"kind":"UPDATED","node":{"id":"` + visit + `","checkInDate":"2026-01-02T10:00:00Z","location":{"id":`
		if !strings.HasPrefix(e, want) {
			t.Fatalf("event %s\nwant %s...", e, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no event")
	}
}

// TestLiveLegacyGraphQLWS: the legacy graphql-ws subprotocol
// (subscriptions-transport-ws): connection_init, connection_ack and
// keep-alive "ka" messages, start, data, stop, complete.
func TestLiveLegacyGraphQLWS(t *testing.T) {
	env := liveEnv(t, func(c *stack.Config) { c.Graph.LiveKeepAlive = 10 * time.Millisecond })
	conn, _, err := dialLive(t, env, env.Bearer().Header(), "graphql-ws")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	c := &wsClient{t: t, conn: conn, msgs: map[string]chan wsMsg{}}
	c.send(wsMsg{Type: "connection_init", Payload: mustJSON(map[string]any{})}) // credentials from the upgrade's headers
	if m := c.read(); m.Type != "connection_ack" {
		t.Fatalf("%+v", m)
	}
	if m := c.read(); m.Type != "ka" {
		t.Fatalf("after the ack: %+v, want ka", m)
	}
	loc := env.ID(t, "location", 0)
	c.send(wsMsg{ID: "1", Type: "start", Payload: mustJSON(map[string]any{"query": orderEventsQuery, "variables": map[string]any{"loc": loc}})})
	testenv.WaitFor(t, "the subscription", func() bool { return env.Stack.Live.Stats().Subscriptions == 1 })
	waitPolls(t, env, restclient.OpListOrders.Route, 1)
	created := restChange(t, env, "/_test/orders/"+firstOrder(t, env, loc).ID+"/copy", nil)
	for {
		m := c.read()
		if m.Type == "ka" {
			continue
		}
		if m.Type != "data" || m.ID != "1" || !strings.Contains(string(m.Payload), `"kind":"CREATED"`) || !strings.Contains(string(m.Payload), created) {
			t.Fatalf("%s %s, want data of CREATED %s", m.Type, m.Payload, created)
		}
		break
	}
	c.send(wsMsg{ID: "1", Type: "stop"})
	for {
		m := c.read()
		if m.Type == "ka" {
			continue
		}
		if m.Type != "complete" || m.ID != "1" {
			t.Fatalf("after stop: %+v", m)
		}
		break
	}
	testenv.WaitFor(t, "no subscription", func() bool { return env.Stack.Live.Stats().Subscriptions == 0 })
}

// TestLiveQueriesOverWebSocketFetchAfresh: two queries on one WebSocket
// are two requests: the second fetches again (nothing kept by the
// connection's loaders).
func TestLiveQueriesOverWebSocketFetchAfresh(t *testing.T) {
	env := liveEnv(t, nil)
	c := connectLive(t, env, initOf(env.Bearer()))
	res := env.ID(t, "resource", 0)
	env.ResetCalls()
	for _, id := range []string{"1", "2"} {
		c.subscribe(id, `query($id: ID!) { resource(id: $id) { id title } }`, map[string]any{"id": res})
		if m := c.next(id); m.Type != "next" || !strings.Contains(string(m.Payload), res) {
			t.Fatalf("query %s: %s %s", id, m.Type, m.Payload)
		}
		if m := c.next(id); m.Type != "complete" {
			t.Fatalf("query %s: %+v", id, m)
		}
	}
	if got, _ := env.Calls(); got[restclient.OpGetResource.Pattern()] != 2 {
		t.Fatalf("calls %v, want the resource fetched by each query", got)
	}
}

// sseDo sends creds' graphql-sse request to env with ctx: a POST of body, or
// a GET of query when query is not nil; with Accept: text/event-stream and
// the headers of extra.
func sseDo(t *testing.T, ctx context.Context, env *testenv.Env, creds testenv.Creds, body map[string]any, query url.Values, extra http.Header) *http.Response {
	t.Helper()
	var req *http.Request
	if query != nil {
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, env.FacadeURL+"?"+query.Encode(), nil)
	} else {
		req, _ = http.NewRequestWithContext(ctx, http.MethodPost, env.FacadeURL, bytes.NewReader(mustJSON(body)))
	}
	req.Header = creds.Header()
	if query == nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range extra {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// mustStream fails t unless resp opens an event stream (200,
// text/event-stream).
func mustStream(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: HTTP %d %q %s", what, resp.StatusCode, ct, b)
	}
}

// sseEvents yields each event of resp's stream as "<event> <data>" (e.g.
// `next {"data":...}`), and is closed when the stream ends.
func sseEvents(resp *http.Response) <-chan string {
	events := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				events <- event + " " + strings.TrimPrefix(line, "data: ")
			}
		}
		close(events)
	}()
	return events
}
