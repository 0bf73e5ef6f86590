package restserver

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/workspacenet/facade/restclient"
)

// TestServedOperationsAreTheTable sends one request to every operation of
// restclient's table and checks that each reached its own route (counted
// under its pattern, refused for lack of credentials rather than unknown),
// and that the server counts no other operation.
func TestServedOperationsAreTheTable(t *testing.T) {
	ts := newTestServer(t)
	ts.Hooks().Reset()
	const id = "0b7e4c1a-1111-4222-8333-944455556666"
	var want []string
	for _, o := range restclient.Operations() {
		path := strings.NewReplacer("{id}", id, "{productId}", id).Replace(o.Route)
		r := ts.do(t, auth{}, o.Method, path, nil)
		r.wantError(t, http.StatusUnauthorized, "unauthorized", "")
		want = append(want, o.Pattern())
	}
	got := slices.Sorted(maps.Keys(ts.Hooks().Counts()))
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("served operations = %q,\nwant the table %q", got, want)
	}
	for p, n := range ts.Hooks().Counts() {
		if n != 1 {
			t.Errorf("%s counted %d requests, want 1", p, n)
		}
	}
}

// TestServerHandlesEveryOperation: the server's handlers are exactly the
// table's operations.
func TestServerHandlesEveryOperation(t *testing.T) {
	ts := newTestServer(t)
	routes, err := bindRoutes(restclient.Operations(), ts.handlers())
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != len(restclient.Operations()) {
		t.Fatalf("%d routes for %d operations", len(routes), len(restclient.Operations()))
	}
	for i, rt := range routes {
		if rt.op.Pattern() != restclient.Operations()[i].Pattern() || rt.handle == nil {
			t.Errorf("route %d = %s (handler %v), want %s", i, rt.op.Pattern(), rt.handle != nil, restclient.Operations()[i].Pattern())
		}
	}
}

func TestBindRoutesRefusesAMismatch(t *testing.T) {
	ops := restclient.Operations()
	h := func(*http.Request, *caller) (int, any, error) { return http.StatusOK, nil, nil }
	all := func() map[restclient.Row]handlerFunc {
		m := map[restclient.Row]handlerFunc{}
		for i := range ops {
			m[&ops[i]] = h
		}
		return m
	}
	if _, err := bindRoutes(ops, all()); err != nil {
		t.Fatalf("a handler for every operation: %v", err)
	}
	byRow := func(m map[restclient.Row]handlerFunc, op restclient.Row) restclient.Row {
		for k := range m {
			if k.Row().Pattern() == op.Row().Pattern() {
				return k
			}
		}
		t.Fatalf("no handler of %s", op.Row().Pattern())
		return nil
	}

	missing := all()
	delete(missing, byRow(missing, restclient.OpGetEvent))
	_, err := bindRoutes(ops, missing)
	if err == nil || !strings.Contains(err.Error(), "operations without a handler: "+restclient.OpGetEvent.Pattern()) {
		t.Errorf("missing handler: err = %v", err)
	}

	extra := all()
	extra[&restclient.Operation{Method: http.MethodDelete, Route: restclient.OpGetResource.Route}] = h
	_, err = bindRoutes(ops, extra)
	if err == nil || !strings.Contains(err.Error(), "handlers of no operation: DELETE "+restclient.OpGetResource.Route) {
		t.Errorf("extra handler: err = %v", err)
	}

	nilHandler := all()
	nilHandler[byRow(nilHandler, restclient.OpCreatePost)] = nil
	_, err = bindRoutes(ops, nilHandler)
	if err == nil || !strings.Contains(err.Error(), restclient.OpCreatePost.Pattern()) {
		t.Errorf("nil handler: err = %v", err)
	}
}
