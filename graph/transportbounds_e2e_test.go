package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/workspacenet/facade/graph/trusted"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// The answers of one request over each transport, as the bounds table of
// docs/hardening.md states them:
//
//   - "HTTP 413 QUERY_TOO_LARGE": refused before GraphQL, with that status;
//   - "QUERY_TOO_COMPLEX": a GraphQL error of the answer (over WebSocket an
//     `error` message or a `next` with errors, over SSE a `next` event);
//   - "closed 1009": the WebSocket was closed with that code;
//   - "ran": the operation ran (a query answered without that error, a
//     subscription counted by the hub).

// viaHTTP posts body (raw JSON) with the Bearer credentials.
func viaHTTP(t *testing.T, env *testenv.Env, body []byte) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, env.FacadeURL, bytes.NewReader(body))
	req.Header = env.Bearer().Header()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := env.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	code := firstCode(b)
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("HTTP %d %s", resp.StatusCode, code)
	}
	if code == "" {
		return "ran"
	}
	return code
}

// firstCode is the code of the first error of a JSON response, "" when it
// has none.
func firstCode(b []byte) string {
	var r struct {
		Errors []struct{ Extensions map[string]any }
	}
	if json.Unmarshal(b, &r) != nil || len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// viaWS sends body (raw JSON) as the payload of one subscribe message on a
// new graphql-transport-ws connection of the Bearer credentials.
func viaWS(t *testing.T, env *testenv.Env, body []byte) string {
	t.Helper()
	conn, _, err := dialLive(t, env, nil, "graphql-transport-ws")
	if err != nil {
		t.Fatal(err)
	}
	defer ended(t, env)()
	defer conn.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	write := func(m []byte) {
		if err := conn.Write(ctx, websocket.MessageText, m); err != nil {
			t.Fatal(err)
		}
	}
	write(mustJSON(wsMsg{Type: "connection_init", Payload: mustJSON(initOf(env.Bearer()))}))
	if _, b, err := conn.Read(ctx); err != nil || !strings.Contains(string(b), "connection_ack") {
		t.Fatalf("connection_init: %s %v", b, err)
	}
	subs := env.Stack.Live.Stats().Subscriptions
	write(append(append([]byte(`{"id":"1","type":"subscribe","payload":`), body...), '}'))
	msgs := make(chan wsMsg, 10)
	closed := make(chan error, 1)
	go func() {
		for {
			_, b, err := conn.Read(ctx)
			if err != nil {
				closed <- err
				return
			}
			var m wsMsg
			_ = json.Unmarshal(b, &m)
			if m.ID == "1" {
				msgs <- m
			}
		}
	}()
	for {
		select {
		case m := <-msgs:
			switch m.Type {
			case "error":
				var errs []struct{ Extensions map[string]any }
				_ = json.Unmarshal(m.Payload, &errs)
				if len(errs) > 0 {
					c, _ := errs[0].Extensions["code"].(string)
					return c
				}
				return "error " + string(m.Payload)
			case "next":
				if c := firstCode(m.Payload); c != "" {
					return c
				}
				return "ran"
			}
			return m.Type
		case err := <-closed:
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return fmt.Sprintf("closed %d", ce.Code)
			}
			return err.Error()
		case <-time.After(5 * time.Millisecond):
			if env.Stack.Live.Stats().Subscriptions > subs {
				return "ran"
			}
		case <-ctx.Done():
			t.Fatal("no answer")
		}
	}
}

// viaSSE posts body (raw JSON) with Accept: text/event-stream and the
// Bearer credentials.
func viaSSE(t *testing.T, env *testenv.Env, body []byte) string {
	t.Helper()
	defer ended(t, env)()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	subs := env.Stack.Live.Stats().Subscriptions
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env.FacadeURL, bytes.NewReader(body))
	req.Header = env.Bearer().Header()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		code := firstCode(b)
		if resp.StatusCode != http.StatusOK {
			return fmt.Sprintf("HTTP %d %s", resp.StatusCode, code)
		}
		if code == "" {
			return "ran"
		}
		return code
	}
	events := sseEvents(resp)
	for {
		select {
		case e, ok := <-events:
			if !ok {
				return "ended"
			}
			if data, found := strings.CutPrefix(e, "next "); found {
				if c := firstCode([]byte(data)); c != "" {
					return c
				}
				return "ran"
			}
		case <-time.After(5 * time.Millisecond):
			if env.Stack.Live.Stats().Subscriptions > subs {
				return "ran"
			}
		case <-ctx.Done():
			t.Fatal("no answer")
		}
	}
}

// ended returns the wait, once a helper's connection is gone, until the
// hub counts as many subscriptions as when it was called: a subscription
// the helper started has ended, and the next helper counts its own.
func ended(t *testing.T, env *testenv.Env) func() {
	subs := env.Stack.Live.Stats().Subscriptions
	return func() {
		testenv.WaitFor(t, "the subscription's end", func() bool { return env.Stack.Live.Stats().Subscriptions <= subs })
	}
}

