package restclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/workspacenet/facade/restserver/openapi/openapitest"
)

// TestOperationsTable checks the table against the OpenAPI document of the
// local REST service (restserver/openapi, written by hand from the spec and
// upstream-facts.md): the same operations, each with the scopes of its
// x-scopes, Basic refused where only the bearer scheme is allowed, the
// service-network-id header required where the document requires it, and
// the answer held under the row's Key.
func TestOperationsTable(t *testing.T) {
	doc, err := openapitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, d := range item.Operations() {
			pattern := method + " " + path
			if path == "/oauth2/token" {
				continue
			}
			documented[pattern] = true
			o, ok := LookupOperation(method, path)
			if !ok {
				t.Errorf("%s is documented but has no row in the table (operations.go)", pattern)
				continue
			}
			var scopes []string
			if raw, ok := d.Extensions["x-scopes"].([]any); ok {
				for _, s := range raw {
					scopes = append(scopes, fmt.Sprint(s))
				}
			}
			slices.Sort(scopes)
			if got := slices.Sorted(slices.Values(o.Scopes())); !slices.Equal(got, scopes) {
				t.Errorf("%s: the row permits scopes %q, the document's x-scopes %q", pattern, got, scopes)
			}
			if got := RequiredScope(o.Method, o.Route); got != o.RequiredScope() || !slices.Contains(scopes, got) {
				t.Errorf("%s: RequiredScope = %q, want one of %q", pattern, got, scopes)
			}
			bearerOnly := d.Security != nil && len(*d.Security) == 1 && (*d.Security)[0]["bearer"] != nil
			if o.BearerOnly != bearerOnly {
				t.Errorf("%s: BearerOnly %v, the document's security says %v", pattern, o.BearerOnly, bearerOnly)
			}
			requireNetwork := false
			for _, p := range d.Parameters {
				if p.Value.In == "header" && p.Value.Name == "service-network-id" {
					requireNetwork = p.Value.Required
				}
			}
			if o.RequireNetwork != requireNetwork {
				t.Errorf("%s: RequireNetwork %v, the document's service-network-id required %v", pattern, o.RequireNetwork, requireNetwork)
			}
			for code, r := range d.Responses.Map() {
				if !strings.HasPrefix(code, "2") {
					continue
				}
				if s := r.Value.Content.Get("application/json").Schema.Value; s.Properties[o.Key] == nil {
					t.Errorf("%s: the answer (%s) holds no %q (the row's Key)", pattern, code, o.Key)
				}
			}
			if got := lookup(method, path); got == nil || got.Pattern() != o.Pattern() || operations[got.Index()] != got {
				t.Errorf("LookupOperation(%s) = %+v, %v", pattern, o, ok)
			}
		}
	}
	for _, o := range Operations() {
		if !documented[o.Pattern()] {
			t.Errorf("%s has a row in the table but is not in the OpenAPI document", o.Pattern())
		}
	}
	if len(documented) == 0 {
		t.Fatal("the document has no operations")
	}
}

func TestRequiredScopeUnknown(t *testing.T) {
	for _, c := range [][2]string{
		{"DELETE", OpGetResource.Route},
		{"GET", "/resources/v1/0b7e4c1a-1111-4222-8333-944455556666"}, // a path, not a template
		{"get", OpGetResource.Route},
		{"GET", ""},
		{"", ""},
	} {
		if got := RequiredScope(c[0], c[1]); got != "" {
			t.Errorf("RequiredScope(%q, %q) = %q, want \"\"", c[0], c[1], got)
		}
		if _, ok := LookupOperation(c[0], c[1]); ok {
			t.Errorf("LookupOperation(%q, %q) found an operation", c[0], c[1])
		}
	}
}

func TestOperationsReturnsACopy(t *testing.T) {
	ops := Operations()
	ops[0].Scope = "changed"
	ops[0].Route = "/changed"
	if again := Operations(); again[0].Scope == "changed" || again[0].Route == "/changed" {
		t.Fatalf("changing the result of Operations changed the table: %+v", again[0])
	}
	if RequiredScope(http.MethodPost, OpListCreditNotes.Route) != "invoices" {
		t.Fatal("changing the result of Operations changed RequiredScope")
	}
}

