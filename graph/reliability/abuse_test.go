package reliability_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/limits"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

// TestAbuseIsRefusedWithoutUpstreamCalls sends what graph/hardening does
// not already cover at scale: floods of aliases, fields and directives, deep
// nesting, fragment cycles and fan-outs, hostile JSON, big batches. Each is
// refused with the expected code, with a small answer and zero upstream calls.
func TestAbuseIsRefusedWithoutUpstreamCalls(t *testing.T) {
	noLeaks(t)
	env := testenv.New(t, testenv.Options{})
	res := env.ID(t, "resource", 0)
	rep := strings.Repeat
	numbered := func(format string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, format, i)
		}
		return b.String()
	}
	// A fragment fan-out: F0 spreads F1 twice, ..., 2^20 fields expanded.
	var fanout strings.Builder
	fanout.WriteString(`{ resource(id: "` + res + `") { ...F0 } }`)
	for i := range 20 {
		fmt.Fprintf(&fanout, " fragment F%d on Resource { parent { ...F%d ...F%d } }", i, i+1, i+1)
	}
	fanout.WriteString(" fragment F20 on Resource { id }")

	queries := []struct {
		name, q, code, limit string
	}{
		{"2000 aliases", `{ resource(id: "` + res + `") { ` + numbered("a%d: id ", 2000) + `} }`, errcode.QueryTooComplex, limits.Selections},
		{"500 aliases", `{ resource(id: "` + res + `") { ` + numbered("a%d: id ", 500) + `} }`, errcode.QueryTooComplex, limits.Aliases},
		{"5000 copies of one field", `{ resource(id: "` + res + `") { ` + rep("id ", 5000) + `} }`, errcode.QueryTooComplex, limits.Selections},
		// Within -max-query-bytes (64 KiB): a longer text is refused before
		// the parser (graph/querysize_e2e_test.go).
		{"5900 root __typename", `{ ` + rep("__typename ", 5900) + `}`, errcode.QueryTooComplex, limits.Selections},
		{"3000 @include on one field", `{ resource(id: "` + res + `") { id ` + rep("@include(if:true)", 3000) + `} }`, errcode.QueryTooComplex, limits.Tokens},
		{"1000 @include on one field", `{ resource(id: "` + res + `") { id ` + rep("@include(if: true) ", 1000) + `} }`, errcode.QueryTooComplex, limits.Directives},
		{"7000 unknown directives", `{ resource(id: "` + res + `") { id ` + rep("@a ", 7000) + `} }`, errcode.QueryTooComplex, limits.Directives},
		{"one @skip on each of 1500 fields", `{ resource(id: "` + res + `") { ` + rep("id @skip(if: false) ", 1500) + `} }`, errcode.QueryTooComplex, limits.Selections},
		{"nesting 1000 deep", `{ resource(id: "` + res + `") { ` + rep("parent { ", 1000) + "id" + rep(" }", 1000) + " } }", "GRAPHQL_PARSE_FAILED", ""},
		{"nesting 100 deep", `{ resource(id: "` + res + `") { ` + rep("parent { ", 100) + "id" + rep(" }", 100) + " } }", errcode.QueryTooComplex, limits.Depth},
		{"fragment cycle", `{ resource(id: "` + res + `") { ...A } } fragment A on Resource { parent { ...B } } fragment B on Resource { parent { ...A } }`, "GRAPHQL_VALIDATION_FAILED", ""},
		{"fragment spreading itself", `{ resource(id: "` + res + `") { ...A } } fragment A on Resource { id ...A }`, "GRAPHQL_VALIDATION_FAILED", ""},
		{"fragment fan-out 2^20", fanout.String(), errcode.QueryTooComplex, ""},
	}
	for _, tc := range queries {
		t.Run(tc.name, func(t *testing.T) {
			env.ResetCalls()
			r := gql(t, env, 10*time.Second, env.Bearer(), tc.q, nil)
			if len(r.Errors) != 1 || r.Errors[0].Code() != tc.code {
				t.Fatalf("want one %s error, got %d errors (%d bytes): %.400s", tc.code, len(r.Errors), len(r.Raw), r.Raw)
			}
			if tc.limit != "" && r.Errors[0].Extensions["limit"] != tc.limit {
				t.Errorf("limit %v, want %s", r.Errors[0].Extensions["limit"], tc.limit)
			}
			if r.Status != http.StatusOK || r.Data != nil || len(r.Raw) > 2048 {
				t.Errorf("status %d, %d bytes", r.Status, len(r.Raw))
			}
			env.ExpectNoCalls(t)
		})
	}

	bodies := []struct {
		name, body, code string
		status           int
	}{
		{"variables nested 100000 deep", `{"query":"query($x: ID) { resource(id: $x) { id } }","variables":{"x":` + rep("[", 100000) + rep("]", 100000) + `}}`, "BAD_REQUEST", 400},
		{"objects nested 50000 deep", `{"query":"{ __typename }","variables":{"x":` + rep(`{"a":`, 50000) + "1" + rep("}", 50000) + `}}`, "BAD_REQUEST", 400},
		{"batch of 20000", "[" + strings.TrimSuffix(rep(`{"query":"{ resource(id: \"`+res+`\") { id } }"},`, 20000), ",") + "]", "BAD_REQUEST", 400},
		{"query of the wrong type", `{"query": {"a": 1}}`, "BAD_REQUEST", 400},
		{"variables of the wrong type", `{"query": "{ __typename }", "variables": [1]}`, "BAD_REQUEST", 400},
		{"operationName of the wrong type", `{"query": "{ __typename }", "operationName": 7}`, "BAD_REQUEST", 400},
		{"3 MB body", `{"query":"{ __typename }","variables":{"pad":"` + rep("x", 3<<20) + `"}}`, "REQUEST_TOO_LARGE", 413},
		{"no query", `{"variables":{}}`, "BAD_REQUEST", 400},
		{"JSON null", `null`, "BAD_REQUEST", 400},
	}
	for _, tc := range bodies {
		t.Run(tc.name, func(t *testing.T) {
			env.ResetCalls()
			r := postBody(t, env, 10*time.Second, env.Bearer(), []byte(tc.body))
			if r.Status != tc.status || len(r.Errors) != 1 || tc.code != "" && r.Errors[0].Code() != tc.code {
				t.Fatalf("want %d %s, got %d %.400s", tc.status, tc.code, r.Status, r.Raw)
			}
			env.ExpectNoCalls(t)
		})
	}
}

