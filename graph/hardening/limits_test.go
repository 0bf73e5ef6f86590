package hardening_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/limits"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

func TestDefaultLimitsLetReadmeQueriesAndIntrospectionThrough(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	for i, rq := range testenv.DocQueries(t, "../..") {
		t.Run(fmt.Sprintf("documented query %d", i+1), func(t *testing.T) {
			r := query(t, env, env.Bearer(), rq.Query, rq.Vars)
			if r.Status != http.StatusOK || len(r.Errors) > 0 || string(r.Data) == "null" {
				t.Fatalf("%d %s", r.Status, r.Raw)
			}
		})
	}
	t.Run("GraphiQL introspection", func(t *testing.T) {
		r := query(t, env, testenv.Creds{}, testenv.IntrospectionQuery, nil)
		if r.Status != http.StatusOK || len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"queryType":{"name":"Query"}`) {
			t.Fatalf("%d %.500s", r.Status, r.Raw)
		}
	})
}

func TestLimitsRefuseBeforeAnyUpstreamCall(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	res := env.ID(t, "resource", 0)
	loc := env.ID(t, "location", 0)
	repeat := func(s string, n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(strings.ReplaceAll(s, "#", string(rune('a'+i%26))+strings.Repeat("x", i/26)))
		}
		return b.String()
	}
	deep := `{ resource(id: "` + res + `") { ` + strings.Repeat("parent { ", 12) + "id" + strings.Repeat(" }", 12) + " } }"
	cases := []struct {
		name, q, limit string
		value, max     int
	}{
		{"depth", deep, limits.Depth, 14, limits.DefaultMaxDepth},
		{"aliases", `{ location(id: "` + loc + `") { ` + repeat("#: id ", 31) + ` } }`, limits.Aliases, 31, limits.DefaultMaxAliases},
		{"root fields", `{ ` + repeat(`#: resource(id: "`+res+`") { id } `, 21) + ` }`, limits.RootFields, 21, limits.DefaultMaxRootFields},
		{"cost", `{ location(id: "` + loc + `") { transactions(first: 500) { nodes { invoice { creditNotes(first: 100) { nodes { id invoice { id } } } } } } } }`,
			// location 1 + transactions 1 + nodes 500 × (node 1 + invoice 1 + creditNotes 1 + nodes 100 × (node 1 + invoice 1))
			limits.Cost, 1 + 1 + 500*(1+1+1+100*(1+1)), limits.DefaultMaxCost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env.ResetCalls()
			r := query(t, env, env.Bearer(), tc.q, nil)
			e := only(t, r, errcode.QueryTooComplex)
			if e.Extensions["limit"] != tc.limit || e.Extensions["value"] != float64(tc.value) || e.Extensions["maximum"] != float64(tc.max) {
				t.Errorf("extensions = %v, want limit %s value %d maximum %d", e.Extensions, tc.limit, tc.value, tc.max)
			}
			if r.Status != http.StatusOK || r.Data != nil {
				t.Errorf("status %d data %s: want 200 (application/json) and no data entry", r.Status, r.Data)
			}
			env.ExpectNoCalls(t)
		})
	}
	t.Run("tokens", func(t *testing.T) {
		env.ResetCalls()
		// Two bytes a token: within -max-query-bytes.
		q := `{ resource(id: "` + res + `") { id } ` + strings.Repeat("a ", limits.DefaultMaxTokens) + "}"
		r := query(t, env, env.Bearer(), q, nil)
		e := only(t, r, errcode.QueryTooComplex)
		if e.Extensions["limit"] != limits.Tokens || e.Extensions["maximum"] != float64(limits.DefaultMaxTokens) {
			t.Errorf("extensions = %v", e.Extensions)
		}
		env.ExpectNoCalls(t)
	})
	t.Run("first from a variable", func(t *testing.T) {
		env.ResetCalls()
		q := `query($n: Int) { location(id: "` + loc + `") { transactions(first: $n) { nodes { invoice { creditNotes { nodes { id } } } } } } }`
		r := query(t, env, env.Bearer(), q, map[string]any{"n": 400})
		if e := only(t, r, errcode.QueryTooComplex); e.Extensions["limit"] != limits.Cost {
			t.Errorf("extensions = %v", e.Extensions)
		}
		env.ExpectNoCalls(t)
		// The same document with a small page passes.
		r = query(t, env, env.Bearer(), q, map[string]any{"n": 2})
		if len(r.Errors) > 0 {
			t.Fatalf("n=2: %s", r.Raw)
		}
	})
}

func TestLimitsAreConfigurable(t *testing.T) {
	env := testenv.New(t, testenv.Options{GraphOpts: func(o *graph.Options) {
		o.Limits.MaxDepth, o.Limits.MaxCost = 2, 0
	}})
	res := env.ID(t, "resource", 0)
	r := query(t, env, env.Bearer(), `{ resource(id: "`+res+`") { parent { id } } }`, nil)
	if e := only(t, r, errcode.QueryTooComplex); e.Extensions["limit"] != limits.Depth || e.Extensions["maximum"] != float64(2) {
		t.Fatalf("extensions = %v", e.Extensions)
	}
	r = query(t, env, env.Bearer(), `{ resource(id: "`+res+`") { id } }`, nil)
	if len(r.Errors) > 0 {
		t.Fatal(r.Raw)
	}
}

func TestUpstreamCallCap(t *testing.T) {
	env := testenv.New(t, testenv.Options{GraphOpts: func(o *graph.Options) { o.MaxUpstreamCalls = 2 }})
	loc := env.ID(t, "location", 0)
	env.ResetCalls()
	r := query(t, env, env.Bearer(), `{ location(id: "`+loc+`") {
		products { id }
		orders(first: 2) { nodes { id } }
		transactions(first: 2) { nodes { id } }
		creditNotes(first: 2) { nodes { id } } } }`, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("status %d", r.Status)
	}
	if len(r.Errors) != 2 {
		t.Fatalf("want 2 REQUEST_LIMIT_EXCEEDED errors (4 calls needed, cap 2): %s", r.Raw)
	}
	for _, e := range r.Errors {
		if e.Code() != "REQUEST_LIMIT_EXCEEDED" || e.Extensions["maximum"] != float64(2) || len(e.Path) != 2 {
			t.Errorf("error %+v", e)
		}
	}
	var d struct {
		Location map[string]json.RawMessage `json:"location"`
	}
	if err := json.Unmarshal(r.Data, &d); err != nil {
		t.Fatal(err)
	}
	filled := 0
	for _, v := range d.Location {
		if string(v) != "null" {
			filled++
		}
	}
	if filled != 2 {
		t.Errorf("%d fields have data, want 2 (the rest of the data still arrives): %s", filled, r.Data)
	}
	if _, n := env.Calls(); n != 2 {
		t.Errorf("upstream calls = %d, want the cap 2", n)
	}

	t.Run("mutations respect it", func(t *testing.T) {
		env.ResetCalls()
		in := map[string]any{"locationRef": loc, "text": "cap"}
		r := query(t, env, env.Bearer(), `mutation($in: CreatePostInput!) {
			a: createPost(input: $in) { post { id } }
			b: createPost(input: $in) { post { id } }
			c: createPost(input: $in) { post { id } } }`, map[string]any{"in": in})
		if got := r.Codes(); len(got) != 1 || got[0] != "REQUEST_LIMIT_EXCEEDED" || r.Errors[0].PathString() != "c" {
			t.Fatalf("errors: %s", r.Raw)
		}
		if _, n := env.Calls(); n != 2 {
			t.Errorf("upstream calls = %d, want 2", n)
		}
	})
}
