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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/workspacenet/facade/stack"
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

// TestLiveOverSSEByTrustedDocument: with -trusted-documents, a subscription
// over graphql-sse names its document by documentId or by its hash, and is
// a subscription of the hub either way; a query sent in full that is not
// registered is refused.
func TestLiveOverSSEByTrustedDocument(t *testing.T) {
	query := `subscription Watch($id: ID!) { visitEvents(id: $id) { kind node { id } } }`
	sum := sha256.Sum256([]byte(query))
	hash := hex.EncodeToString(sum[:])
	docs := filepath.Join(t.TempDir(), "docs.json")
	if err := os.WriteFile(docs, mustJSON(map[string]string{hash: query}), 0o600); err != nil {
		t.Fatal(err)
	}
	env := liveEnv(t, func(c *stack.Config) { c.TrustedDocs = docs })
	vars := map[string]any{"id": env.ID(t, "visit", 0)}
	for _, body := range []map[string]any{
		{"documentId": "sha256:" + hash, "variables": vars},
		{"variables": vars, "extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env.FacadeURL, bytes.NewReader(mustJSON(body)))
		req.Header = env.Bearer().Header()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("%v: HTTP %d %q %s", body, resp.StatusCode, ct, b)
		}
		testenv.WaitFor(t, "the subscription", func() bool { return env.Stack.Live.Stats().Subscriptions == 1 })
		cancel()
		resp.Body.Close()
		testenv.WaitFor(t, "no subscription", func() bool { return env.Stack.Live.Stats().Subscriptions == 0 })
	}
	other := env.Do(t, env.Bearer(), `subscription($id: ID!) { visitEvents(id: $id) { kind } }`, vars, nil)
	if len(other.Errors) == 0 || other.Errors[0].Extensions["code"] != "OPERATION_NOT_TRUSTED" {
		t.Fatalf("an unregistered subscription: %+v", other)
	}
}
