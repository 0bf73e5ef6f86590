package graph_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/workspacenet/facade/graph/livetransport"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// TestLiveKeepAliveFromOneGoroutine: graphql-transport-ws connections get
// "ping" messages from the shared keep-alive, every connection, and the
// subscriptions go on.
func TestLiveKeepAliveFromOneGoroutine(t *testing.T) {
	env := liveEnv(t, func(c *stack.Config) { c.Graph.LiveKeepAlive = 20 * time.Millisecond })
	for range 2 {
		conn, _, err := dialLive(t, env, env.Bearer().Header(), "graphql-transport-ws")
		if err != nil {
			t.Fatal(err)
		}
		c := &wsClient{t: t, conn: conn}
		c.send(wsMsg{Type: "connection_init", Payload: mustJSON(map[string]any{})})
		if m := c.read(); m.Type != "connection_ack" {
			t.Fatalf("%+v", m)
		}
		for {
			m := c.read()
			if m.Type == "ping" {
				break
			}
			if m.Type != "pong" { // gqlgen's keep-alive after the ack
				t.Fatalf("%+v, want ping", m)
			}
		}
		conn.CloseNow()
	}
}

// TestLiveUpgradeWithBytesReadAhead: a client that sends its
// connection_init in the same packet as the upgrade request (the server
// reads it with the request) is answered: what the server read ahead is
// kept when the connection gets its own buffers.
func TestLiveUpgradeWithBytesReadAhead(t *testing.T) {
	env := liveEnv(t, nil)
	host := strings.TrimSuffix(strings.TrimPrefix(env.FacadeURL, "http://"), "/graphql")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second)) // hang guard
	init, _ := json.Marshal(map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": env.Bearer().Authorization, "service-network-id": env.Bearer().NetworkID}})
	var req bytes.Buffer
	req.WriteString("GET /graphql HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n")
	req.Write(maskedTextFrame(init))
	if _, err := conn.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	var head [2]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, head[1]&0x7f)
	if _, err := io.ReadFull(br, payload); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(payload), `"connection_ack"`) {
		t.Fatalf("first message %x %s, want connection_ack", head, payload)
	}
}

// maskedTextFrame is one client text frame of p (under 64 KB).
func maskedTextFrame(p []byte) []byte {
	var b bytes.Buffer
	b.WriteByte(0x81)
	if len(p) < 126 {
		b.WriteByte(0x80 | byte(len(p)))
	} else {
		b.WriteByte(0x80 | 126)
		_ = binary.Write(&b, binary.BigEndian, uint16(len(p)))
	}
	mask := [4]byte{1, 2, 3, 4}
	b.Write(mask[:])
	for i, c := range p {
		b.WriteByte(c ^ mask[i%4])
	}
	return b.Bytes()
}

// TestLiveInitTimeoutClosesSilentConnections: a WebSocket that sends no
// connection_init within -live-init-timeout is closed (1002, "connection
// initialisation timeout"), and no longer counts against the replica's
// connections.
func TestLiveInitTimeoutClosesSilentConnections(t *testing.T) {
	env := liveEnv(t, func(c *stack.Config) {
		c.Graph.LiveInitTimeout = 100 * time.Millisecond
		c.Graph.LiveMaxConnections = 1
	})
	conn, _, err := dialLive(t, env, nil, "graphql-transport-ws")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	// Closed before half the default wait: the configured one applies.
	ctx, cancel := context.WithTimeout(context.Background(), livetransport.DefaultLiveInitTimeout/2)
	defer cancel()
	for {
		_, msg, err := conn.Read(ctx)
		if err == nil {
			continue // a connection_error message before the close
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.StatusProtocolError || ce.Reason != "connection initialisation timeout" {
			t.Fatalf("read: %v (last message %s), want closed 1002 with the reason", err, msg)
		}
		break
	}
	// The replica's only connection slot is free again.
	testenv.WaitFor(t, "a connection accepted", func() bool {
		c, _, err := dialLive(t, env, nil, "graphql-transport-ws")
		if err != nil {
			return false
		}
		c.CloseNow()
		return true
	})
}
