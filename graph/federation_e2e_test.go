package graph_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/limits"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// entitiesQuery is what a router sends to resolve entities of the facade.
const entitiesQuery = `query Entities($representations: [_Any!]!) {
  _entities(representations: $representations) {
    __typename
    ... on Resource { id title }
    ... on Event { id title }
    ... on Visit { id }
    ... on Product { id title }
    ... on Invoice { id number }
    ... on Location { id }
  }
}`

// reps returns one representation of typename per id.
func reps(typename string, ids ...string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = map[string]any{"__typename": typename, "id": id}
	}
	return out
}

// entitiesOf runs entitiesQuery with representations and returns the
// response and the entities.
func entitiesOf(t *testing.T, env *testenv.Env, c testenv.Creds, representations []any, headers map[string]string) (*testenv.Response, []map[string]any) {
	t.Helper()
	env.ResetCalls()
	r := env.Do(t, c, entitiesQuery, map[string]any{"representations": representations}, headers)
	var data struct {
		Entities []map[string]any `json:"_entities"`
	}
	if len(r.Data) > 0 && string(r.Data) != "null" {
		if err := json.Unmarshal(r.Data, &data); err != nil {
			t.Fatalf("data: %v (%s)", err, r.Data)
		}
	}
	return r, data.Entities
}

// TestEntitiesAtTheMinimumCalls: 100 representations naming 7 distinct
// resources make 7 REST calls, as the links to them would; each answer sits
// at its representation's index. Every entity type is answered in one
// request: events, visits, products and invoices at one call per distinct
// id, locations with none.
func TestEntitiesAtTheMinimumCalls(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	var ids []string
	for i := range 100 {
		ids = append(ids, env.ID(t, "resource", (i*3)%7))
	}
	r, got := entitiesOf(t, env, env.Bearer(), reps("Resource", ids...), nil)
	if len(r.Errors) > 0 || len(got) != 100 {
		t.Fatalf("%d entities, errors %+v", len(got), r.Errors)
	}
	for i, e := range got {
		if e["__typename"] != "Resource" || e["id"] != ids[i] || e["title"] == nil {
			t.Fatalf("entity %d: %v, want resource %s", i, e, ids[i])
		}
	}
	expectCalls(t, env, calls{restclient.OpGetResource: 7})

	// The same resources as links: the same 7 calls.
	env.ResetCalls()
	var q strings.Builder
	q.WriteString("{")
	for i := range 7 {
		q.WriteString(" r" + string(rune('a'+i)) + `: resource(id: "` + env.ID(t, "resource", i) + `") { id title }`)
	}
	q.WriteString(" }")
	mustRun(t, env, env.Bearer(), q.String(), nil)
	expectCalls(t, env, calls{restclient.OpGetResource: 7})

	mixed := append(reps("Event", env.ID(t, "event", 0), env.ID(t, "event", 1), env.ID(t, "event", 0)),
		reps("Visit", env.ID(t, "visit", 0))...)
	mixed = append(mixed, reps("Product", env.ID(t, "product", 0), env.ID(t, "product", 0))...)
	mixed = append(mixed, reps("Invoice", env.ID(t, "invoice", 0))...)
	mixed = append(mixed, reps("Location", env.ID(t, "location", 0), env.ID(t, "location", 1))...)
	r, got = entitiesOf(t, env, env.Bearer(), mixed, nil)
	if len(r.Errors) > 0 || len(got) != len(mixed) {
		t.Fatalf("%d entities, errors %+v", len(got), r.Errors)
	}
	for i, e := range got {
		want := mixed[i].(map[string]any)
		if e["__typename"] != want["__typename"] || e["id"] != want["id"] {
			t.Errorf("entity %d: %v, want %v", i, e, want)
		}
	}
	expectCalls(t, env, calls{restclient.OpGetEvent: 2, restclient.OpGetVisit: 1, restclient.OpGetProduct: 1, restclient.OpListInvoiceItems: 1})
}

