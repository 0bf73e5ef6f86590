package hardening_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

// only fails t unless r holds exactly one error, of code.
func only(t *testing.T, r *testenv.Response, code string) testenv.Error {
	t.Helper()
	if len(r.Errors) != 1 || r.Errors[0].Code() != code {
		t.Fatalf("want one %s error, got %d %s", code, r.Status, r.Raw)
	}
	return r.Errors[0]
}

// answerTimeout is how long a test waits for an answer: a few seconds after
// any deadline under test.
const answerTimeout = 10 * time.Second

// answered fails t unless the request got a JSON answer.
func answered(t *testing.T, what string, r *testenv.Response, err error) *testenv.Response {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return r
}

// get sends req as a GET with hdr.
func get(t *testing.T, env *testenv.Env, req gqlclient.Request, hdr http.Header) *testenv.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), answerTimeout)
	defer cancel()
	r, err := env.GraphQL.Get(ctx, req, hdr)
	return answered(t, "GET /graphql", r, err)
}

// postBody posts body as it is with contentType ("" sends none) and hdr.
func postBody(t *testing.T, env *testenv.Env, contentType string, body []byte, hdr http.Header) *testenv.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), answerTimeout)
	defer cancel()
	r, err := env.GraphQL.PostBody(ctx, contentType, body, hdr)
	return answered(t, "POST /graphql", r, err)
}

// post posts req as JSON with creds and the extra headers.
func post(t *testing.T, env *testenv.Env, c testenv.Creds, req gqlclient.Request, extra http.Header) *testenv.Response {
	t.Helper()
	h := c.Header()
	for k, vs := range extra {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	ctx, cancel := context.WithTimeout(t.Context(), answerTimeout)
	defer cancel()
	r, err := env.GraphQL.Post(ctx, req, h)
	return answered(t, "POST /graphql", r, err)
}

func query(t *testing.T, env *testenv.Env, c testenv.Creds, q string, vars map[string]any) *testenv.Response {
	t.Helper()
	return post(t, env, c, gqlclient.Request{Query: q, Variables: vars}, nil)
}

// logLines returns the JSON log records of l whose msg is msg.
func logLines(t *testing.T, l *testenv.LogBuffer, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ln := range strings.Split(l.String(), "\n") {
		if ln == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(ln), &m); err != nil {
			t.Fatalf("log line is not JSON: %s", ln)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}
