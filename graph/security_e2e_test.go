package graph_test

import (
	"fmt"
	"github.com/workspacenet/facade/restclient"
	"log/slog"
	"strings"
	"testing"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restserver/hooks"
	"github.com/workspacenet/facade/stack"
)

// manyResources selects n resource root fields, each with its own id: n
// distinct upstream calls.
func manyResources(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " r%d: resource(id: \"00000000-0000-4000-8000-%012d\") { id }", i, i)
	}
	b.WriteString(" }")
	return b.String()
}

// After the upstream answered 401 to one call of a request, the request's
// other calls fail at once with the same error, unsent. The calls that can
// reach the upstream are those that had passed the call hooks before the
// first 401 came back; all of them were then in flight together, so there
// are at most the per-request concurrency (loaders.Config.MaxConcurrency),
// whatever the machine's speed. With 1, exactly one.
func TestFailedCredentialsDoNotAmplify(t *testing.T) {
	const fields = 20
	for _, conc := range []int{1, 4} {
		t.Run(fmt.Sprintf("concurrency %d", conc), func(t *testing.T) {
			env := testenv.New(t, testenv.Options{GraphOpts: func(o *graph.Options) { o.Loaders.MaxConcurrency = conc }})
			bad := testenv.Creds{Authorization: "Bearer garbage-" + strings.Repeat("x", 100), NetworkID: env.Manifest.NetworkID}
			r := run(t, env, bad, manyResources(fields), nil)
			if len(r.Errors) != fields {
				t.Fatalf("want %d errors, got %d: %+v", fields, len(r.Errors), r.Errors)
			}
			for _, e := range r.Errors {
				if e.Code() != "UNAUTHENTICATED" || e.Message != "the upstream service refused the credentials" {
					t.Errorf("%s: %s %q", e.PathString(), e.Code(), e.Message)
				}
			}
			m, n := env.Calls()
			if n < 1 || n > int64(conc) {
				t.Fatalf("%d upstream calls for one request with refused credentials, want 1..%d:\n%s", n, conc, testenv.FormatCalls(m))
			}
			if conc == 1 && n != 1 {
				t.Fatalf("%d upstream calls, want exactly 1", n)
			}
		})
	}
}

// Credential headers that cannot be right are refused before GraphQL: no
// upstream call, 400 BAD_REQUEST.
func TestCredentialHeadersRefused(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	good := env.Bearer()
	for _, c := range []struct {
		name  string
		creds testenv.Creds
	}{
		{"huge Authorization", testenv.Creds{Authorization: "Bearer " + strings.Repeat("A", 900<<10), NetworkID: good.NetworkID}},
		{"Authorization just above 4 KiB", testenv.Creds{Authorization: "Bearer " + strings.Repeat("A", 4<<10), NetworkID: good.NetworkID}},
		{"huge service-network-id", testenv.Creds{Authorization: good.Authorization, NetworkID: strings.Repeat("a", 5<<10)}},
		{"malformed service-network-id", testenv.Creds{Authorization: good.Authorization, NetworkID: "not-a-uuid"}},
		{"service-network-id with a trailing garbage", testenv.Creds{Authorization: good.Authorization, NetworkID: good.NetworkID + "x"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, env, c.creds, manyResources(3), nil)
			env.ExpectNoCalls(t)
			if r.Status != 400 || len(r.Errors) != 1 || r.Errors[0].Code() != "BAD_REQUEST" {
				t.Fatalf("status %d, errors %+v; want 400 BAD_REQUEST", r.Status, r.Errors)
			}
			if strings.Contains(r.Errors[0].Message, "AAAA") {
				t.Errorf("the refusal echoes the header: %.100s", r.Errors[0].Message)
			}
		})
	}
	t.Run("the good credentials pass", func(t *testing.T) {
		mustRun(t, env, good, `query($id: ID!) { resource(id: $id) { id } }`, map[string]any{"id": env.ID(t, "resource", 0)})
	})
}

