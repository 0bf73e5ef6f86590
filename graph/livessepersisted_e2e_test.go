package graph_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/workspacenet/facade/testenv"
)

// TestLiveOverSSEByPersistedQuery: Apollo's persisted-query flow for a
// subscription over graphql-sse: the hash alone, unknown, gets
// PERSISTED_QUERY_NOT_FOUND; the hash with the query registers it and
// subscribes; the hash alone then subscribes too, by POST and by GET, each
// a subscription of the hub.
func TestLiveOverSSEByPersistedQuery(t *testing.T) {
	env := liveEnv(t, nil)
	visit := env.ID(t, "visit", 0)
	query := `subscription Watch($id: ID!) { visitEvents(id: $id) { kind node { id } } }`
	sum := sha256.Sum256([]byte(query))
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
	vars := map[string]any{"id": visit}
	send := func(ctx context.Context, req *http.Request) *http.Response {
		t.Helper()
		req = req.WithContext(ctx)
		req.Header = env.Bearer().Header()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	post := func(ctx context.Context, body map[string]any) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, env.FacadeURL, bytes.NewReader(mustJSON(body)))
		return send(ctx, req)
	}
	// subscribed checks that resp is an event stream the hub counts as one
	// more subscription, then ends it.
	subscribed := func(what string, resp *http.Response, cancel context.CancelFunc, n int) {
		t.Helper()
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("%s: HTTP %d %q %s", what, resp.StatusCode, ct, b)
		}
		testenv.WaitFor(t, what+": the subscription", func() bool { return env.Stack.Live.Stats().Subscriptions == n })
		cancel()
		resp.Body.Close()
		testenv.WaitFor(t, what+": no subscription", func() bool { return env.Stack.Live.Stats().Subscriptions == 0 })
	}

	unknown := post(context.Background(), map[string]any{"variables": vars, "extensions": ext})
	var all strings.Builder
	for sc := bufio.NewScanner(unknown.Body); sc.Scan(); {
		all.WriteString(sc.Text())
	}
	unknown.Body.Close()
	if !strings.Contains(all.String(), "PERSISTED_QUERY_NOT_FOUND") {
		t.Fatalf("an unknown hash: HTTP %d %s", unknown.StatusCode, all.String())
	}

	ctx, cancel := context.WithCancel(context.Background())
	subscribed("hash and query", post(ctx, map[string]any{"query": query, "variables": vars, "extensions": ext}), cancel, 1)

	ctx, cancel = context.WithCancel(context.Background())
	subscribed("hash alone by POST", post(ctx, map[string]any{"variables": vars, "extensions": ext}), cancel, 1)

	ctx, cancel = context.WithCancel(context.Background())
	v := url.Values{"variables": {string(mustJSON(vars))}, "extensions": {string(mustJSON(ext))}, "operationName": {"Watch"}}
	req, _ := http.NewRequest(http.MethodGet, env.FacadeURL+"?"+v.Encode(), nil)
	subscribed("hash alone by GET", send(ctx, req), cancel, 1)
}
