package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// connectLiveWith is connectLive with the upgrade's headers h.
func connectLiveWith(t *testing.T, env *testenv.Env, h http.Header, init map[string]any) *wsClient {
	t.Helper()
	conn, resp, err := dialLive(t, env, h, "graphql-transport-ws")
	if err != nil {
		t.Fatalf("upgrade: %v %v", resp, err)
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

// from is the X-Forwarded-For header of a client at addr, behind the
// trusted proxy 127.0.0.1.
func from(addr string) http.Header { return http.Header{"X-Forwarded-For": {addr}} }

// refusedUpgrade dials and fails t unless the upgrade is refused with
// status and code.
func refusedUpgrade(t *testing.T, env *testenv.Env, h http.Header, status int, code string) {
	t.Helper()
	conn, resp, err := dialLive(t, env, h, "graphql-transport-ws")
	if err == nil {
		conn.CloseNow()
		t.Fatalf("upgrade accepted, want HTTP %d %s", status, code)
	}
	if resp == nil || resp.StatusCode != status {
		t.Fatalf("upgrade: %v %v, want HTTP %d", resp, err, status)
	}
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"code":"`+code+`"`) {
		t.Fatalf("upgrade refused: HTTP %d %s, want %s", resp.StatusCode, b, code)
	}
}

// TestLiveConnectionsProveTheirCredentialsFirst: a WebSocket without
// credentials is closed 4401, one the upstream refuses 4403 (one upstream
// call for the credential, then none), and neither holds a slot: after
// fifty of them, as many tenants as -live-max-connections connect, and
// one more is refused 503. A valid credential costs one call the first
// time, none after. An SSE subscription without credentials is refused 401,
// with refused ones 401 too. With server credentials, no credentials are
// needed.
func TestLiveConnectionsProveTheirCredentialsFirst(t *testing.T) {
	env := liveEnv(t, func(c *stack.Config) { c.Graph.LiveMaxConnections, c.Graph.LiveMaxInitPerAddress = 2, 2 })
	probe := restclient.OpGetResource.Pattern()
	for i := range 50 {
		if code, reason := closedAtInit(t, env, nil, map[string]any{}); code != 4401 || !strings.HasPrefix(reason, "Unauthorized") {
			t.Fatalf("anonymous connection %d: closed %d %q, want 4401 Unauthorized", i, code, reason)
		}
	}
	env.ResetCalls()
	bad := map[string]any{"Authorization": "Bearer not-a-token", "service-network-id": env.Bearer().NetworkID}
	for i := range 5 {
		if code, reason := closedAtInit(t, env, nil, bad); code != 4403 || !strings.HasPrefix(reason, "Forbidden") {
			t.Fatalf("refused connection %d: closed %d %q, want 4403 Forbidden", i, code, reason)
		}
	}
	if got, _ := env.Calls(); got[probe] != 1 || len(got) != 1 {
		t.Fatalf("five connections of one refused token: calls %v, want one %s", got, probe)
	}
	env.ResetCalls()
	connectLive(t, env, initOf(env.Bearer()))
	connectLiveWith(t, env, env.Basic().Header(), map[string]any{}) // the upgrade's headers
	if got, _ := env.Calls(); got[probe] != 2 || len(got) != 1 {
		t.Fatalf("two new credentials: calls %v, want one %s each", got, probe)
	}
	refusedUpgrade(t, env, nil, http.StatusServiceUnavailable, "TOO_MANY_CONNECTIONS")

	// A proven credential connects with no call.
	env2 := liveEnv(t, nil)
	connectLive(t, env2, initOf(env2.Bearer()))
	env2.ResetCalls()
	for range 3 {
		connectLive(t, env2, initOf(env2.Bearer()))
	}
	if _, total := env2.Calls(); total != 0 {
		t.Fatalf("three more connections of a proven credential: %d calls", total)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	visit := env2.ID(t, "visit", 0)
	sub := map[string]any{"query": `subscription($id: ID!) { visitEvents(id: $id) { kind } }`, "variables": map[string]any{"id": visit}}
	for _, c := range []testenv.Creds{{}, {Authorization: "Bearer not-a-token", NetworkID: env2.Bearer().NetworkID}} {
		resp := sseDo(t, ctx, env2, c, sub, nil, nil)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), "UNAUTHENTICATED") {
			t.Fatalf("SSE subscription with %q: HTTP %d %s, want 401 UNAUTHENTICATED", c.Authorization, resp.StatusCode, b)
		}
	}
	if s := env2.Stack.Live.Stats(); s.Subscriptions != 0 {
		t.Fatalf("refused SSE requests left %d subscriptions", s.Subscriptions)
	}

	server := liveEnvWith(t, testenv.Options{ServerCreds: &restclient.Credentials{Authorization: env2.Bearer().Authorization, NetworkID: env2.Bearer().NetworkID}})
	connectLive(t, server, map[string]any{})
}

// TestLiveAnonymousFloodLeavesTenantsConnecting is the anonymous socket
// flood scaled down (the replica's bound 40 connections, where the issue
// ran 10,000 against 10,000): from one client address, 400 sockets whose
// connection_init carries no credentials, 20 at a time, are every one
// closed 4401 or refused 429 at the upgrade (the address has 4 opening at
// most); its sockets that never send connection_init hold 4 opening slots
// and no more, and from many addresses, once the replica's 40 opening slots
// are full, the oldest makes room for a tenant (closed 1013); a credential
// it holds opens 3 connections and no more (1013). Meanwhile tenants at other addresses connect, and one subscribes
// and receives the next change.
func TestLiveAnonymousFloodLeavesTenantsConnecting(t *testing.T) {
	env := liveEnv(t, func(c *stack.Config) {
		c.Graph.LiveMaxConnections, c.Graph.LiveMaxConnectionsPerCredential, c.Graph.LiveMaxInitPerAddress = 40, 3, 4
		c.Graph.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	attacker := from("203.0.113.9")
	var mu sync.Mutex
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	for w := range 20 {
		wg.Go(func() {
			for i := w; i < 400; i += 20 {
				conn, resp, err := dialLive(t, env, attacker, "graphql-transport-ws")
				outcome := ""
				switch {
				case err != nil && resp != nil:
					outcome = fmt.Sprintf("HTTP %d", resp.StatusCode)
				case err != nil:
					outcome = err.Error()
				default:
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					_ = conn.Write(ctx, websocket.MessageText, []byte(`{"type":"connection_init","payload":{}}`))
					_, b, err := conn.Read(ctx)
					cancel()
					var ce websocket.CloseError
					if errors.As(err, &ce) {
						outcome = fmt.Sprintf("closed %d", ce.Code)
					} else {
						outcome = fmt.Sprintf("%s %v", b, err)
					}
					conn.CloseNow()
				}
				mu.Lock()
				outcomes[outcome]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if outcomes["closed 4401"]+outcomes["HTTP 429"] != 400 || outcomes["closed 4401"] == 0 {
		t.Fatalf("400 anonymous sockets: %v, want each closed 4401 or refused 429", outcomes)
	}
	t.Logf("400 anonymous sockets: %v", outcomes)

	// Sockets that never send connection_init: 4 opening, the fifth refused.
	var silent []*websocket.Conn
	for range 4 {
		conn, resp, err := dialLive(t, env, attacker, "graphql-transport-ws")
		if err != nil {
			t.Fatalf("silent socket: %v %v", resp, err)
		}
		t.Cleanup(func() { conn.CloseNow() })
		silent = append(silent, conn)
	}
	refusedUpgrade(t, env, attacker, http.StatusTooManyRequests, "TOO_MANY_CONNECTIONS")
	// From 9 more addresses, 36 more: the replica's 40 opening slots are
	// full; the next connection, a tenant's, takes the oldest one's (closed
	// 1013).
	for a := range 9 {
		for range 4 {
			conn, resp, err := dialLive(t, env, from(fmt.Sprintf("203.0.113.%d", 100+a)), "graphql-transport-ws")
			if err != nil {
				t.Fatalf("silent socket: %v %v", resp, err)
			}
			t.Cleanup(func() { conn.CloseNow() })
		}
	}
	connectLiveWith(t, env, from("198.51.100.3"), initOf(env.Bearer()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ce websocket.CloseError
	if _, _, err := silent[0].Read(ctx); !errors.As(err, &ce) || ce.Code != websocket.StatusTryAgainLater {
		t.Fatalf("the oldest opening socket once the replica's pool is full: %v, want closed 1013", err)
	}

	// A credential the attacker holds: 3 connections, the fourth closed 1013.
	stolen := env.Basic()
	for range 3 {
		connectLiveWith(t, env, from("203.0.113.10"), initOf(stolen))
	}
	if code, reason := closedAtInit(t, env, from("203.0.113.10"), initOf(stolen)); code != 1013 || !strings.Contains(reason, "too many live connections for these credentials") {
		t.Fatalf("fourth connection of one credential: closed %d %q, want 1013", code, reason)
	}

	// Tenants still connect; one subscribes and receives the next change.
	loc := env.ID(t, "location", 0)
	tenant := connectLiveWith(t, env, from("198.51.100.1"), initOf(env.Bearer()))
	connectLiveWith(t, env, from("198.51.100.2"), initOf(env.Other(t)))
	tenant.subscribe("1", orderEventsQuery, map[string]any{"loc": loc})
	testenv.WaitFor(t, "the poller's baseline", func() bool { st := env.Stack.Live.Stats(); return st.Pollers == 1 && st.Ready == 1 })
	restChange(t, env, "/_test/orders/"+firstOrder(t, env, loc).ID+"/copy", nil)
	if ev := tenant.nextOrder("1").Data.OrderEvents; ev.Kind != "CREATED" {
		t.Fatalf("tenant during the flood: %+v", ev)
	}
}

// TestLiveIdleWebSocketsClosed: a WebSocket with no operation for
// -live-idle-timeout is closed 1000 with the reason; one with a running
// subscription is not, for as long as it runs (here: while its source is
// polled more times than the idle timeout holds intervals), and is once
// the subscription completes.
func TestLiveIdleWebSocketsClosed(t *testing.T) {
	const idle = 200 * time.Millisecond // 4 intervals of liveEnv's 50 ms polls
	env := liveEnv(t, func(c *stack.Config) { c.Graph.LiveIdleTimeout = idle })
	open := func() *websocket.Conn {
		t.Helper()
		conn, _, err := dialLive(t, env, nil, "graphql-transport-ws")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.CloseNow() })
		c := &wsClient{t: t, conn: conn}
		c.send(wsMsg{Type: "connection_init", Payload: mustJSON(initOf(env.Bearer()))})
		if m := c.read(); m.Type != "connection_ack" {
			t.Fatalf("%+v", m)
		}
		return conn
	}
	// next returns the next message that is not a keep-alive, or the close.
	next := func(conn *websocket.Conn) (wsMsg, *websocket.CloseError) {
		t.Helper()
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, b, err := conn.Read(ctx)
			cancel()
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return wsMsg{}, &ce
			}
			if err != nil {
				t.Fatal(err)
			}
			var m wsMsg
			_ = json.Unmarshal(b, &m)
			if m.Type != "ping" && m.Type != "pong" {
				return m, nil
			}
		}
	}
	lazy := open()
	if m, ce := next(lazy); ce == nil || ce.Code != websocket.StatusNormalClosure || ce.Reason != "idle: no subscription or query for 200ms" {
		t.Fatalf("idle connection: %+v %v, want closed 1000 with the reason", m, ce)
	}

	busy := open()
	loc := env.ID(t, "location", 0)
	c := &wsClient{t: t, conn: busy}
	c.send(wsMsg{ID: "1", Type: "subscribe", Payload: mustJSON(map[string]any{"query": orderEventsQuery, "variables": map[string]any{"loc": loc}})})
	n := waitPolls(t, env, "/shop/orders/v1", 1)
	waitPolls(t, env, "/shop/orders/v1", n+8) // at least 8 intervals: twice the idle timeout
	restChange(t, env, "/_test/orders/"+firstOrder(t, env, loc).ID+"/copy", nil)
	if m, ce := next(busy); ce != nil || m.Type != "next" || !strings.Contains(string(m.Payload), `"CREATED"`) {
		t.Fatalf("subscribed connection: %+v %v, want the CREATED event", m, ce)
	}
	c.send(wsMsg{ID: "1", Type: "complete"})
	m, ce := next(busy)
	if ce == nil && m.Type == "complete" { // gqlgen's answer to the client's
		m, ce = next(busy)
	}
	if ce == nil || ce.Code != websocket.StatusNormalClosure {
		t.Fatalf("after its subscription: %+v %v, want closed 1000", m, ce)
	}
}
