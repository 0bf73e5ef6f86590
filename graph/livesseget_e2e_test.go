package graph_test

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/testenv"
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
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, env.FacadeURL+"?"+v.Encode(), nil)
		req.Header = env.Bearer().Header()
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	bad := get(context.Background(), url.Values{"query": {query}, "variables": {"{not json"}})
	bad.Body.Close()
	if bad.StatusCode != http.StatusBadRequest {
		t.Fatalf("variables not JSON: HTTP %d", bad.StatusCode)
	}
	mut := get(context.Background(), url.Values{"query": {`mutation { __typename }`}})
	sc := bufio.NewScanner(mut.Body)
	var all strings.Builder
	for sc.Scan() {
		all.WriteString(sc.Text() + "\n")
	}
	mut.Body.Close()
	if mut.StatusCode < 400 || !strings.Contains(all.String(), `"code"`) || strings.Contains(all.String(), `"data":{`) {
		t.Fatalf("a mutation by GET: HTTP %d %s, want it refused", mut.StatusCode, all.String())
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := get(ctx, url.Values{"query": {query}, "variables": {`{"id":"` + visit + `"}`}, "operationName": {"Watch"}, "extensions": {`{}`}})
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, ct)
	}
	testenv.WaitFor(t, "the subscription", func() bool { return env.Stack.Live.Stats().Subscriptions == 1 })
	waitPolls(t, env, "/visitors/visits/v1/{id}", 1)
	restChange(t, env, "/_test/visits/"+visit+"/set", map[string]any{"checkInDate": "2026-01-03T10:00:00Z"})
	events := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				events <- event + " " + strings.TrimPrefix(line, "data: ")
			}
		}
		close(events)
	}()
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