// TestEntitiesBadIDsAreNullAtTheirIndex: a representation whose id is not
// a uuid is null with BAD_USER_INPUT at its index, at no call; one whose id
// is unknown is null with NOT_FOUND at its index; one of a type this
// subgraph cannot resolve (resolvable: false) is null with BAD_USER_INPUT;
// the others are answered.
func TestEntitiesBadIDsAreNullAtTheirIndex(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	good := env.ID(t, "resource", 0)
	const unknown = "00000000-0000-4000-8000-000000000000"
	rs := reps("Resource", good, "not-a-uuid", unknown, good)
	rs = append(rs, reps("Location", "nope", env.ID(t, "location", 0))...)
	rs = append(rs, reps("Booking", env.ID(t, "booking", 0))...)
	r, got := entitiesOf(t, env, env.Bearer(), rs, nil)
	if len(got) != len(rs) {
		t.Fatalf("%d entities for %d representations: %s", len(got), len(rs), r.Raw)
	}
	wantErr := map[int]string{1: errcode.BadUserInput, 2: errcode.NotFound, 4: errcode.BadUserInput, 6: errcode.BadUserInput}
	for i, e := range got {
		if _, bad := wantErr[i]; bad != (e == nil) {
			t.Errorf("entity %d: %v", i, e)
		}
	}
	if len(r.Errors) != len(wantErr) {
		t.Fatalf("errors %+v, want %d", r.Errors, len(wantErr))
	}
	for _, e := range r.Errors {
		if len(e.Path) != 2 || e.Path[0] != "_entities" {
			t.Fatalf("error path %v: %+v", e.Path, e)
		}
		i := int(e.Path[1].(float64))
		if wantErr[i] != e.Code() {
			t.Errorf("error at %d: %s %q, want %s", i, e.Code(), e.Message, wantErr[i])
		}
	}
	expectCalls(t, env, calls{restclient.OpGetResource: 2}) // the good one once, the unknown one

	// Representations a router never sends (not an object, no id): an
	// error, no call, no crash.
	for _, bad := range []any{"x", map[string]any{"__typename": "Resource"}} {
		r, _ := entitiesOf(t, env, env.Bearer(), []any{bad}, nil)
		if r.Status != 200 || len(r.Errors) == 0 {
			t.Errorf("representation %v: status %d, %s", bad, r.Status, r.Raw)
		}
		env.ExpectNoCalls(t)
	}
}

// TestEntitiesNeedTheCallersCredentials: with server-to-server credentials
// configured, a request without credentials still gets `resource` (today's
// rule) but its `_entities` is UNAUTHENTICATED, unsent; `_service` needs
// none. -federation-server-credentials lets `_entities` use them.
func TestEntitiesNeedTheCallersCredentials(t *testing.T) {
	// The demo data is deterministic: a first env tells the demo bearer
	// credentials, which the envs under test then hold as their own.
	probe := testenv.New(t, testenv.Options{})
	server := &restclient.Credentials{Authorization: "Bearer " + probe.Manifest.BearerToken, NetworkID: probe.Manifest.NetworkID}
	for _, optIn := range []bool{false, true} {
		env2 := testenv.New(t, testenv.Options{
			ServerCreds: server,
			GraphOpts:   func(o *graph.Options) { o.FederationServerCredentials = optIn },
		})
		id := env2.ID(t, "resource", 0)
		mustRun(t, env2, testenv.Creds{}, `query($id: ID!) { resource(id: $id) { id } }`, map[string]any{"id": id})
		expectCalls(t, env2, calls{restclient.OpGetResource: 1})

		r, got := entitiesOf(t, env2, testenv.Creds{}, reps("Resource", id), nil)
		if optIn {
			if len(r.Errors) > 0 || len(got) != 1 || got[0]["id"] != id {
				t.Fatalf("opted in: %s", r.Raw)
			}
			expectCalls(t, env2, calls{restclient.OpGetResource: 1})
		} else {
			if len(r.Errors) != 1 || r.Errors[0].Code() != errcode.Unauthenticated || string(r.Data) != "null" {
				t.Fatalf("without the caller's credentials: %s", r.Raw)
			}
			env2.ExpectNoCalls(t)
		}
		// The caller's own credentials always work.
		if r, got := entitiesOf(t, env2, env2.Bearer(), reps("Resource", id), nil); len(r.Errors) > 0 || len(got) != 1 {
			t.Fatalf("with the caller's credentials: %s", r.Raw)
		}
		// `_service` needs no credentials at all.
		env2.ResetCalls()
		if r := env2.Query(t, testenv.Creds{}, `{ _service { sdl } }`, nil); len(r.Errors) > 0 {
			t.Fatalf("_service without credentials: %+v", r.Errors)
		}
		env2.ExpectNoCalls(t)
	}
}

