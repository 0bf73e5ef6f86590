package restclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestOperationsTable checks the table against the scopes of the spec and of
// upstream-facts.md, one row per operation.
func TestOperationsTable(t *testing.T) {
	want := []struct {
		pattern        string
		requiredScope  string
		scopes         []string
		bearerOnly     bool
		requireNetwork bool
	}{
		{"POST /billing/credit_notes/v1", "invoices", []string{"invoices"}, false, false},
		{"GET /billing/credit_notes/v1", "invoices.readonly", []string{"invoices", "invoices.readonly"}, false, false},
		{"GET /billing/invoices/v1/{id}/items", "invoices.readonly", []string{"invoices", "invoices.readonly"}, false, false},
		{"POST /resources/bookings/v1", "resources", []string{"resources"}, false, false},
		{"GET /resources/v1/{id}", "resources.readonly", []string{"resources", "resources.readonly"}, false, false},
		{"POST /visitors/visits/v1", "visitors", []string{"visitors"}, true, false},
		{"GET /visitors/visits/v1/{id}", "visitors.readonly", []string{"visitors", "visitors.readonly"}, false, false},
		{"PUT /visitors/visits/v1/{id}", "visitors", []string{"visitors"}, false, false},
		{"POST /visitors/requests/v1", "visitors", []string{"visitors"}, false, false},
		{"POST /feed/posts/v1", "feed", []string{"feed"}, true, false},
		{"PUT /feed/posts/v1/{id}", "feed", []string{"feed"}, false, false},
		{"GET /feed/posts/v1/{id}/comments", "feed.readonly", []string{"feed", "feed.readonly"}, false, false},
		{"GET /transactions/money/v1", "transactions.readonly", []string{"transactions", "transactions.readonly"}, false, false},
		{"GET /shop/products/v1", "shop.readonly", []string{"shop", "shop.readonly"}, false, false},
		{"GET /shop/products/v1/{productId}", "shop", []string{"shop"}, false, false},
		{"GET /shop/orders/v1", "shop.readonly", []string{"shop", "shop.readonly"}, false, false},
		{"GET /discounts/redemptions/v1", "invoices.readonly", []string{"invoices", "invoices.readonly"}, false, false},
		{"GET /events/v1/{id}", "events", []string{"events"}, false, true},
	}
	ops := Operations()
	if len(ops) != len(want) {
		t.Fatalf("%d operations, want %d", len(ops), len(want))
	}
	for i, w := range want {
		o := ops[i]
		if o.Pattern() != w.pattern {
			t.Errorf("operation %d = %s, want %s", i, o.Pattern(), w.pattern)
			continue
		}
		if got := RequiredScope(o.Method, o.Route); got != w.requiredScope {
			t.Errorf("RequiredScope(%s) = %q, want %q", w.pattern, got, w.requiredScope)
		}
		if got := o.RequiredScope(); got != w.requiredScope {
			t.Errorf("%s: Operation.RequiredScope = %q, want %q", w.pattern, got, w.requiredScope)
		}
		if got := o.Scopes(); !slices.Equal(got, w.scopes) {
			t.Errorf("%s: Scopes = %q, want %q", w.pattern, got, w.scopes)
		}
		if o.BearerOnly != w.bearerOnly || o.RequireNetwork != w.requireNetwork {
			t.Errorf("%s: BearerOnly %v RequireNetwork %v, want %v %v", w.pattern, o.BearerOnly, o.RequireNetwork, w.bearerOnly, w.requireNetwork)
		}
		if got, ok := LookupOperation(o.Method, o.Route); !ok || !reflect.DeepEqual(got, o) {
			t.Errorf("LookupOperation(%s) = %+v, %v", w.pattern, got, ok)
		}
	}
}

