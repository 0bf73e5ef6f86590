package graph_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
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

// TestLiveUpgradeSpelledAsATokenListIsCheckedToo: an upgrade whose Upgrade
// header lists websocket among other tokens (which the WebSocket library
// accepts) from another origin is no WebSocket: a spelling does not get a
// connection past the origin check and the bound of connections (a browser
// cannot send it; any other client could open unbounded connections).
func TestLiveUpgradeSpelledAsATokenListIsCheckedToo(t *testing.T) {
	env := liveEnv(t, func(c *stack.Config) { c.CORSOrigins = []string{"https://app.example"} })
	for _, upgrade := range []string{"websocket, h2c", "h2c, WebSocket"} {
		req, _ := http.NewRequest(http.MethodGet, env.FacadeURL+"?query=%7B__typename%7D", nil)
		req.Header = env.Bearer().Header()
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", upgrade)
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		req.Header.Set("Sec-WebSocket-Protocol", "graphql-transport-ws")
		req.Header.Set("Origin", "https://evil.example")
		req.Header.Set("Apollo-Require-Preflight", "true")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusSwitchingProtocols {
			t.Errorf("Upgrade: %s from another origin: 101 Switching Protocols, want a refusal or a plain answer", upgrade)
		}
	}
}

// TestLiveOriginLookAlikesRefused: an upgrade from "null" (a sandboxed
// page, a file), from a host that only starts or ends like the allowed one,
// or from the allowed host over another scheme or port, is refused 403;
// one without Origin (not a browser) is not an origin to check.
func TestLiveOriginLookAlikesRefused(t *testing.T) {
	env := liveEnv(t, func(c *stack.Config) { c.CORSOrigins = []string{"https://app.example"} })
	host := strings.TrimPrefix(env.BaseURL, "http://")
	for _, origin := range []string{"null", "https://app.example.evil.example", "https://evilapp.example", "http://app.example", "https://app.example:444",
		"https://" + host + ".evil.example", "http://evil.example/" + host, "http://" + host + "@evil.example"} {
		if _, resp, err := dialLive(t, env, http.Header{"Origin": {origin}}, "graphql-transport-ws"); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("upgrade from %q: %v %v, want 403", origin, resp, err)
		}
	}
	conn, _, err := dialLive(t, env, nil, "graphql-transport-ws")
	if err != nil {
		t.Fatalf("upgrade without Origin: %v", err)
	}
	conn.CloseNow()
}

// TestLiveCredentialsOverTheBoundRefused: credentials longer than an HTTP
// request may send (4 KiB) are refused before any upstream call: in the
// upgrade's headers with 400 before the upgrade, in connection_init by
// closing the connection with 4400 (BAD_REQUEST).
func TestLiveCredentialsOverTheBoundRefused(t *testing.T) {
	env := liveEnv(t, nil)
	long := "Bearer " + strings.Repeat("x", 5<<10)
	for _, viaHeader := range []bool{false, true} {
		h, init := http.Header{}, map[string]any{"Authorization": long, "service-network-id": env.Bearer().NetworkID}
		if viaHeader {
			h.Set("Authorization", long)
			h.Set("service-network-id", env.Bearer().NetworkID)
			init = map[string]any{}
		}
		conn, resp, err := dialLive(t, env, h, "graphql-transport-ws")
		if viaHeader {
			if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
				t.Errorf("credential headers of 5 KiB: %v %v, want 400", resp, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		c := &wsClient{t: t, conn: conn, msgs: map[string]chan wsMsg{}}
		c.send(wsMsg{Type: "connection_init", Payload: mustJSON(init)})
		m := c.read()
		for m.Type == "connection_error" || m.Type == "error" {
			m = c.read()
		}
		if !strings.Contains(m.Type, "4400") {
			t.Errorf("connection_init credentials of 5 KiB: %s %s, want the connection closed 4400", m.Type, m.Payload)
		}
		conn.CloseNow()
	}
	env.ExpectNoCalls(t)
}