// TestServiceSDLIsTheSchemaFile: `_service { sdl }` is schema.graphqls as
// committed, the file routers and composition are configured with
// (docs/federation.md; e2e's federation tests compose it).
func TestServiceSDLIsTheSchemaFile(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	var data struct {
		Service struct{ SDL string } `json:"_service"`
	}
	testenv.MustData(t, env.Query(t, testenv.Creds{}, `{ _service { sdl } }`, nil), &data)
	file, err := os.ReadFile("../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	if data.Service.SDL != string(file) {
		t.Fatalf("_service { sdl } (%d bytes) differs from schema.graphqls (%d bytes): regenerate (go generate ./...)", len(data.Service.SDL), len(file))
	}
	if !strings.Contains(data.Service.SDL, `@link(url: "https://specs.apollo.dev/federation/v2.3"`) {
		t.Error("the subgraph schema does not link Federation v2")
	}
}

// TestRouterSecret: with -production, `_service` and `_entities` are
// ROUTER_SECRET_REQUIRED (null, no call) for a request without the router's
// shared secret, and answered with it, while __schema stays refused; a
// ROUTER_SECRET set outside production is required as well; in the demo,
// without one, both are answered.
func TestRouterSecret(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef-router"
	for _, c := range []struct {
		name       string
		production bool
		secret     string
	}{
		{"production with a secret", true, secret},
		{"production without a secret", true, ""},
		{"demo with a secret", false, secret},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := testenv.New(t, testenv.Options{Config: func(cfg *stack.Config) {
				cfg.Production = c.production
				cfg.Graph.RouterSecret = c.secret
			}})
			rs := reps("Resource", env.ID(t, "resource", 0))
			for _, hdr := range []map[string]string{nil, {graph.DefaultRouterSecretHeader: "wrong"}} {
				r, _ := entitiesOf(t, env, env.Bearer(), rs, hdr)
				if len(r.Errors) != 1 || r.Errors[0].Code() != errcode.RouterSecretRequired {
					t.Fatalf("_entities, header %v: %s", hdr, r.Raw)
				}
				env.ExpectNoCalls(t)
				r = env.Do(t, env.Bearer(), `{ _service { sdl } }`, nil, hdr)
				if len(r.Errors) != 1 || r.Errors[0].Code() != errcode.RouterSecretRequired {
					t.Fatalf("_service, header %v: %s", hdr, r.Raw)
				}
			}
			if c.secret == "" {
				return
			}
			withSecret := map[string]string{graph.DefaultRouterSecretHeader: c.secret}
			r, got := entitiesOf(t, env, env.Bearer(), rs, withSecret)
			if len(r.Errors) > 0 || len(got) != 1 {
				t.Fatalf("_entities with the secret: %s", r.Raw)
			}
			expectCalls(t, env, calls{restclient.OpGetResource: 1})
			r = env.Do(t, testenv.Creds{}, `{ _service { sdl } }`, nil, withSecret)
			if len(r.Errors) > 0 || !strings.Contains(string(r.Data), "extend schema") {
				t.Fatalf("_service with the secret: %.300s", r.Raw)
			}
			if c.production {
				r = env.Do(t, env.Bearer(), `{ __schema { queryType { name } } }`, nil, withSecret)
				if len(r.Errors) != 1 || r.Errors[0].Code() != errcode.IntrospectionDisabled {
					t.Fatalf("__schema with the router's secret in production: %s", r.Raw)
				}
			}
		})
	}
	t.Run("demo without a secret", func(t *testing.T) {
		env := testenv.New(t, testenv.Options{})
		if r, got := entitiesOf(t, env, env.Bearer(), reps("Location", env.ID(t, "location", 0)), nil); len(r.Errors) > 0 || len(got) != 1 {
			t.Fatalf("%s", r.Raw)
		}
	})
}

