package graph_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
)

// TestLiveOverSSEByGet: graphql-sse's distinct connections mode by GET
// (EventSource): query, variables, operationName and extensions in the
// query string, credentials in the headers; a visit's check-in arrives as a
// `next` event. Variables that are not JSON are refused 400, a mutation by
// GET is refused.
func TestLiveOverSSEByGet(t *testing.T) {
	env := liveEnv(t, nil)
	visit := env.ID(t, "visit", 0)
	query := `subscription Watch($id: ID!) { visitEvents(id: $id) { kind node { id checkInDate } } }`
	get := func(ctx context.Context, v url.Values) *http.Response {
		t.Helper()
		return sseDo(t, ctx, env, env.Bearer(), nil, v, nil)
	}

	bad := get(context.Background(), url.Values{"query": {query}, "variables": {"{not json"}})
	bad.Body.Close()
	if bad.StatusCode != http.StatusBadRequest {
		t.Fatalf("variables not JSON: HTTP %d", bad.StatusCode)
	}
	mut := get(context.Background(), url.Values{"query": {`mutation { __typename }`}})
	all, _ := io.ReadAll(mut.Body)
	mut.Body.Close()
	if mut.StatusCode < 400 || !strings.Contains(string(all), `"code"`) || strings.Contains(string(all), `"data":{`) {
		t.Fatalf("a mutation by GET: HTTP %d %s, want it refused", mut.StatusCode, all)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := get(ctx, url.Values{"query": {query}, "variables": {`{"id":"` + visit + `"}`}, "operationName": {"Watch"}, "extensions": {`{}`}})
	defer resp.Body.Close()
	mustStream(t, "a subscription by GET", resp)
	testenv.WaitFor(t, "the subscription", func() bool { return env.Stack.Live.Stats().Subscriptions == 1 })
	waitPolls(t, env, restclient.OpGetVisit.Route, 1)
	restChange(t, env, "/_test/visits/"+visit+"/set", map[string]any{"checkInDate": "2026-01-03T10:00:00Z"})
	events := sseEvents(resp)
	select {
	case e := <-events:
		want := `next {"data":{"visitEvents":{"kind":"UPDATED","node":{"id":"` + visit + `","checkInDate":"2026-01-03T10:00:00Z"}}}`
		if !strings.HasPrefix(e, want) {
			t.Fatalf("event %s\nwant %s", e, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no event")
	}
}
