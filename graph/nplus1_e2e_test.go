package graph_test

import (
	"testing"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/loaders/naive"
	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
)

// TestReadmeQueries guards the README's nested queries against N+1: the
// upstream calls are exactly the distinct things each query needs, counted
// from the data it returned. The naive loaders (no dedupe, no cache, no
// embedded first) are run too, and must need more calls.
func TestReadmeQueries(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	naiveEnv := testenv.New(t, testenv.Options{GraphOpts: func(o *graph.Options) { o.NewLoaders = naive.New }})
	creds := env.Bearer()
	rc, ctx := env.REST(t, creds)

	compare := func(t *testing.T, name, query string, vars map[string]any, want calls) {
		t.Helper()
		expectCalls(t, env, want)
		byRoute, got := env.Calls()
		r := run(t, naiveEnv, naiveEnv.Bearer(), query, vars)
		if len(r.Errors) > 0 {
			t.Fatalf("naive: %+v", r.Errors)
		}
		_, n := naiveEnv.Calls()
		if n <= got {
			t.Errorf("%s: naive loaders made %d calls, batched %d", name, n, got)
		}
		t.Logf("%s: %d upstream calls (naive loaders: %d)\n%s", name, got, n, testenv.FormatCalls(byRoute))
	}

	t.Run("first", func(t *testing.T) {
		var child string
		for _, id := range env.Manifest.IDs["resource"] {
			r, _, err := rc.Resources.GetResource(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if deref(r.ParentRef) != "" {
				child = id
				break
			}
		}
		vars := map[string]any{"id": child}
		d := mustRun(t, env, creds, queries.First, vars)
		if str(d, "resource.parent.id") == "" || str(d, "resource.location.id") == "" {
			t.Fatalf("first query: %s", pretty(d))
		}
		resources := distinct(d, "resource.id")
		for id := range distinct(d, "resource.parent.id") {
			resources[id] = true
		}
		expectCalls(t, env, calls{restclient.OpGetResource: int64(len(resources))})
		t.Logf("first query: %d upstream calls", len(resources))
		// The parent link of a resource without a parent is free.
		d = mustRun(t, env, creds, queries.First, map[string]any{"id": str(d, "resource.parent.id")})
		if get(d, "resource.parent") != nil {
			t.Fatalf("parent of a parent: %s", pretty(d))
		}
		expectCalls(t, env, calls{restclient.OpGetResource: 1})
	})

	t.Run("dashboard", func(t *testing.T) {
		vars := map[string]any{"locationId": env.ID(t, "location", 0)}
		d := mustRun(t, env, creds, queries.Dashboard, vars)
		l := get(d, "location")
		resources := distinct(l, "transactions.nodes.*.booking.resource.id")
		events := distinct(l, "transactions.nodes.*.ticket.event.id")
		invoices := distinct(l, "creditNotes.nodes.*.invoice.id")
		products := distinct(l, "orders.nodes.*.product.id")
		for id := range distinct(l, "transactions.nodes.*.order.product.id") {
			products[id] = true
		}
		if len(resources) < 2 || len(events) < 2 || len(invoices) < 2 || len(products) < 2 || len(list(l, "products")) == 0 {
			t.Fatalf("the dashboard should exercise every link: %d resources, %d events, %d invoices, %d products", len(resources), len(events), len(invoices), len(products))
		}
		// Every product an order or transaction shows is in the location's
		// list, so the one list call serves them all.
		listed := distinct(l, "products.*.id")
		for id := range products {
			if !listed[id] {
				t.Fatalf("product %s is not in the location's list", id)
			}
		}
		want := calls{restclient.OpListProducts: 1, restclient.OpListOrders: 1, restclient.OpListTransactions: 1, restclient.OpListCreditNotes: 1,
			restclient.OpGetResource: int64(len(resources)), restclient.OpGetEvent: int64(len(events)), restclient.OpListInvoiceItems: int64(len(invoices))}
		compare(t, "dashboard", queries.Dashboard, vars, want)
		// Loaded values are the REST service's.
		checkResources(t, rc, ctx, l, "transactions.nodes.*.booking.resource")
		checkEvents(t, rc, ctx, l, "transactions.nodes.*.ticket.event")
	})

	t.Run("invoice", func(t *testing.T) {
		// The invoice with the most distinct booking resources among those
		// with credit notes.
		best, bestN := "", 0
		for _, id := range env.Manifest.IDs["invoice"] {
			inv, _, err := rc.Billing.ListInvoiceItems(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, it := range inv.Items {
				if it.Booking != nil && it.Booking.Resource != nil {
					seen[it.Booking.Resource.ID] = true
				}
			}
			if len(seen) <= bestN {
				continue
			}
			cns, _, err := rc.Billing.ListCreditNotes(ctx, &restclient.CreditNoteListOptions{InvoiceRef: id, ListOptions: restclient.ListOptions{Limit: 1}})
			if err != nil {
				t.Fatal(err)
			}
			if len(cns) > 0 {
				best, bestN = id, len(seen)
			}
		}
		if best == "" {
			t.Fatal("no invoice with bookings and credit notes")
		}
		vars := map[string]any{"id": best}
		d := mustRun(t, env, creds, queries.Invoice, vars)
		inv := get(d, "invoice")
		resources := distinct(inv, "items.*.booking.resource.id")
		if len(resources) != bestN || len(list(inv, "creditNotes.nodes")) == 0 {
			t.Fatalf("invoice detail: %s", pretty(inv))
		}
		items := distinct(inv, "items.*.id")
		collect(inv, "creditNotes.nodes.*.lines.*.invoiceItem", func(it any) {
			if !items[str(it, "id")] {
				t.Errorf("credited item %s is not an item of the invoice", str(it, "id"))
			}
		})
		compare(t, "invoice", queries.Invoice, vars, calls{restclient.OpListInvoiceItems: 1, restclient.OpListCreditNotes: 1, restclient.OpGetResource: int64(len(resources))})
		checkResources(t, rc, ctx, inv, "items.*.booking.resource")
	})
}