// TestClientCallsEveryOperation calls every method of every service of the
// client (found by reflection: ids are an id, options and requests zero
// values, sequences read to their first item) against an upstream that
// answers 403 on every route of the table, and checks that the calls name
// exactly the table's operations: each error's method and route is an
// operation of the table, and every operation is called by some method.
func TestClientCallsEveryOperation(t *testing.T) {
	u := newUpstream(t)
	for _, o := range Operations() {
		u.handle(o.Pattern(), func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"message":"missing scope","type":"forbidden"}`)
		})
	}
	c := u.client()
	ctx := ctxT(t)
	const id = "0b7e4c1a-1111-4222-8333-944455556666"
	called := map[string][]string{} // pattern -> client methods
	cv := reflect.ValueOf(c).Elem()
	methods := 0
	for i := range cv.NumField() {
		svc := cv.Field(i)
		if !cv.Type().Field(i).IsExported() || svc.Kind() != reflect.Pointer || !strings.HasSuffix(svc.Type().Elem().Name(), "Service") {
			continue
		}
		for j := range svc.NumMethod() {
			m, name := svc.Method(j), svc.Type().Elem().Name()+"."+svc.Type().Method(j).Name
			methods++
			err := callWithZeroes(t, m, ctx, id)
			var er *ErrorResponse
			if !errors.As(err, &er) || er.StatusCode != http.StatusForbidden {
				t.Errorf("%s: err = %v, want a 403 *ErrorResponse", name, err)
				continue
			}
			o, ok := LookupOperation(er.Method, er.Route)
			if !ok {
				t.Errorf("%s called %s %s, which is not in the table", name, er.Method, er.Route)
				continue
			}
			called[o.Pattern()] = append(called[o.Pattern()], name)
		}
	}
	for _, o := range Operations() {
		if len(called[o.Pattern()]) == 0 {
			t.Errorf("no client method calls %s: add one to the area's service (calling it through its row)", o.Pattern())
		}
	}
	if methods < len(Operations()) {
		t.Fatalf("only %d client methods found", methods)
	}
}

// callWithZeroes calls m, a client method, with ctx, id for a string, a new
// zero value for a pointer, and returns its error; a method returning a
// sequence is read to its first item.
func callWithZeroes(t *testing.T, m reflect.Value, ctx context.Context, id string) error {
	t.Helper()
	in := make([]reflect.Value, m.Type().NumIn())
	for i := range in {
		switch pt := m.Type().In(i); {
		case pt == reflect.TypeFor[context.Context]():
			in[i] = reflect.ValueOf(ctx)
		case pt.Kind() == reflect.String:
			in[i] = reflect.ValueOf(id).Convert(pt)
		case pt.Kind() == reflect.Pointer:
			in[i] = reflect.New(pt.Elem())
		default:
			t.Fatalf("%v: cannot make an argument of type %v", m.Type(), pt)
		}
	}
	out := m.Call(in)
	last := out[len(out)-1]
	if last.Kind() == reflect.Func { // iter.Seq2[*T, error]
		var err error
		yield := reflect.MakeFunc(last.Type().In(0), func(args []reflect.Value) []reflect.Value {
			err, _ = args[1].Interface().(error)
			return []reflect.Value{reflect.ValueOf(false)}
		})
		last.Call([]reflect.Value{yield})
		return err
	}
	err, _ := last.Interface().(error)
	return err
}

// TestOperationTableIsComplete: each row of the table says all that the
// rest of the facade derives from it; the error names what a new row lacks.
func TestOperationTableIsComplete(t *testing.T) {
	gets := map[string]Operation{}
	for _, o := range Operations() {
		if o.Method == http.MethodGet {
			gets[o.Route] = o
		}
	}
	for _, o := range Operations() {
		switch {
		case o.Scope == "":
			t.Errorf("%s: no Scope (the API's scope family)", o.Pattern())
		case o.Method == http.MethodGet && o.CacheFamily == "":
			t.Errorf("%s: a GET without a CacheFamily (.cached(family, ttl, tags...))", o.Pattern())
		case o.Method != http.MethodGet && (o.CacheFamily != "" || o.CacheTTL != 0 || len(o.CacheTags) > 0):
			t.Errorf("%s: a write with cache settings", o.Pattern())
		case o.Method == http.MethodGet && (len(o.Stale) > 0 || o.NothingStale != ""):
			t.Errorf("%s: a GET makes nothing stale", o.Pattern())
		case o.Method != http.MethodGet && len(o.Stale) == 0 && o.NothingStale == "":
			t.Errorf("%s: a write that says neither what it makes stale (.stales) nor why nothing (.staleNothing)", o.Pattern())
		case len(o.Stale) > 0 && o.NothingStale != "":
			t.Errorf("%s: a write that makes entries stale and says nothing is", o.Pattern())
		}
		for _, s := range o.Stale {
			g, ok := gets[s.Route]
			if !ok {
				t.Errorf("%s: Stale route %s is not a GET of the table", o.Pattern(), s.Route)
				continue
			}
			if !strings.Contains(s.Route, "{"+s.Param+"}") && !slices.Contains(g.CacheTags, s.Param) {
				t.Errorf("%s: Stale param %q is neither a path parameter of %s nor one of its CacheTags %q", o.Pattern(), s.Param, s.Route, g.CacheTags)
			}
			if s.From == "" || s.From == "{id}" && !strings.Contains(o.Route, "{") {
				t.Errorf("%s: Stale %s %s: From %q names no value of the write", o.Pattern(), s.Route, s.Param, s.From)
			}
		}
	}
}

// TestEntriesFollowTheTable: a GET's entries are those of its path
// parameter and its CacheTags among the values, nothing for other filters;
// a write's are its Stale with values from its id or its answer.
func TestEntriesFollowTheTable(t *testing.T) {
	get := func(route string) Operation {
		o, ok := LookupOperation(http.MethodGet, route)
		if !ok {
			t.Fatalf("no GET %s", route)
		}
		return o
	}
	cases := []struct {
		op     Operation
		values map[string]string
		want   []Entry
	}{
		{get(OpGetResource.Route), map[string]string{"id": "r1"}, []Entry{{OpGetResource.Route, "id", "r1"}}},
		{get(OpGetProduct.Route), map[string]string{"productId": "p1", "id": "x"}, []Entry{{OpGetProduct.Route, "productId", "p1"}}},
		{get(OpListOrders.Route), map[string]string{"locationRef": "l1", "status": "new"}, []Entry{{OpListOrders.Route, "locationRef", "l1"}}},
		{get(OpListCreditNotes.Route), map[string]string{"invoiceRef": "i1", "locationRef": ""}, []Entry{{OpListCreditNotes.Route, "invoiceRef", "i1"}}},
		{get(OpListTransactions.Route), map[string]string{"status": "failed"}, nil},
	}
	for _, c := range cases {
		if got := c.op.Entries(c.values); !slices.Equal(got, c.want) {
			t.Errorf("%s.Entries(%v) = %v, want %v", c.op.Pattern(), c.values, got, c.want)
		}
	}
	i1, l1 := "i1", "l1"
	note := &CreditNote{InvoiceRef: &i1, LocationRef: &l1}
	want := []Entry{{OpListInvoiceItems.Route, "id", "i1"}, {OpListCreditNotes.Route, "invoiceRef", "i1"}, {OpListCreditNotes.Route, "locationRef", "l1"}}
	if got := StaleAfter(http.MethodPost, OpListCreditNotes.Route, "", note); !slices.Equal(got, want) {
		t.Errorf("StaleAfter(POST credit note) = %v, want %v", got, want)
	}
	if got := StaleAfter(http.MethodPut, OpGetVisit.Route, "v%201", nil); !slices.Equal(got, []Entry{{OpGetVisit.Route, "id", "v 1"}}) {
		t.Errorf("StaleAfter(PUT visit) = %v", got)
	}
	if got := StaleAfter(http.MethodPost, OpCreatePost.Route, "", nil); got != nil {
		t.Errorf("StaleAfter(POST post) = %v, want nothing", got)
	}
	if got := StaleAfter(http.MethodPost, OpCreateBooking.Route, "", &Booking{}); !slices.Equal(got, []Entry{{OpListTransactions.Route, "locationRef", AnyValue}}) {
		t.Errorf("StaleAfter(POST booking) = %v, want every transaction list", got)
	}
	if got := StaleAfter(http.MethodPost, OpCreateVisit.Route, "", &Visit{ID: "v1"}); !slices.Equal(got, []Entry{{OpGetVisit.Route, "id", "v1"}}) {
		t.Errorf("StaleAfter(POST visit) = %v", got)
	}
}
