package graph_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
)

// calls is an expected upstream call count per operation (a row of
// restclient's table).
type calls map[restclient.Row]int64

// run resets the upstream counters, runs query with creds, and returns the
// response; the counters then hold exactly the calls made for it.
func run(t *testing.T, env *testenv.Env, c testenv.Creds, query string, vars map[string]any) *testenv.Response {
	t.Helper()
	env.ResetCalls()
	return env.Query(t, c, query, vars)
}

// mustRun is run that fails on any GraphQL error and decodes data as a
// generic JSON tree.
func mustRun(t *testing.T, env *testenv.Env, c testenv.Creds, query string, vars map[string]any) any {
	t.Helper()
	r := run(t, env, c, query, vars)
	var v any
	testenv.MustData(t, r, &v)
	return v
}

// expectCalls asserts the upstream counters hold exactly want, per route and
// in total.
func expectCalls(t *testing.T, env *testenv.Env, want calls) {
	t.Helper()
	got, total := env.Calls()
	var wantTotal int64
	for _, n := range want {
		wantTotal += n
	}
	ok := total == wantTotal && len(got) == countNonZero(want)
	w := map[string]int64{}
	for k, n := range want {
		w[k.Row().Pattern()] = n
		if n != 0 && got[k.Row().Pattern()] != n {
			ok = false
		}
	}
	if !ok {
		t.Fatalf("upstream calls: got %d\n%swant %d\n%s", total, testenv.FormatCalls(got), wantTotal, testenv.FormatCalls(w))
	}
}

// callsOf returns counts by pattern (Env.Calls) as calls.
func callsOf(t *testing.T, m map[string]int64) calls {
	t.Helper()
	out := calls{}
	for p, n := range m {
		method, route, _ := strings.Cut(p, " ")
		op, ok := restclient.LookupOperation(method, route)
		if !ok {
			t.Fatalf("%s is not an operation of the table", p)
		}
		out[&op] = n
	}
	return out
}

func countNonZero(m calls) int {
	n := 0
	for _, v := range m {
		if v != 0 {
			n++
		}
	}
	return n
}

// get walks a decoded JSON tree along a dotted path ("a.0.b"); nil when a
// step is missing.
func get(v any, path string) any {
	if path == "" {
		return v
	}
	for _, p := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// selected reports whether path is present (possibly null) in v.
func selected(v any, path string) bool {
	parts := strings.Split(path, ".")
	last := parts[len(parts)-1]
	parent := get(v, strings.Join(parts[:len(parts)-1], "."))
	if m, ok := parent.(map[string]any); ok {
		_, ok := m[last]
		return ok
	}
	if l, ok := parent.([]any); ok {
		i, err := strconv.Atoi(last)
		return err == nil && i >= 0 && i < len(l)
	}
	return false
}

func str(v any, path string) string {
	s, _ := get(v, path).(string)
	return s
}

func list(v any, path string) []any {
	l, _ := get(v, path).([]any)
	return l
}

// jsonTree converts any value to its generic JSON tree.
func jsonTree(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameFields asserts that each named field of the GraphQL object gql equals
// the same field of the REST object rest (compared as JSON values). Fields
// the query did not select (absent from gql) are skipped.
func sameFields(t *testing.T, what string, gql, rest any, fields ...string) {
	t.Helper()
	r := jsonTree(t, rest)
	if get(gql, "") == nil {
		t.Fatalf("%s: GraphQL object is null", what)
	}
	for _, f := range fields {
		if !selected(gql, f) {
			continue
		}
		g, w := get(gql, f), get(r, f)
		if !matches(g, w) {
			t.Errorf("%s.%s: GraphQL %v, REST %v", what, f, g, w)
		}
	}
}

// matches reports whether the GraphQL value g shows the REST value w: objects
// are compared on the fields the query selected (the keys of g), a GraphQL
// null matches an absent REST field, lists element by element.
func matches(g, w any) bool {
	switch gv := g.(type) {
	case nil:
		return w == nil
	case map[string]any:
		wv, ok := w.(map[string]any)
		if !ok {
			return false
		}
		for k, x := range gv {
			if !matches(x, wv[k]) {
				return false
			}
		}
		return true
	case []any:
		wv, ok := w.([]any)
		if !ok || len(wv) != len(gv) {
			return false
		}
		for i := range gv {
			if !matches(gv[i], wv[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(g, w)
}

// collect walks a decoded tree and calls fn for every object found at path
// segments (a "*" segment spans every element of a list).
func collect(v any, path string, fn func(any)) {
	parts := strings.Split(path, ".")
	var walk func(v any, i int)
	walk = func(v any, i int) {
		if v == nil {
			return
		}
		if i == len(parts) {
			fn(v)
			return
		}
		if parts[i] == "*" {
			for _, e := range asList(v) {
				walk(e, i+1)
			}
			return
		}
		walk(get(v, parts[i]), i+1)
	}
	walk(v, 0)
}

func asList(v any) []any { l, _ := v.([]any); return l }

// distinct returns the set of non-empty string values found at path.
func distinct(v any, path string) map[string]bool {
	out := map[string]bool{}
	collect(v, path, func(x any) {
		if s, ok := x.(string); ok && s != "" {
			out[s] = true
		}
	})
	return out
}

// expectErr asserts r has exactly one error, with code, and returns it.
func expectErr(t *testing.T, r *testenv.Response, code string) testenv.Error {
	t.Helper()
	if len(r.Errors) != 1 {
		t.Fatalf("want 1 error %s, got %d: %+v (data %s)", code, len(r.Errors), r.Errors, r.Data)
	}
	e := r.Errors[0]
	if e.Code() != code {
		t.Fatalf("want code %s, got %q: %+v", code, e.Code(), e)
	}
	return e
}

// pretty renders v for failure messages.
func pretty(v any) string {
	b, _ := json.MarshalIndent(v, "", " ")
	if len(b) > 3000 {
		b = append(b[:3000], "…"...)
	}
	return string(b)
}

// rewriteTransactionPages wraps the local REST service: its 200 answers to
// the transaction list are decoded, their "transactions" array given to edit,
// and sent re-encoded when edit reports a change (as they came otherwise).
func rewriteTransactionPages(next http.Handler, edit func(txs []any) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != restclient.OpListTransactions.Route {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var body map[string]any
		if rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &body) == nil {
			txs, _ := body["transactions"].([]any)
			if edit(txs) {
				b, _ := json.Marshal(body)
				rec.Body = bytes.NewBuffer(b)
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}
