package reliability_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
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
	bearer := env.Bearer().Header()
	f.Fuzz(func(t *testing.T, in []byte, asQuery bool) {
		body := in
		if asQuery {
			body, _ = json.Marshal(gqlclient.Request{Query: string(in), Variables: map[string]any{"id": res}})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, err := env.GraphQL.PostBody(ctx, "application/json", body, bearer)
		var notJSON *gqlclient.NotJSONError
		if err != nil && !errors.As(err, &notJSON) {
			t.Fatalf("no answer: %v", err)
		}
		if r.Status >= 500 {
			t.Fatalf("status %d: %.300s", r.Status, r.Raw)
		}
		if err != nil {
			t.Fatal(err) // answer is not JSON
		}
		for _, leak := range []string{"goroutine ", ".go:", "panic", "runtime."} {
			if bytes.Contains(r.Raw, []byte(leak)) && !bytes.Contains(body, []byte(leak)) {
				t.Fatalf("answer holds %q: %.500s", leak, r.Raw)
			}
		}
		for _, e := range r.Errors {
			if e.Code() == "" || e.Code() == "INTERNAL_SERVER_ERROR" {
				t.Fatalf("error without a proper code (%d): %+v", r.Status, e)
			}
		}
	})
}