// TestIntrospectionOffAsInProduction: with the options -production sets,
// no form of introspection answers (plain, __type, hidden in a fragment or
// behind an alias), and none reaches the upstream. __typename still works.
func TestIntrospectionOffAsInProduction(t *testing.T) {
	noLeaks(t)
	env := testenv.New(t, testenv.Options{NoTrace: true, GraphOpts: func(o *graph.Options) {
		o.Introspection = false
		o.DisableSuggestions = true
		o.UpstreamTrace = false
	}})
	for name, q := range map[string]string{
		"__schema":           `{ __schema { types { name } } }`,
		"__type":             `{ __type(name: "Resource") { fields { name } } }`,
		"in a fragment":      `query { ...I } fragment I on Query { __schema { queryType { name } } }`,
		"aliased":            `{ s: __schema { queryType { name } } }`,
		"with a real field":  `{ resource(id: "` + env.ID(t, "resource", 0) + `") { id } __schema { queryType { name } } }`,
		"no credentials too": `{ __type(name: "Query") { name } }`,
	} {
		t.Run(name, func(t *testing.T) {
			env.ResetCalls()
			c := env.Bearer()
			if name == "no credentials too" {
				c = testenv.Creds{}
			}
			r := gql(t, env, 10*time.Second, c, q, nil)
			if len(r.Errors) == 0 || strings.Contains(string(r.Raw), `"queryType"`) || strings.Contains(string(r.Raw), `"fields"`) || strings.Contains(string(r.Raw), `"types"`) {
				t.Fatalf("introspection answered: %d %.400s", r.Status, r.Raw)
			}
			if name != "with a real field" { // the real field is still served
				env.ExpectNoCalls(t)
			}
		})
	}
	r := gql(t, env, 10*time.Second, env.Bearer(), `{ __typename }`, nil)
	if len(r.Errors) > 0 || !strings.Contains(string(r.Data), "Query") {
		t.Fatalf("__typename: %s", r.Raw)
	}
}

// TestMalformedScalarsAndProtocolErrorsAreCoded: what the fuzzer found. A
// DateTime literal that is not RFC 3339 is BAD_USER_INPUT on the argument
// (it was INTERNAL_SERVER_ERROR), with no upstream call; gqlgen's APQ errors
// carry a code (they had none).
func TestMalformedScalarsAndProtocolErrorsAreCoded(t *testing.T) {
	noLeaks(t)
	env := testenv.New(t, testenv.Options{})
	res := env.ID(t, "resource", 0)
	for _, date := range []string{"", "2", "tomorrow", "2026-13-01T00:00:00Z"} {
		env.ResetCalls()
		r := gql(t, env, 10*time.Second, env.Bearer(), `mutation { createBooking(input: {resourceRef: "`+res+`", startDate: "`+date+`", endDate: "2026-06-01T10:00:00Z"}) { booking { id } } }`, nil)
		if len(r.Errors) != 1 || r.Errors[0].Code() != "BAD_USER_INPUT" {
			t.Errorf("startDate %q: %s", date, r.Raw)
		}
		env.ExpectNoCalls(t)
	}
	env.ResetCalls()
	r := gql(t, env, 10*time.Second, env.Bearer(), `mutation($d: DateTime!) { createBooking(input: {resourceRef: "`+res+`", startDate: $d, endDate: "2026-06-01T10:00:00Z"}) { booking { id } } }`, map[string]any{"d": "x"})
	if len(r.Errors) != 1 || r.Errors[0].Code() == "" || r.Errors[0].Code() == "INTERNAL_SERVER_ERROR" {
		t.Errorf("DateTime variable: %s", r.Raw)
	}
	env.ExpectNoCalls(t)
	for _, ext := range []string{`{"persistedQuery": {"version": 2, "sha256Hash": "x"}}`, `{"persistedQuery": {"version": 1, "sha256Hash": "00"}}`} {
		r := postBody(t, env, 10*time.Second, env.Bearer(), []byte(`{"query": "{ __typename }", "extensions": `+ext+`}`))
		if len(r.Errors) != 1 || r.Errors[0].Code() == "" {
			t.Errorf("APQ %s: %s", ext, r.Raw)
		}
	}
}
