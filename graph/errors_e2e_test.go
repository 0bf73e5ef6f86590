package graph_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver/hooks"
)

const unknownUUID = "00000000-0000-4000-8000-000000000000"

// allRootFields selects every Query field once.
const allRootFields = `query($id: ID!, $l: ID!) {
  resource(id: $id) { id }
  event(id: $id) { id }
  visit(id: $id) { id }
  product(id: $id) { id }
  products(locationId: $l) { id }
  invoice(id: $id) { id }
  creditNotes(locationId: $l) { nodes { id } }
  transactions(locationId: $l) { nodes { id } }
  orders(locationId: $l) { nodes { id } }
  redemptions(couponId: $id) { nodes { createDate } }
  postComments(postId: $id) { id }
  location(id: $l) { id }
}`

var rootFieldNames = []string{"resource", "event", "visit", "product", "products", "invoice", "creditNotes", "transactions", "orders", "redemptions", "postComments", "location"}

// noLeak asserts that no error of r carries a credential, a stack trace or an
// upstream body.
func noLeak(t *testing.T, env *testenv.Env, r *testenv.Response) {
	t.Helper()
	secrets := []string{env.Manifest.BearerToken, env.Manifest.ReadonlyBearerToken, env.Manifest.BasicAuth, "goroutine", ".go:", "injected fault", `"type":`, "panic"}
	for _, o := range env.Manifest.OtherNetworks {
		secrets = append(secrets, o.BearerToken)
	}
	for _, e := range r.Errors {
		text := fmt.Sprintf("%s %v", e.Message, e.Extensions)
		for _, s := range secrets {
			if s != "" && strings.Contains(text, s) {
				t.Errorf("error leaks %q: %s", s, text)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	env := testenv.New(t, testenv.Options{
		// Fast GET retries so injected 5xx cost no real waiting.
		ClientOpts: []restclient.Option{restclient.WithRetry(restclient.RetryPolicy{MaxRetries: 1, BaseDelay: time.Millisecond})},
	})
	creds := env.Bearer()
	loc := env.ID(t, "location", 0)

	t.Run("UNAUTHENTICATED/no credentials", func(t *testing.T) {
		r := run(t, env, testenv.Creds{}, allRootFields, map[string]any{"id": env.ID(t, "resource", 0), "l": loc})
		expectCalls(t, env, calls{})
		noLeak(t, env, r)
		if len(r.Errors) != len(rootFieldNames) {
			t.Fatalf("want %d errors, got %+v", len(rootFieldNames), r.Errors)
		}
		seen := map[string]bool{}
		for _, e := range r.Errors {
			if e.Code() != "UNAUTHENTICATED" {
				t.Errorf("%s: code %s", e.PathString(), e.Code())
			}
			seen[e.PathString()] = true
		}
		d := jsonTree(t, r.Data)
		for _, f := range rootFieldNames {
			if !seen[f] {
				t.Errorf("no error for %s", f)
			}
			if get(d, f) != nil {
				t.Errorf("%s answered without credentials: %v", f, get(d, f))
			}
		}
		r = run(t, env, testenv.Creds{}, createBookingMutation, map[string]any{"in": map[string]any{"resourceRef": env.ID(t, "resource", 0), "startDate": slotStart, "endDate": slotEnd}})
		expectErr(t, r, "UNAUTHENTICATED")
		expectCalls(t, env, calls{})
	})

	t.Run("introspection without credentials", func(t *testing.T) {
		d := mustRun(t, env, testenv.Creds{}, `{ __typename __schema { queryType { name } } }`, nil)
		expectCalls(t, env, calls{})
		if str(d, "__typename") != "Query" || str(d, "__schema.queryType.name") != "Query" {
			t.Fatalf("introspection: %s", pretty(d))
		}
	})

	t.Run("UNAUTHENTICATED/bad token", func(t *testing.T) {
		bad := testenv.Creds{Authorization: "Bearer not-a-real-token-123", NetworkID: env.Manifest.NetworkID}
		r := run(t, env, bad, `query($id: ID!) { resource(id: $id) { id } }`, map[string]any{"id": env.ID(t, "resource", 0)})
		e := expectErr(t, r, "UNAUTHENTICATED")
		expectCalls(t, env, calls{restclient.OpGetResource: 1})
		noLeak(t, env, r)
		if strings.Contains(e.Message, "not-a-real-token-123") || strings.Contains(fmt.Sprint(e.Extensions), "not-a-real-token-123") {
			t.Errorf("error echoes the token: %+v", e)
		}
		if up, _ := e.Extensions["upstream"].(map[string]any); up["status"] != float64(401) || up["path"] != restclient.OpGetResource.Route || up["method"] != "GET" {
			t.Errorf("extensions.upstream = %v", e.Extensions["upstream"])
		}
	})

	t.Run("FORBIDDEN", func(t *testing.T) {
		r := run(t, env, env.ReadOnly(), `query($id: ID!) { product(id: $id) { id } }`, map[string]any{"id": env.ID(t, "product", 0)})
		e := expectErr(t, r, "FORBIDDEN")
		expectCalls(t, env, calls{restclient.OpGetProduct: 1})
		noLeak(t, env, r)
		if e.Extensions["requiredScope"] != "shop" || e.PathString() != "product" {
			t.Errorf("FORBIDDEN error: %+v", e)
		}
		// The read-only shop scope is enough for the location's list.
		mustRun(t, env, env.ReadOnly(), `query($l: ID!) { products(locationId: $l) { id } }`, map[string]any{"l": loc})

		r = run(t, env, env.ReadOnly(), `mutation($in: CreateVisitInput!) { createVisit(input: $in) { visit { id } } }`,
			map[string]any{"in": map[string]any{"date": "2030-01-01T10:00:00Z", "locationRef": loc, "visitor": map[string]any{"email": "a@example.com", "name": "A"}}})
		e = expectErr(t, r, "FORBIDDEN")
		expectCalls(t, env, calls{restclient.OpCreateVisit: 1})
		if e.Extensions["requiredScope"] != "visitors" || e.PathString() != "createVisit" {
			t.Errorf("FORBIDDEN mutation error: %+v", e)
		}
	})

	t.Run("NOT_FOUND", func(t *testing.T) {
		r := run(t, env, creds, `query($id: ID!) { resource(id: $id) { id } }`, map[string]any{"id": unknownUUID})
		e := expectErr(t, r, "NOT_FOUND")
		expectCalls(t, env, calls{restclient.OpGetResource: 1})
		noLeak(t, env, r)
		if up, _ := e.Extensions["upstream"].(map[string]any); up["status"] != float64(404) || up["path"] != restclient.OpGetResource.Route {
			t.Errorf("extensions.upstream = %v", e.Extensions["upstream"])
		}
		if strings.Contains(e.Message, unknownUUID) && !strings.Contains(e.Message, "not found") {
			t.Errorf("message %q", e.Message)
		}
	})

	t.Run("BAD_USER_INPUT", func(t *testing.T) {
		cases := []struct {
			name, query, field string
			vars               map[string]any
		}{
			{"malformed uuid", `query { resource(id: "not-a-uuid") { id } }`, "id", nil},
			{"malformed locationId", `query { transactions(locationId: "123") { nodes { id } } }`, "locationId", nil},
			{"creditNotes without ids", `query { creditNotes { nodes { id } } }`, "invoiceId", nil},
			{"redemptions without ids", `query { redemptions { nodes { createDate } } }`, "couponId", nil},
			{"end before start", createBookingMutation, "input.endDate", map[string]any{"in": map[string]any{"resourceRef": env.ID(t, "resource", 0), "startDate": slotEnd, "endDate": slotStart}}},
			{"malformed cursor", `query($l: ID!) { transactions(locationId: $l, after: "bm90LWEtY3Vyc29y") { nodes { id } } }`, "after", map[string]any{"l": loc}},
			{"tampered cursor", `query($l: ID!, $a: String) { transactions(locationId: $l, after: $a) { nodes { id } } }`, "after", map[string]any{"l": loc, "a": "eyJzIjoiTTFTbENFaDIiLCJsIjo1LCJpIjo0fQ.7aTvaNq8"}},
			{"first 0", `query($l: ID!) { transactions(locationId: $l, first: 0) { nodes { id } } }`, "first", map[string]any{"l": loc}},
			{"first 501", `query($l: ID!) { orders(locationId: $l, first: 501) { nodes { id } } }`, "first", map[string]any{"l": loc}},
			{"createDate lte before gte", `query($l: ID!) { transactions(locationId: $l, createDate: {gte: "2025-12-01T00:00:00Z", lte: "2025-11-01T00:00:00Z"}) { nodes { id } } }`, "createDate", map[string]any{"l": loc}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := run(t, env, creds, c.query, c.vars)
				e := expectErr(t, r, "BAD_USER_INPUT")
				expectCalls(t, env, calls{})
				noLeak(t, env, r)
				if e.Extensions["field"] != c.field {
					t.Errorf("extensions.field = %v, want %s (%s)", e.Extensions["field"], c.field, e.Message)
				}
			})
		}
		// The upstream's own 400/422 is BAD_USER_INPUT too.
		r := run(t, env, creds, `mutation($in: CreateCreditNoteInput!) { createCreditNote(input: $in) { creditNote { id } } }`,
			map[string]any{"in": map[string]any{"invoiceRef": env.ID(t, "invoice", 0), "reason": "not-a-reason", "lines": []any{map[string]any{"invoiceItemRef": env.ID(t, "invoiceItem", 0)}}}})
		e := expectErr(t, r, "BAD_USER_INPUT")
		expectCalls(t, env, calls{restclient.OpCreateCreditNote: 1})
		if up, _ := e.Extensions["upstream"].(map[string]any); up["path"] != restclient.OpListCreditNotes.Route || up["method"] != "POST" {
			t.Errorf("extensions.upstream = %v", e.Extensions["upstream"])
		}
	})

	t.Run("CONFLICT", func(t *testing.T) {
		rc, ctx := env.REST(t, creds)
		var res *restclient.Resource
		for _, id := range env.Manifest.IDs["resource"] {
			r, _, err := rc.Resources.GetResource(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if r.Capacity != nil && *r.Capacity >= 2 && *r.Capacity <= 8 {
				res = r
				break
			}
		}
		if res == nil {
			t.Fatal("no resource of capacity 2..8")
		}
		in := map[string]any{"in": map[string]any{"resourceRef": res.ID, "startDate": "2030-06-04T09:00:00Z", "endDate": "2030-06-04T10:00:00Z"}}
		for i := 0; i < int(*res.Capacity); i++ {
			mustRun(t, env, creds, createBookingMutation, in)
		}
		r := run(t, env, creds, createBookingMutation, in)
		e := expectErr(t, r, "CONFLICT")
		expectCalls(t, env, calls{restclient.OpCreateBooking: 1})
		noLeak(t, env, r)
		if e.PathString() != "createBooking" || get(jsonTree(t, r.Data), "createBooking") != nil {
			t.Errorf("conflict: %+v %s", e, r.Data)
		}
	})

	t.Run("RATE_LIMITED", func(t *testing.T) {
		env.Hooks().SetFault(restclient.OpGetResource.Pattern(), hooks.Fault{Kind: hooks.Fault429, Rate: 1, RetryAfter: 30 * time.Second})
		defer env.Hooks().ClearFaults()
		r := run(t, env, creds, `query($id: ID!) { resource(id: $id) { id } }`, map[string]any{"id": env.ID(t, "resource", 0)})
		e := expectErr(t, r, "RATE_LIMITED")
		// A Retry-After longer than the client waits is not retried.
		expectCalls(t, env, calls{restclient.OpGetResource: 1})
		noLeak(t, env, r)
		if e.Extensions["retryAfter"] != float64(30) {
			t.Errorf("retryAfter = %v", e.Extensions["retryAfter"])
		}
	})

	t.Run("UPSTREAM_UNAVAILABLE on a nested relation", func(t *testing.T) {
		env.Hooks().SetFault(restclient.OpGetResource.Pattern(), hooks.Fault{Kind: hooks.Fault503, Rate: 1})
		defer env.Hooks().ClearFaults()
		q := `query($l: ID!) { transactions(locationId: $l, type: BOOKING, first: 10) { nodes { id amount booking { id resource { id capacity } } } } products(locationId: $l) { id } }`
		r := run(t, env, creds, q, map[string]any{"l": loc})
		noLeak(t, env, r)
		d := jsonTree(t, r.Data)
		nodes := list(d, "transactions.nodes")
		if len(nodes) != 10 || len(list(d, "products")) == 0 {
			t.Fatalf("partial data missing: %s", r.Data)
		}
		wantPaths := map[string]bool{}
		for i, n := range nodes {
			if str(n, "id") == "" || get(n, "amount") == nil || str(n, "booking.id") == "" {
				t.Errorf("node %d lost its own data: %v", i, n)
			}
			if get(n, "booking.resource") != nil {
				t.Errorf("node %d resource should be null: %v", i, n)
			}
			wantPaths[fmt.Sprintf("transactions.nodes.%d.booking.resource", i)] = true
		}
		if len(r.Errors) != len(wantPaths) {
			t.Fatalf("want %d errors, got %d: %+v", len(wantPaths), len(r.Errors), r.Errors)
		}
		for _, e := range r.Errors {
			if e.Code() != "UPSTREAM_UNAVAILABLE" || !wantPaths[e.PathString()] {
				t.Errorf("error %s at %s: %s", e.Code(), e.PathString(), e.Message)
			}
			if up, _ := e.Extensions["upstream"].(map[string]any); up["status"] != float64(503) || up["path"] != restclient.OpGetResource.Route {
				t.Errorf("extensions.upstream = %v", e.Extensions["upstream"])
			}
		}
		// One load per distinct resource, each tried twice (one retry).
		resources := map[string]bool{}
		tx, _, err := func() ([]*restclient.Transaction, *restclient.Response, error) {
			rc, ctx := env.REST(t, creds)
			return rc.Transactions.ListTransactions(ctx, &restclient.TransactionListOptions{LocationRef: loc, Type: restclient.TransactionTypeBooking, ListOptions: restclient.ListOptions{Limit: 10}})
		}()
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range tx {
			resources[x.Booking.Resource.ID] = true
		}
		counts, _ := env.Calls()
		if counts[restclient.OpGetResource.Pattern()] != int64(2*len(resources)) || counts[restclient.OpListTransactions.Pattern()] != 2 || counts[restclient.OpListProducts.Pattern()] != 1 {
			t.Errorf("calls (the REST check adds one transactions list):\n%s", testenv.FormatCalls(counts))
		}
	})
}
