package stack_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// TestDrainReportsUnreadyAndClosesConnections: once Drain is called (the
// program does on SIGTERM with -shutdown-delay), /readyz answers 503
// {"status": "draining"} on both ports, /healthz stays 200, and GraphQL
// requests are still answered, each with "Connection: close".
func TestDrainReportsUnreadyAndClosesConnections(t *testing.T) {
	up, err := stack.StartUpstream(t.Context(), stack.UpstreamConfig{DemoScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })
	cfg := stack.DefaultConfig()
	cfg.Upstream, cfg.MetricsAddr = up.URL, "127.0.0.1:0"
	st, base := testenv.Serve(t, cfg, slog.New(slog.DiscardHandler))
	private := strings.TrimSuffix(st.MetricsURL, "/metrics") + "/readyz"
	m := up.Manifest
	c := &gqlclient.Client{URL: base + "/graphql", Header: gqlclient.Credentials("Bearer "+m.BearerToken, m.NetworkID)}
	q := gqlclient.Request{Query: `query($id: ID!) { resource(id: $id) { id } }`, Variables: map[string]any{"id": m.IDs["resource"][0]}}

	r, err := c.Post(t.Context(), q, nil)
	if err != nil || len(r.Errors) > 0 {
		t.Fatalf("before the drain: %v %+v", err, r)
	}
	st.Drain()
	for _, u := range []string{base + "/readyz", private} {
		if code, body := readyz(t, u); code != http.StatusServiceUnavailable || len(body) != 1 || body["status"] != "draining" {
			t.Errorf("%s while draining: %d %v, want 503 {\"status\": \"draining\"}", u, code, body)
		}
	}
	if code, body := readyz(t, base+"/healthz"); code != http.StatusOK || body["status"] != "ok" {
		t.Errorf("/healthz while draining: %d %v, want 200 ok", code, body)
	}
	// (The client takes "Connection: close" out of the header into
	// Response.Close.)
	var closed bool
	c.HTTP = &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err == nil {
			closed = resp.Close
		}
		return resp, err
	})}
	r, err = c.Post(t.Context(), q, nil)
	if err != nil || len(r.Errors) > 0 || !strings.Contains(string(r.Data), m.IDs["resource"][0]) {
		t.Fatalf("a request while draining: %v %+v", err, r)
	}
	if !closed {
		t.Error("a response while draining does not close its connection")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