func TestRequiredScopeUnknown(t *testing.T) {
	for _, c := range [][2]string{
		{"DELETE", "/resources/v1/{id}"},
		{"GET", "/resources/v1/0b7e4c1a-1111-4222-8333-944455556666"}, // a path, not a template
		{"get", "/resources/v1/{id}"},
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
	if RequiredScope(http.MethodPost, "/billing/credit_notes/v1") != "invoices" {
		t.Fatal("changing the result of Operations changed RequiredScope")
	}
}

// TestClientCallsEveryOperation calls every method of the client against an
// upstream that answers 403 on every route of the table, and checks that the
// calls name exactly the table's operations: each error's method and route
// is an operation of the table, and every operation is called.
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
	calls := map[string]func(context.Context) error{
		"CreateCreditNote": func(ctx context.Context) error {
			_, _, err := c.Billing.CreateCreditNote(ctx, &CreditNoteCreateRequest{})
			return err
		},
		"ListCreditNotes": func(ctx context.Context) error {
			_, _, err := c.Billing.ListCreditNotes(ctx, &CreditNoteListOptions{LocationRef: id})
			return err
		},
		"ListInvoiceItems": func(ctx context.Context) error { _, _, err := c.Billing.ListInvoiceItems(ctx, id); return err },
		"CreateBooking": func(ctx context.Context) error {
			_, _, err := c.Resources.CreateBooking(ctx, &BookingCreateRequest{})
			return err
		},
		"GetResource": func(ctx context.Context) error { _, _, err := c.Resources.GetResource(ctx, id); return err },
		"CreateVisit": func(ctx context.Context) error {
			_, _, err := c.Visitors.CreateVisit(ctx, &VisitCreateRequest{})
			return err
		},
		"GetVisit": func(ctx context.Context) error { _, _, err := c.Visitors.GetVisit(ctx, id); return err },
		"UpdateVisit": func(ctx context.Context) error {
			_, _, err := c.Visitors.UpdateVisit(ctx, id, &VisitUpdateRequest{})
			return err
		},
		"CreateVisitRequest": func(ctx context.Context) error {
			_, _, err := c.Visitors.CreateVisitRequest(ctx, &VisitRequestCreateRequest{})
			return err
		},
		"CreatePost": func(ctx context.Context) error {
			_, _, err := c.Feed.CreatePost(ctx, &PostCreateRequest{})
			return err
		},
		"UpdatePost": func(ctx context.Context) error {
			_, _, err := c.Feed.UpdatePost(ctx, id, &PostUpdateRequest{})
			return err
		},
		"ListComments": func(ctx context.Context) error { _, _, err := c.Feed.ListComments(ctx, id); return err },
		"ListTransactions": func(ctx context.Context) error {
			_, _, err := c.Transactions.ListTransactions(ctx, &TransactionListOptions{LocationRef: id})
			return err
		},
		"ListProducts": func(ctx context.Context) error {
			_, _, err := c.Shop.ListProducts(ctx, &ProductListOptions{LocationRef: id})
			return err
		},
		"GetProduct": func(ctx context.Context) error { _, _, err := c.Shop.GetProduct(ctx, id); return err },
		"ListOrders": func(ctx context.Context) error {
			_, _, err := c.Shop.ListOrders(ctx, &OrderListOptions{LocationRef: id})
			return err
		},
		"ListRedemptions": func(ctx context.Context) error {
			_, _, err := c.Discounts.ListRedemptions(ctx, &RedemptionListOptions{})
			return err
		},
		"GetEvent": func(ctx context.Context) error { _, _, err := c.Events.GetEvent(ctx, id); return err },
	}
	called := map[string]string{} // pattern -> client method
	for name, call := range calls {
		err := call(ctx)
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
		if prev, dup := called[o.Pattern()]; dup {
			t.Errorf("%s and %s both call %s", prev, name, o.Pattern())
		}
		called[o.Pattern()] = name
	}
	for _, o := range Operations() {
		if _, ok := called[o.Pattern()]; !ok {
			t.Errorf("no client method calls %s", o.Pattern())
		}
	}
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
		case o.Method == http.MethodGet && len(o.Stale) > 0:
			t.Errorf("%s: a GET makes nothing stale", o.Pattern())
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
		{get("/resources/v1/{id}"), map[string]string{"id": "r1"}, []Entry{{"/resources/v1/{id}", "id", "r1"}}},
		{get("/shop/products/v1/{productId}"), map[string]string{"productId": "p1", "id": "x"}, []Entry{{"/shop/products/v1/{productId}", "productId", "p1"}}},
		{get("/shop/orders/v1"), map[string]string{"locationRef": "l1", "status": "new"}, []Entry{{"/shop/orders/v1", "locationRef", "l1"}}},
		{get("/billing/credit_notes/v1"), map[string]string{"invoiceRef": "i1", "locationRef": ""}, []Entry{{"/billing/credit_notes/v1", "invoiceRef", "i1"}}},
		{get("/transactions/money/v1"), map[string]string{"status": "failed"}, nil},
	}
	for _, c := range cases {
		if got := c.op.Entries(c.values); !slices.Equal(got, c.want) {
			t.Errorf("%s.Entries(%v) = %v, want %v", c.op.Pattern(), c.values, got, c.want)
		}
	}
	i1, l1 := "i1", "l1"
	note := &CreditNote{InvoiceRef: &i1, LocationRef: &l1}
	want := []Entry{{"/billing/invoices/v1/{id}/items", "id", "i1"}, {"/billing/credit_notes/v1", "invoiceRef", "i1"}, {"/billing/credit_notes/v1", "locationRef", "l1"}}
	if got := StaleAfter(http.MethodPost, "/billing/credit_notes/v1", "", note); !slices.Equal(got, want) {
		t.Errorf("StaleAfter(POST credit note) = %v, want %v", got, want)
	}
	if got := StaleAfter(http.MethodPut, "/visitors/visits/v1/{id}", "v%201", nil); !slices.Equal(got, []Entry{{"/visitors/visits/v1/{id}", "id", "v 1"}}) {
		t.Errorf("StaleAfter(PUT visit) = %v", got)
	}
	if got := StaleAfter(http.MethodPost, "/feed/posts/v1", "", nil); got != nil {
		t.Errorf("StaleAfter(POST post) = %v, want nothing", got)
	}
}
