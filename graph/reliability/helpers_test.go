// Package reliability_test checks how the facade behaves when its upstream
// misbehaves (every injected fault kind, the circuit breaker, shared calls),
// when callers abuse it, and under concurrent load from two networks. Every
// test ends with no goroutine left behind.
package reliability_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

// noLeaks makes t fail if a goroutine started during the test outlives it.
// Call it before testenv.New: cleanups run last-in first-out, so the check
// runs after the env has shut down. restclient's idle flight goroutines
// (internal/base/workers), waiting for the next shared call for a while, are kept
// on purpose; one still running a call is not idle and counts.
func noLeaks(t *testing.T) {
	t.Helper()
	opts := []goleak.Option{goleak.IgnoreCurrent(), goleak.IgnoreTopFunction("github.com/workspacenet/facade/internal/base/workers.(*Pool).worker")}
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
}

// post sends query with vars and creds through the env's GraphQL client,
// giving up after timeout (the deadline under test plus a margin). It is safe
// to call from any goroutine; an answer that is not JSON is an error.
func post(env *testenv.Env, timeout time.Duration, c testenv.Creds, query string, vars map[string]any) (*testenv.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	r, err := env.GraphQL.Post(ctx, gqlclient.Request{Query: query, Variables: vars}, c.Header())
	return r, answerErr(err, timeout)
}

// gql is post failing t on errors.
func gql(t testing.TB, env *testenv.Env, timeout time.Duration, c testenv.Creds, query string, vars map[string]any) *testenv.Response {
	t.Helper()
	r, err := post(env, timeout, c, query, vars)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// postBody posts body as it is, as JSON with creds, failing t on errors.
func postBody(t testing.TB, env *testenv.Env, timeout time.Duration, c testenv.Creds, body []byte) *testenv.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	r, err := env.GraphQL.PostBody(ctx, "application/json", body, c.Header())
	if err = answerErr(err, timeout); err != nil {
		t.Fatal(err)
	}
	return r
}

// answerErr names a transport failure as the lack of an answer.
func answerErr(err error, timeout time.Duration) error {
	var nj *gqlclient.NotJSONError
	if err == nil || errors.As(err, &nj) {
		return err
	}
	return fmt.Errorf("POST /graphql: no answer within %v: %w", timeout, err)
}

// field walks decoded JSON along a dotted path of object keys.
func field(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// decode unmarshals raw JSON into an any.
func decode(t testing.TB, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("data is not JSON: %v %s", err, raw)
	}
	return v
}
