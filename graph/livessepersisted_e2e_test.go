package graph_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
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
	post := func(ctx context.Context, body map[string]any) *http.Response {
		return sseDo(t, ctx, env, env.Bearer(), body, nil, nil)
	}

	unknown := post(context.Background(), map[string]any{"variables": vars, "extensions": ext})
	all, _ := io.ReadAll(unknown.Body)
	unknown.Body.Close()
	if !strings.Contains(string(all), "PERSISTED_QUERY_NOT_FOUND") {
		t.Fatalf("an unknown hash: HTTP %d %s", unknown.StatusCode, all)
	}

	ctx, cancel := context.WithCancel(context.Background())
	subscribedOnce(t, env, "hash and query", post(ctx, map[string]any{"query": query, "variables": vars, "extensions": ext}), cancel)

	ctx, cancel = context.WithCancel(context.Background())
	subscribedOnce(t, env, "hash alone by POST", post(ctx, map[string]any{"variables": vars, "extensions": ext}), cancel)

	ctx, cancel = context.WithCancel(context.Background())
	v := url.Values{"variables": {string(mustJSON(vars))}, "extensions": {string(mustJSON(ext))}, "operationName": {"Watch"}}
	subscribedOnce(t, env, "hash alone by GET", sseDo(t, ctx, env, env.Bearer(), nil, v, nil), cancel)
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
		subscribedOnce(t, env, fmt.Sprint(body), sseDo(t, ctx, env, env.Bearer(), body, nil, nil), cancel)
	}
	other := env.Do(t, env.Bearer(), `subscription($id: ID!) { visitEvents(id: $id) { kind } }`, vars, nil)
	if len(other.Errors) == 0 || other.Errors[0].Extensions["code"] != "OPERATION_NOT_TRUSTED" {
		t.Fatalf("an unregistered subscription: %+v", other)
	}
}

// subscribedOnce checks that resp is an event stream the hub counts as its
// one subscription, then ends it (cancel, the request's) and waits until the
// hub has none.
func subscribedOnce(t *testing.T, env *testenv.Env, what string, resp *http.Response, cancel context.CancelFunc) {
	t.Helper()
	mustStream(t, what, resp)
	testenv.WaitFor(t, what+": the subscription", func() bool { return env.Stack.Live.Stats().Subscriptions == 1 })
	cancel()
	resp.Body.Close()
	testenv.WaitFor(t, what+": no subscription", func() bool { return env.Stack.Live.Stats().Subscriptions == 0 })
}
