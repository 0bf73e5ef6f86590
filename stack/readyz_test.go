package stack_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/redistest"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// readyz GETs u and returns its status code and JSON body.
func readyz(t *testing.T, u string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("GET %s: not JSON (%d): %.300s", u, resp.StatusCode, raw)
	}
	return resp.StatusCode, body
}

// TestReadyzDetailOnTheMetricsPortOnly: with Redis down, /readyz on the
// GraphQL port says only {"status": "ready"}; the same route on the
// metrics port says Redis is degraded and why (lastError), and that the
// upstream is reachable. With the upstream down too, both routes still
// answer 200 ready (readiness does not depend on the upstream: the replica
// stays in the Service), the metrics port's says the upstream is degraded
// and why, and a query gets the coded GraphQL error a client can act on,
// UPSTREAM_UNAVAILABLE on its field, instead of a connection error.
func TestReadyzDetailOnTheMetricsPortOnly(t *testing.T) {
	rs := redistest.StartOwn(t)
	up, err := stack.StartUpstream(t.Context(), stack.UpstreamConfig{DemoScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })
	cfg := stack.DefaultConfig()
	cfg.Upstream, cfg.RedisURL, cfg.MetricsAddr = up.URL, rs.URL, "127.0.0.1:0"
	cfg.RedisOpTimeout = 5 * time.Second
	st, base := testenv.Serve(t, cfg, slog.New(slog.DiscardHandler))
	private := strings.TrimSuffix(st.MetricsURL, "/metrics") + "/readyz"

	rs.Stop()
	m := up.Manifest
	c := &gqlclient.Client{URL: base + "/graphql", Header: gqlclient.Credentials("Bearer "+m.BearerToken, m.NetworkID)}
	query := gqlclient.Request{Query: `query($id: ID!) { resource(id: $id) { id } }`, Variables: map[string]any{"id": m.IDs["resource"][0]}}
	testenv.WaitFor(t, "the metrics port's /readyz to report Redis degraded with its error", func() bool {
		// A request uses Redis (its rate budget), which finds it down.
		if _, err := c.Post(t.Context(), query, nil); err != nil {
			t.Fatal(err)
		}
		code, body := readyz(t, private)
		r, _ := body["redis"].(map[string]any)
		e, _ := r["lastError"].(string)
		u, _ := body["upstream"].(map[string]any)
		return code == http.StatusOK && body["status"] == "ready" && r["healthy"] == false && e != "" && slices.Equal(anyStrings(body["degraded"]), []string{"redis"}) && u["reachable"] == true
	})
	code, body := readyz(t, base+"/readyz")
	if code != http.StatusOK || len(body) != 1 || body["status"] != "ready" {
		t.Errorf("public /readyz: %d %v, want 200 {\"status\": \"ready\"} and nothing else", code, body)
	}

	_ = up.Close() // the upstream stops answering
	code, body = readyz(t, base+"/readyz")
	if code != http.StatusOK || len(body) != 1 || body["status"] != "ready" {
		t.Errorf("public /readyz with the upstream down: %d %v, want 200 {\"status\": \"ready\"} and nothing else", code, body)
	}
	code, body = readyz(t, private)
	u, _ := body["upstream"].(map[string]any)
	if e, _ := u["error"].(string); code != http.StatusOK || body["status"] != "ready" || u["reachable"] != false || e == "" ||
		!slices.Equal(anyStrings(body["degraded"]), []string{"upstream", "redis"}) || body["redis"] == nil {
		t.Errorf("metrics port /readyz with the upstream down: %d %v, want 200 ready, degraded [upstream redis], why the upstream is, and Redis's state", code, body)
	}
	r, err := c.Post(t.Context(), query, nil)
	if err != nil {
		t.Fatalf("a query with the upstream down: %v, want a GraphQL answer", err)
	}
	if r.Status != http.StatusOK || len(r.Errors) != 1 || r.Errors[0].Code() != "UPSTREAM_UNAVAILABLE" {
		t.Errorf("a query with the upstream down: %d %s, want 200 with UPSTREAM_UNAVAILABLE", r.Status, r.Raw)
	}
}

func anyStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, s := range l {
		str, _ := s.(string)
		out = append(out, str)
	}
	return out
}
