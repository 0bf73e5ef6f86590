package stack_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// TestShutdownEndsLiveConnectionsAsARestart: on Shutdown (what SIGTERM
// leads to, after the drain), a WebSocket subscriber's connection is
// closed with 1012 and its reason, in a close frame, with no message
// before it (no ERROR event, no complete: graphql-ws's client connects
// again); an SSE subscriber's stream ends without a `complete` event
// (graphql-sse's client connects again).
func TestShutdownEndsLiveConnectionsAsARestart(t *testing.T) {
	env := testenv.New(t, testenv.Options{Config: func(c *stack.Config) {
		c.Live.Interval, c.Live.AllowFastPolls = 50*time.Millisecond, true
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	loc := env.ID(t, "location", 0)
	query := `subscription($loc: ID!) { orderEvents(locationId: $loc) { kind } }`
	payload, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"loc": loc}})

	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(env.FacadeURL, "http"), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	b := env.Bearer()
	write := func(m string) {
		if err := ws.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"type":"connection_init","payload":{"Authorization":"` + b.Authorization + `","service-network-id":"` + b.NetworkID + `"}}`)
	if _, m, err := ws.Read(ctx); err != nil || !strings.Contains(string(m), "connection_ack") {
		t.Fatalf("connection_init: %s %v", m, err)
	}
	write(`{"id":"1","type":"subscribe","payload":` + string(payload) + `}`)

	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env.FacadeURL, bytes.NewReader(payload))
	req.Header = b.Header()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("SSE: %v %v", resp, err)
	}
	defer resp.Body.Close()
	testenv.WaitFor(t, "two subscriptions", func() bool { return env.Stack.Live.Stats().Subscriptions == 2 })

	shut := make(chan error, 1)
	go func() { shut <- env.Stack.Shutdown(ctx) }()

	// The WebSocket: nothing but the close frame.
	for {
		_, m, err := ws.Read(ctx)
		if err == nil {
			var msg struct{ Type string }
			_ = json.Unmarshal(m, &msg)
			if msg.Type == "ping" || msg.Type == "pong" {
				continue
			}
			t.Fatalf("WebSocket before its close: %s", m)
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.StatusServiceRestart || ce.Reason != "service restart: connect again" {
			t.Fatalf("WebSocket: %v, want closed 1012 with the reason", err)
		}
		break
	}
	// The SSE stream: its events, none of them complete, then its end.
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "event:") && line != "event: next" {
			t.Fatalf("SSE: %q before the end, want no complete", line)
		}
	}
	if err := <-shut; err != nil && !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Shutdown: %v", err)
	}
	if env.Stack.Live.Stats().Subscriptions != 0 {
		t.Errorf("%d subscriptions after the shutdown", env.Stack.Live.Stats().Subscriptions)
	}
}
