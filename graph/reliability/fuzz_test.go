package reliability_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/testenv"
)

// FuzzGraphQLRequest posts arbitrary bodies (raw, or as the query of a JSON
// request) to the facade in front of a real upstream. Whatever arrives, the
// answer is never a 5xx, always JSON, never a stack trace, and every error
// carries extensions.code. The seeds run as a normal test.
func FuzzGraphQLRequest(f *testing.F) {
	env := testenv.New(f, testenv.Options{GraphOpts: func(o *graph.Options) { o.RequestTimeout = 5 * time.Second }})
	res, loc := env.ID(f, "resource", 0), env.ID(f, "location", 0)
	for _, q := range []string{
		`{ resource(id: "` + res + `") { id title parent { id } } }`,
		`{ location(id: "` + loc + `") { transactions(first: 3) { nodes { id booking { resource { capacity } } } pageInfo { endCursor } } } }`,
		`query($id: ID!) { resource(id: $id) { id } }`,
		`mutation { createPost(input: {locationRef: "` + loc + `", text: "fuzz"}) { post { id } } }`,
		`mutation { createBooking(input: {resourceRef: "x", startDate: "2026-01-01T00:00:00Z", endDate: "2025-01-01T00:00:00Z"}) { booking { id } } }`,
		`{ transactions(locationId: "` + loc + `", first: 3, after: "bm90IGEgY3Vyc29y") { nodes { id } } }`,
		`{ __schema { queryType { name } } }`,
		`{ resource(id: "` + res + `") { ...A } } fragment A on Resource { ...A }`,
		`{ resource(id: "` + res + `") { id @include(if: true) @skip(if: false) } }`,
		`subscription { x }`,
		`{`,
		"",
	} {
		f.Add([]byte(q), true)
	}
	for _, b := range []string{
		`{"query": "{ __typename }", "variables": {"a": [1, {"b": null}]}}`,
		`{"query": "{ __typename }", "operationName": "nope"}`,
		`{"query": "query A { __typename } query B { __typename }"}`,
		`{"query": 1}`,
		`[{"query": "{ __typename }"}]`,
		`{"extensions": {"persistedQuery": {"version": 1, "sha256Hash": "00"}}}`,
		`{"query": "{ __typename }", "extensions": {"persistedQuery": {"version": 2, "sha256Hash": "x"}}}`,
		`{"documentId": "sha256:zz"}`,
		`null`, `"x"`, `{}`, "\xff\xfe", `{"query": "\u0000"}`,
	} {
		f.Add([]byte(b), false)
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	f.Cleanup(hc.CloseIdleConnections)
	bearer := env.Bearer()
	f.Fuzz(func(t *testing.T, in []byte, asQuery bool) {
		body := in
		if asQuery {
			body, _ = json.Marshal(map[string]any{"query": string(in), "variables": map[string]any{"id": res}})
		}
		req, _ := http.NewRequest(http.MethodPost, env.FacadeURL, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", bearer.Authorization)
		req.Header.Set("service-network-id", bearer.NetworkID)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("status %d: %.300s", resp.StatusCode, raw)
		}
		var out struct {
			Errors []testenv.Error `json:"errors"`
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("answer is not JSON (%d): %.300s", resp.StatusCode, raw)
		}
		for _, leak := range []string{"goroutine ", ".go:", "panic", "runtime."} {
			if strings.Contains(string(raw), leak) && !bytes.Contains(body, []byte(leak)) {
				t.Fatalf("answer holds %q: %.500s", leak, raw)
			}
		}
		for _, e := range out.Errors {
			if e.Code() == "" || e.Code() == "INTERNAL_SERVER_ERROR" {
				t.Fatalf("error without a proper code (%d): %+v", resp.StatusCode, e)
			}
		}
	})
}