// productionEnv starts the stack as -production does, logging to a buffer.
func productionEnv(t *testing.T) (*testenv.Env, *testenv.LogBuffer) {
	t.Helper()
	logs := &testenv.LogBuffer{}
	env := testenv.New(t, testenv.Options{
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Config: func(c *stack.Config) { c.Production = true },
	})
	return env, logs
}

// In production no validation error suggests a name of the schema.
func TestProductionSuggestsNoNames(t *testing.T) {
	env, _ := productionEnv(t)
	loc := env.ID(t, "location", 0)
	for _, c := range []struct{ name, query string }{
		{"field", `{ resourc(id: "` + loc + `") { id } }`},
		{"argument", `{ resource(idd: "` + loc + `") { id } }`},
		{"enum value", `{ transactions(locationId: "` + loc + `", status: SUCEEDED) { nodes { id } } }`},
		{"input field", `{ transactions(locationId: "` + loc + `", createDate: {gtee: "2024-01-01T00:00:00Z"}) { nodes { id } } }`},
		{"type", `query($s: TransactionStatuss) { transactions(locationId: "` + loc + `", status: $s) { nodes { id } } }`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, env, env.Bearer(), c.query, nil)
			env.ExpectNoCalls(t)
			if len(r.Errors) == 0 {
				t.Fatalf("no error for %s", c.query)
			}
			for _, e := range r.Errors {
				if e.Code() != "GRAPHQL_VALIDATION_FAILED" {
					t.Errorf("code %s: %q", e.Code(), e.Message)
				}
				if strings.Contains(e.Message, "Did you mean") || strings.Contains(e.Message, "SUCCEEDED") {
					t.Errorf("suggestion in production: %q", e.Message)
				}
			}
		})
	}
}

// In production an introspection probe is a coded client error, not an
// internal error, and logs no ERROR line.
func TestProductionIntrospectionIsClientError(t *testing.T) {
	env, logs := productionEnv(t)
	for _, q := range []string{`{ __schema { queryType { name } } }`, `{ __type(name: "Query") { name } }`, `{ t: __type(name: "Query") { name } __typename }`} {
		for _, c := range []testenv.Creds{{}, env.Bearer()} {
			r := run(t, env, c, q, nil)
			env.ExpectNoCalls(t)
			if len(r.Errors) != 1 || r.Errors[0].Code() != "INTROSPECTION_DISABLED" || r.Errors[0].Message != "introspection is disabled on this server" {
				t.Fatalf("%s: errors %+v; want one INTROSPECTION_DISABLED", q, r.Errors)
			}
		}
	}
	d := mustRun(t, env, testenv.Creds{}, `{ __typename }`, nil)
	if str(d, "__typename") != "Query" {
		t.Errorf("__typename: %v", d)
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("introspection probes logged errors:\n%s", logs.String())
	}
}

// A Bearer token sent with another network's service-network-id is a
// network mismatch, not a missing scope.
func TestNetworkMismatchIsNotMissingScope(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	mismatch := testenv.Creds{Authorization: env.Bearer().Authorization, NetworkID: env.Manifest.OtherNetworks[0].NetworkID}
	r := run(t, env, mismatch, `query($id: ID!) { resource(id: $id) { id } }`, map[string]any{"id": env.ID(t, "resource", 0)})
	e := expectErr(t, r, "FORBIDDEN")
	expectCalls(t, env, calls{restclient.OpGetResource: 1})
	if _, ok := e.Extensions["requiredScope"]; ok {
		t.Errorf("a network mismatch reported as a missing scope: %+v", e)
	}
	if !strings.Contains(e.Message, "do not belong to the network") || strings.Contains(e.Message, "scope") {
		t.Errorf("message %q", e.Message)
	}
	// A real missing scope still names it.
	r = run(t, env, env.ReadOnly(), `query($id: ID!) { product(id: $id) { id } }`, map[string]any{"id": env.ID(t, "product", 0)})
	if e := expectErr(t, r, "FORBIDDEN"); e.Extensions["requiredScope"] != "shop" {
		t.Errorf("missing scope: %+v", e)
	}
}

