package graph_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

// padded returns query followed by a comment making it exactly n bytes.
func padded(query string, n int) string {
	return query + "\n#" + strings.Repeat("x", n-len(query)-2)
}

func persisted(query string) map[string]any {
	sum := sha256.Sum256([]byte(query))
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
}

// TestQueryTooLargeRefusedBeforeParsing: a query text one byte over
// -max-query-bytes (the bytes of a comment count) is refused 413
// QUERY_TOO_LARGE by POST, by GET and as a persisted-query registration,
// with no upstream call; one of exactly the limit runs.
func TestQueryTooLargeRefusedBeforeParsing(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	h := env.Bearer().Header()
	h.Set("GraphQL-Require-Preflight", "true") // a GET passes CSRF prevention
	max := graph.DefaultMaxQueryBytes
	const q = `{ __typename }`
	ctx := context.Background()
	for name, send := range map[string]func(gqlclient.Request) (*gqlclient.Response, error){
		"POST": func(r gqlclient.Request) (*gqlclient.Response, error) { return env.GraphQL.Post(ctx, r, h) },
		"GET":  func(r gqlclient.Request) (*gqlclient.Response, error) { return env.GraphQL.Get(ctx, r, h) },
	} {
		for _, apq := range []bool{false, true} {
			big := padded(q, max+1)
			req := gqlclient.Request{Query: big}
			if apq {
				req.Extensions = persisted(big)
			}
			env.ResetCalls()
			r, err := send(req)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != http.StatusRequestEntityTooLarge || len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != errcode.QueryTooLarge {
				t.Errorf("%s (APQ %v), %d bytes: %d %s", name, apq, len(big), r.Status, r.Raw)
			}
			env.ExpectNoCalls(t)
			if apq { // not registered
				if r, _ := send(gqlclient.Request{Extensions: persisted(big)}); len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != errcode.PersistedQueryNotFound {
					t.Errorf("%s: the refused query was registered: %s", name, r.Raw)
				}
			}
			fits := padded(q, max)
			req = gqlclient.Request{Query: fits}
			if apq {
				req.Extensions = persisted(fits)
			}
			if r, err := send(req); err != nil || r.Status != http.StatusOK || len(r.Errors) != 0 {
				t.Errorf("%s (APQ %v), %d bytes: %v %s", name, apq, len(fits), err, r.Raw)
			}
		}
	}
}

// TestPersistedQueriesKeepOnlyValidDocuments: a registration whose
// document fails to parse, to validate or a limit is answered with that
// error and not kept: its hash alone is then PERSISTED_QUERY_NOT_FOUND, not
// the document again.
func TestPersistedQueriesKeepOnlyValidDocuments(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	h := env.Bearer().Header()
	ctx := context.Background()
	for query, code := range map[string]string{
		`{ __typename ` + "# unclosed":                    errcode.ParseFailed,
		`{ noSuchField }`:                                 errcode.ValidationFailed,
		`{ ` + strings.Repeat("a: __typename ", 40) + `}`: errcode.QueryTooComplex,
	} {
		r, err := env.GraphQL.Post(ctx, gqlclient.Request{Query: query, Extensions: persisted(query)}, h)
		if err != nil || len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != code {
			t.Fatalf("registering %q: %v %s", query, err, r.Raw)
		}
		r, err = env.GraphQL.Post(ctx, gqlclient.Request{Extensions: persisted(query)}, h)
		if err != nil || len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != errcode.PersistedQueryNotFound {
			t.Errorf("%q was kept: by its hash alone the answer is %s", query, r.Raw)
		}
	}
	// A valid one is kept.
	const ok = `query Kept { __typename }`
	if r, err := env.GraphQL.Post(ctx, gqlclient.Request{Query: ok, Extensions: persisted(ok)}, h); err != nil || len(r.Errors) != 0 {
		t.Fatalf("registering: %v %s", err, r.Raw)
	}
	if r, err := env.GraphQL.Post(ctx, gqlclient.Request{Extensions: persisted(ok)}, h); err != nil || len(r.Errors) != 0 {
		t.Errorf("by hash: %v %s", err, r.Raw)
	}
}