// TestEntitiesUnderTheRequestsBounds: `_entities` is bounded and served like
// any query: more representations than -max-representations is
// QUERY_TOO_COMPLEX before any call; its cost counts every representation
// (-max-cost); the call cap leaves the representations beyond it null with
// REQUEST_LIMIT_EXCEEDED at their index; the response cache answers a
// repeated batch; extensions.upstream reports its calls.
func TestEntitiesUnderTheRequestsBounds(t *testing.T) {
	env := testenv.New(t, testenv.Options{Config: func(c *stack.Config) {
		c.Graph.Limits.MaxRepresentations = 20
		c.Graph.Limits.MaxCost = 50
		c.Graph.MaxUpstreamCalls = 3
		c.CacheTTL = "resources=30s"
	}})
	loc := env.ID(t, "location", 0)
	var many []string
	for range 21 {
		many = append(many, loc)
	}
	r, _ := entitiesOf(t, env, env.Bearer(), reps("Location", many...), nil)
	if len(r.Errors) != 1 || r.Errors[0].Code() != errcode.QueryTooComplex || r.Errors[0].Extensions["limit"] != limits.Representations ||
		r.Errors[0].Extensions["value"] != float64(21) || r.Errors[0].Extensions["maximum"] != float64(20) {
		t.Fatalf("21 representations: %s", r.Raw)
	}
	env.ExpectNoCalls(t)

	// 20 resources with their parent and location: 20 * (1 + 1 + 1) = 60 > 50.
	var ids []string
	for i := range 20 {
		ids = append(ids, env.ID(t, "resource", i))
	}
	env.ResetCalls()
	r = env.Query(t, env.Bearer(), `query($r: [_Any!]!) { _entities(representations: $r) { ... on Resource { id parent { id } location { id } } } }`,
		map[string]any{"r": reps("Resource", ids...)})
	if len(r.Errors) != 1 || r.Errors[0].Code() != errcode.QueryTooComplex || r.Errors[0].Extensions["limit"] != limits.Cost ||
		r.Errors[0].Extensions["value"] != float64(60) {
		t.Fatalf("cost of 20 resources with their parent and location: %s", r.Raw)
	}
	env.ExpectNoCalls(t)

	// 5 distinct resources under a cap of 3 calls.
	r, got := entitiesOf(t, env, env.Bearer(), reps("Resource", ids[:5]...), trace)
	answered, capped := 0, 0
	var fetched []string
	for _, e := range got {
		if e != nil {
			answered++
			fetched = append(fetched, e["id"].(string))
		}
	}
	for _, e := range r.Errors {
		if e.Code() == errcode.RequestLimitExceeded && len(e.Path) == 2 {
			capped++
		}
	}
	if len(got) != 5 || answered != 3 || capped != 2 || len(r.Errors) != 2 {
		t.Fatalf("5 resources under a cap of 3: %s", r.Raw)
	}
	expectCalls(t, env, calls{restclient.OpGetResource: 3})
	if count, _, _ := report(t, r); count != 3 {
		t.Errorf("extensions.upstream counts %d calls, want 3", count)
	}

	// The 3 fetched, again: the response cache answers them all.
	r, got = entitiesOf(t, env, env.Bearer(), reps("Resource", fetched...), trace)
	if len(r.Errors) > 0 || len(got) != 3 {
		t.Fatalf("cached: %s", r.Raw)
	}
	env.ExpectNoCalls(t)
	if count, hits, _ := report(t, r); count != 0 || hits != 3 {
		t.Errorf("extensions.upstream: %d calls, %d cache hits; want 0, 3", count, hits)
	}
}