// createVisit and createPost accept Bearer only: Basic credentials are
// refused by the facade, unsent, saying Bearer is required.
func TestBearerOnlyMutationsWithBasic(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	loc := env.ID(t, "location", 0)
	for _, c := range []struct{ name, query string }{
		{"createVisit", `mutation($l: ID!) { createVisit(input: {date: "2030-04-01T09:00:00Z", locationRef: $l, visitor: {email: "ada@example.com", name: "Ada", surname: "Lovelace"}}) { visit { id } } }`},
		{"createPost", `mutation($l: ID!) { createPost(input: {locationRef: $l, text: "hi"}) { post { id } } }`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, env, env.Basic(), c.query, map[string]any{"l": loc})
			e := expectErr(t, r, "UNAUTHENTICATED")
			env.ExpectNoCalls(t)
			if !strings.Contains(e.Message, "Bearer authentication only") || strings.Contains(e.Message, "refused the credentials") {
				t.Errorf("message %q", e.Message)
			}
			if e.PathString() != c.name {
				t.Errorf("path %q", e.PathString())
			}
		})
	}
	// Basic still works where the API accepts it.
	mustRun(t, env, env.Basic(), `query($id: ID!) { resource(id: $id) { id } }`, map[string]any{"id": env.ID(t, "resource", 0)})
}

// A write whose request reached the upstream but whose answer was lost has
// an unknown outcome: OUTCOME_UNKNOWN, not "could not be reached".
func TestWriteWithLostAnswerIsOutcomeUnknown(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	loc := env.ID(t, "location", 0)
	for _, kind := range []hooks.FaultKind{hooks.FaultReset, hooks.FaultTruncated} {
		t.Run(string(kind), func(t *testing.T) {
			env.Hooks().ClearFaults()
			env.Hooks().SetFault(restclient.OpCreatePost.Pattern(), hooks.Fault{Kind: kind, Rate: 1})
			env.Hooks().SetFault(restclient.OpGetResource.Pattern(), hooks.Fault{Kind: kind, Rate: 1})
			r := run(t, env, env.Bearer(), `mutation($l: ID!) { createPost(input: {locationRef: $l, text: "lost"}) { post { id } } }`, map[string]any{"l": loc})
			e := expectErr(t, r, "OUTCOME_UNKNOWN")
			expectCalls(t, env, calls{restclient.OpCreatePost: 1})
			if strings.Contains(e.Message, "could not be reached") || !strings.Contains(e.Message, "may or may not have been applied") {
				t.Errorf("message %q", e.Message)
			}
			if up, _ := e.Extensions["upstream"].(map[string]any); up["method"] != "POST" || up["path"] != restclient.OpCreatePost.Route {
				t.Errorf("extensions.upstream = %v", e.Extensions["upstream"])
			}
			// A PUT too.
			env.Hooks().SetFault(restclient.OpUpdatePost.Pattern(), hooks.Fault{Kind: kind, Rate: 1})
			r = run(t, env, env.Bearer(), `mutation { updatePost(id: "00000000-0000-4000-8000-000000000001", input: {text: "lost"}) { post { id } } }`, nil)
			expectErr(t, r, "OUTCOME_UNKNOWN")
			expectCalls(t, env, calls{restclient.OpUpdatePost: 1})
			// A read that failed the same way is only unavailable: it can be repeated.
			r = run(t, env, env.Bearer(), `query($id: ID!) { resource(id: $id) { id } }`, map[string]any{"id": env.ID(t, "resource", 0)})
			expectErr(t, r, "UPSTREAM_UNAVAILABLE")
		})
	}
}