// request is one GraphQL request body.
func request(query string, more map[string]any) []byte {
	m := map[string]any{"query": query}
	for k, v := range more {
		m[k] = v
	}
	return mustJSON(m)
}

// TestEveryBoundOnEveryTransport: each bound of a request holds over
// WebSocket and SSE exactly as over HTTP, as docs/hardening.md's table
// states, cell by cell. A query goes by HTTP; a subscription with the same
// excess goes by WebSocket and SSE (the live routes), and where GraphQL
// allows a subscription no such excess (root fields), a query.
func TestEveryBoundOnEveryTransport(t *testing.T) {
	type cell struct{ http, ws, sse string }
	check := func(t *testing.T, env *testenv.Env, query, sub []byte, want cell) {
		t.Helper()
		got := cell{viaHTTP(t, env, query), viaWS(t, env, sub), viaSSE(t, env, sub)}
		if got != want {
			t.Errorf("HTTP, WebSocket, SSE: %q, want %q", got, want)
		}
	}
	loc := func(env *testenv.Env) map[string]any {
		return map[string]any{"variables": map[string]any{"loc": env.ID(t, "location", 0)}}
	}
	const subHead = `subscription($loc: ID!) { orderEvents(locationId: $loc) { `
	repeat := func(s string, n int) string { return strings.Repeat(s+" ", n) }

	t.Run("within every bound", func(t *testing.T) {
		env := liveEnv(t, nil)
		check(t, env, request(`{ __typename }`, nil), request(subHead+`kind } }`, loc(env)), cell{"ran", "ran", "ran"})
	})
	t.Run("max-query-bytes: 1 MiB, refused unparsed", func(t *testing.T) {
		env := liveEnv(t, nil)
		// Parsed, it would be GRAPHQL_PARSE_FAILED.
		huge := "{ #" + strings.Repeat("x", 1<<20)
		check(t, env, request(huge, nil), request(huge, nil), cell{"HTTP 413 QUERY_TOO_LARGE", "QUERY_TOO_LARGE", "HTTP 413 QUERY_TOO_LARGE"})
	})
	t.Run("max-body-bytes", func(t *testing.T) {
		env := liveEnv(t, func(c *stack.Config) { c.Graph.MaxBodyBytes = 4096 })
		body := request(`{ __typename }`, map[string]any{"variables": map[string]any{"pad": strings.Repeat("x", 5000)}})
		check(t, env, body, body, cell{"HTTP 413 REQUEST_TOO_LARGE", "closed 1009", "HTTP 413 REQUEST_TOO_LARGE"})
	})
	t.Run("well-formed request", func(t *testing.T) {
		env := liveEnv(t, nil)
		body := []byte(`{"query": "{ __typename }", "variables": "not an object"}`)
		check(t, env, body, body, cell{"HTTP 400 BAD_REQUEST", "BAD_REQUEST", "HTTP 400 BAD_REQUEST"})
	})
	limit := func(name string, cfg func(*stack.Config), query, sub string) {
		t.Run(name, func(t *testing.T) {
			env := liveEnv(t, cfg)
			s := request(sub, loc(env))
			if strings.HasPrefix(sub, "{") || strings.HasPrefix(sub, "query") {
				s = request(sub, nil)
			}
			check(t, env, request(query, nil), s, cell{"QUERY_TOO_COMPLEX", "QUERY_TOO_COMPLEX", "QUERY_TOO_COMPLEX"})
		})
	}
	vars := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "$v%d: ID ", i)
		}
		return b.String()
	}
	limit("max-tokens", func(c *stack.Config) { c.Graph.Limits.MaxTokens = 100 },
		`query(`+vars(30)+`) { __typename }`, `subscription($loc: ID! `+vars(30)+`) { orderEvents(locationId: $loc) { kind } }`)
	limit("max-selections", func(c *stack.Config) { c.Graph.Limits.MaxSelections = 10 },
		`{ `+repeat("__typename", 12)+`}`, subHead+repeat("kind", 12)+`} }`)
	limit("max-directives", func(c *stack.Config) { c.Graph.Limits.MaxDirectives = 2 },
		`{ `+repeat("__typename @include(if: true)", 3)+`}`, subHead+repeat("kind @include(if: true)", 3)+`} }`)
	limit("max-aliases", func(c *stack.Config) { c.Graph.Limits.MaxAliases = 2 },
		`{ a: __typename b: __typename c: __typename }`, subHead+`a: kind b: kind c: kind } }`)
	limit("max-depth", func(c *stack.Config) { c.Graph.Limits.MaxDepth = 2 },
		`{ resource(id: "f302cbe6-4927-49a2-baca-cbeb3a5f0274") { location { id } } }`, subHead+`node { id } } }`)
	limit("max-cost", func(c *stack.Config) { c.Graph.Limits.MaxCost = 1 },
		`{ resource(id: "f302cbe6-4927-49a2-baca-cbeb3a5f0274") { location { id } } }`, subHead+`node { id } } }`)
	// A subscription has one root field by GraphQL's own rule: a query over
	// each transport (over SSE: incremental delivery's route).
	limit("max-root-fields", func(c *stack.Config) { c.Graph.Limits.MaxRootFields = 1 },
		`{ a: __typename b: __typename }`, `{ a: __typename b: __typename }`)

	t.Run("automatic persisted queries", func(t *testing.T) {
		env := liveEnv(t, nil)
		pq := func(doc string) map[string]any {
			return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": trusted.Hash(doc)}}
		}
		hashOnly := func(doc string, more map[string]any) []byte {
			m := map[string]any{"extensions": pq(doc)}
			for k, v := range more {
				m[k] = v
			}
			return mustJSON(m)
		}
		register := func(doc string, more map[string]any) []byte {
			m := map[string]any{"extensions": pq(doc)}
			for k, v := range more {
				m[k] = v
			}
			return request(doc, m)
		}
		unknown := `{ __typename unknownHash: __typename }`
		check(t, env, hashOnly(unknown, nil), hashOnly(unknown, nil), cell{"PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_FOUND"})
		tooLong := "{ __typename } #" + strings.Repeat("x", 65536)
		check(t, env, register(tooLong, nil), register(tooLong, nil), cell{"HTTP 413 QUERY_TOO_LARGE", "QUERY_TOO_LARGE", "HTTP 413 QUERY_TOO_LARGE"})
		// A document that does not validate is not kept, whichever
		// transport registered it.
		invalid := subHead + `noSuchField } }`
		for _, via := range []func(*testing.T, *testenv.Env, []byte) string{viaHTTP, viaWS, viaSSE} {
			if got := via(t, env, register(invalid, loc(env))); got != "GRAPHQL_VALIDATION_FAILED" {
				t.Errorf("an invalid registration: %s", got)
			}
		}
		check(t, env, hashOnly(invalid, loc(env)), hashOnly(invalid, loc(env)), cell{"PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_FOUND"})
		// One registered over WebSocket runs by its hash over SSE, and the
		// reverse.
		a, b := subHead+`kind } }`, subHead+`kind pollIntervalMs } }`
		if got := viaWS(t, env, register(a, loc(env))); got != "ran" {
			t.Fatalf("registration over WebSocket: %s", got)
		}
		if got := viaSSE(t, env, register(b, loc(env))); got != "ran" {
			t.Fatalf("registration over SSE: %s", got)
		}
		if got := (cell{viaSSE(t, env, hashOnly(a, loc(env))), viaWS(t, env, hashOnly(b, loc(env))), ""}); got != (cell{"ran", "ran", ""}) {
			t.Errorf("by hash, the other transport's registration: %q", got)
		}
	})

	t.Run("trusted documents", func(t *testing.T) {
		q, sub := `{ __typename }`, subHead+`kind } }`
		env := liveEnv(t, func(c *stack.Config) {
			c.Graph.TrustedDocuments = trusted.Documents{trusted.Hash(q): q, trusted.Hash(sub): sub}
		})
		free := `{ __typename other: __typename }`
		check(t, env, request(free, nil), request(free, nil), cell{"OPERATION_NOT_TRUSTED", "OPERATION_NOT_TRUSTED", "OPERATION_NOT_TRUSTED"})
		byID := func(doc string, more map[string]any) []byte {
			m := map[string]any{"documentId": "sha256:" + trusted.Hash(doc)}
			for k, v := range more {
				m[k] = v
			}
			return mustJSON(m)
		}
		check(t, env, byID(q, nil), byID(sub, loc(env)), cell{"ran", "ran", "ran"})
		check(t, env, byID(free, nil), byID(free, nil), cell{"PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_FOUND"})
		// The text of another document under a registered hash.
		forged := map[string]any{"documentId": trusted.Hash(sub)}
		check(t, env, request(free, map[string]any{"documentId": trusted.Hash(q)}), request(free, forged), cell{"OPERATION_NOT_TRUSTED", "OPERATION_NOT_TRUSTED", "OPERATION_NOT_TRUSTED"})
	})
}

// TestWebSocketConnectionInitWithinItsBound: a connection_init larger than
// 16 KiB closes the WebSocket (1009) before gqlgen keeps its payload for
// the connection's life; one within it is acknowledged, and the messages
// after it may be as large as -max-body-bytes.
func TestWebSocketConnectionInitWithinItsBound(t *testing.T) {
	env := liveEnv(t, nil)
	big := initOf(env.Bearer())
	big["padding"] = strings.Repeat("x", 17<<10)
	if code, _ := closedAtInit(t, env, nil, big); code != websocket.StatusMessageTooBig {
		t.Fatalf("a 17 KiB connection_init: closed %d, want 1009", code)
	}
	body := request(`{ __typename }`, map[string]any{"variables": map[string]any{"pad": strings.Repeat("x", 100<<10)}})
	if got := viaWS(t, env, body); got != "ran" {
		t.Fatalf("a 100 KiB operation after connection_init: %s", got)
	}
}
