package hardening_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testenv"
)

// reply is a raw HTTP answer of the facade.
type reply struct {
	status int
	header http.Header
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

// only fails t unless the reply holds exactly one error, of code.
func (r *reply) only(t *testing.T, code string) testenv.Error {
	t.Helper()
	if len(r.body.Errors) != 1 || r.body.Errors[0].Code() != code {
		t.Fatalf("want one %s error, got %d %s", code, r.status, r.raw)
	}
	return r.body.Errors[0]
}

// send makes one raw request to the facade with a client that gives up a
// few seconds after any deadline under test.
func send(t *testing.T, env *testenv.Env, method, target string, hdr map[string]string, body []byte) *reply {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := &reply{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		t.Fatalf("%s %s: answer is not JSON (%d): %.300s", method, target, resp.StatusCode, raw)
	}
	return r
}

// postJSON posts {"query", "variables", "extensions"...} as JSON with creds.
func postJSON(t *testing.T, env *testenv.Env, c testenv.Creds, req map[string]any, hdr map[string]string) *reply {
	t.Helper()
	body, _ := json.Marshal(req)
	h := map[string]string{"Content-Type": "application/json"}
	if c.Authorization != "" {
		h["Authorization"] = c.Authorization
		h["service-network-id"] = c.NetworkID
	}
	for k, v := range hdr {
		h[k] = v
	}
	return send(t, env, http.MethodPost, env.FacadeURL, h, body)
}

func query(t *testing.T, env *testenv.Env, c testenv.Creds, q string, vars map[string]any) *reply {
	t.Helper()
	return postJSON(t, env, c, map[string]any{"query": q, "variables": vars}, nil)
}

// logLines returns the JSON log records of l whose msg is msg.
func logLines(t *testing.T, l *testenv.LogBuffer, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ln := range strings.Split(l.String(), "\n") {
		if ln == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(ln), &m); err != nil {
			t.Fatalf("log line is not JSON: %s", ln)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}
