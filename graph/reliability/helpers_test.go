// Package reliability_test checks how the facade behaves when its upstream
// misbehaves (every injected fault kind, the circuit breaker, shared calls),
// when callers abuse it, and under concurrent load from two networks. Every
// test ends with no goroutine left behind.
package reliability_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/workspacenet/facade/internal/testenv"
)

// noLeaks makes t fail if a goroutine started during the test outlives it.
// Call it before testenv.New: cleanups run last-in first-out, so the check
// runs after the env has shut down.
func noLeaks(t *testing.T) {
	t.Helper()
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

// reply is one raw HTTP answer of the facade.
type reply struct {
	status int
	raw    string
	body   struct {
		Data       json.RawMessage `json:"data"`
		Errors     []testenv.Error `json:"errors"`
		Extensions map[string]any  `json:"extensions"`
	}
}

func (r *reply) codes() []string {
	var out []string
	for _, e := range r.body.Errors {
		out = append(out, e.Code())
	}
	return out
}

// send sends one request to the facade with a client that gives up after
// timeout (the deadline under test plus a margin). It is safe to call from
// any goroutine; an answer that is not JSON is an error.
func send(env *testenv.Env, timeout time.Duration, method string, hdr map[string]string, body []byte) (*reply, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, env.FacadeURL, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Timeout: timeout, Transport: tr}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s /graphql: no answer within %v: %w", method, timeout, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := &reply{status: resp.StatusCode, raw: string(raw)}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		return r, fmt.Errorf("answer is not JSON (%d): %.300s", resp.StatusCode, raw)
	}
	return r, nil
}

// do is send failing t on errors.
func do(t testing.TB, env *testenv.Env, timeout time.Duration, method string, hdr map[string]string, body []byte) *reply {
	t.Helper()
	r, err := send(env, timeout, method, hdr, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// headers returns the JSON POST headers carrying c.
func headers(c testenv.Creds) map[string]string {
	h := map[string]string{"Content-Type": "application/json"}
	if c.Authorization != "" {
		h["Authorization"] = c.Authorization
		h["service-network-id"] = c.NetworkID
	}
	return h
}

// post is gql for any goroutine: errors are returned.
func post(env *testenv.Env, timeout time.Duration, c testenv.Creds, query string, vars map[string]any) (*reply, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return send(env, timeout, http.MethodPost, headers(c), body)
}

// gql posts query with vars and creds.
func gql(t testing.TB, env *testenv.Env, timeout time.Duration, c testenv.Creds, query string, vars map[string]any) *reply {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return do(t, env, timeout, http.MethodPost, headers(c), body)
}

// field walks decoded JSON along a dotted path of object keys.
func field(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// decode unmarshals raw JSON into an any.
func decode(t testing.TB, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("data is not JSON: %v %s", err, raw)
	}
	return v
}
