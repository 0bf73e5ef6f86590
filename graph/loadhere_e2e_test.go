package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

// TestLoneKeyPathMatchesLoad: a key missing from a loader's cache, with no
// batch window, is fetched on the loading goroutine (loaders' loadHere);
// the dataloader's Load (loaders.Config.ThroughLoad) is its oracle. Both
// answer every query with the same data and errors at the same upstream
// calls, route by route: a resource with its parent, the same resource
// asked twice at once (one call), a missing one (NOT_FOUND), a location's
// orders with their products, and the dashboard.
func TestLoneKeyPathMatchesLoad(t *testing.T) {
	here := testenv.New(t, testenv.Options{})
	oracle := testenv.New(t, testenv.Options{GraphOpts: func(o *graph.Options) { o.Loaders.ThroughLoad = true }})
	resource := here.ID(t, "resource", 0)
	location := here.ID(t, "location", 0)
	cases := []struct {
		name, query string
		vars        map[string]any
		errors      bool
	}{
		{"first", queries.First, map[string]any{"id": resource}, false},
		{"twice", `query($id: ID!) { a: resource(id: $id) { id title } b: resource(id: $id) { id capacity parent { id } } }`, map[string]any{"id": resource}, false},
		{"missing", `query($id: ID!) { resource(id: $id) { id title } other: resource(id: "` + resource + `") { id } }`, map[string]any{"id": "00000000-0000-4000-8000-000000000000"}, true},
		{"orders", `query($l: ID!) { orders(locationId: $l, first: 25) { nodes { id number status product { id title description options { id title } } } } }`, map[string]any{"l": location}, false},
		{"dashboard", queries.Dashboard, map[string]any{"locationId": location}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, gotCalls := answer(t, here, c.query, c.vars)
			want, wantCalls := answer(t, oracle, c.query, c.vars)
			if got != want {
				t.Errorf("answer\n%.2000s\nthrough Load\n%.2000s", got, want)
			}
			if !reflect.DeepEqual(gotCalls, wantCalls) {
				t.Errorf("upstream calls\n%sthrough Load\n%s", testenv.FormatCalls(gotCalls), testenv.FormatCalls(wantCalls))
			}
			if hasErrors := bytes.Contains([]byte(got), []byte(`"errors"`)); hasErrors != c.errors {
				t.Errorf("errors in the answer: %v, want %v:\n%s", hasErrors, c.errors, got)
			}
			if len(gotCalls) == 0 {
				t.Error("no upstream call")
			}
		})
	}
}

// answer runs query on env and returns its data and errors (message, path,
// code) as JSON, and the upstream calls it made by route.
func answer(t *testing.T, env *testenv.Env, query string, vars map[string]any) (string, map[string]int64) {
	t.Helper()
	r := run(t, env, env.Bearer(), query, vars)
	type gqlError struct {
		Message string
		Path    []any
		Code    any
	}
	var data any
	if err := json.Unmarshal(r.Data, &data); err != nil {
		t.Fatal(err)
	}
	out := struct {
		Data   any
		Errors []gqlError `json:"errors,omitempty"`
	}{Data: withoutCursors(data)}
	for _, e := range r.Errors {
		out.Errors = append(out.Errors, gqlError{e.Message, e.Path, e.Extensions["code"]})
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	calls, _ := env.Calls()
	return fmt.Sprintf("%s", b), calls
}
