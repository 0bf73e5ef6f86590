package graph_test

import (
	"context"
	"strings"
	"testing"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
)

// TestLinks covers every relation of graph.md's Links table with an exact
// upstream call count: embedded summaries cost nothing, one more field costs
// one call per distinct id, lists are preferred over single gets.
func TestLinks(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	creds := env.Bearer()
	rc, ctx := env.REST(t, creds)
	loc0, loc1 := env.ID(t, "location", 0), env.ID(t, "location", 1)

	t.Run("Booking.resource", func(t *testing.T) {
		res := env.ID(t, "resource", 2)
		want, _, err := rc.Resources.GetResource(ctx, res)
		if err != nil {
			t.Fatal(err)
		}
		d := mustRun(t, env, creds, `mutation($in: CreateBookingInput!) { createBooking(input: $in) { booking { resourceRef resource { id title capacity bookingStepMinutes } } } }`,
			map[string]any{"in": map[string]any{"resourceRef": res, "startDate": slotStart, "endDate": slotEnd}})
		expectCalls(t, env, calls{restclient.OpCreateBooking: 1, restclient.OpGetResource: 1})
		sameFields(t, "booking.resource", get(d, "createBooking.booking.resource"), want, "id", "title", "capacity", "bookingStepMinutes")
	})

	t.Run("Resource.parent", func(t *testing.T) {
		var child, parent *restclient.Resource
		for _, id := range env.Manifest.IDs["resource"] {
			r, _, err := rc.Resources.GetResource(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if r.ParentRef != nil && *r.ParentRef != "" {
				child = r
				break
			}
		}
		if child == nil {
			t.Fatal("demo data has no resource with a parent")
		}
		parent, _, err := rc.Resources.GetResource(ctx, *child.ParentRef)
		if err != nil {
			t.Fatal(err)
		}
		// parentRef alone is free.
		d := mustRun(t, env, creds, `query($id: ID!) { resource(id: $id) { id parentRef } }`, map[string]any{"id": child.ID})
		expectCalls(t, env, calls{restclient.OpGetResource: 1})
		if str(d, "resource.parentRef") != parent.ID {
			t.Fatalf("parentRef %q", str(d, "resource.parentRef"))
		}
		d = mustRun(t, env, creds, `query($id: ID!) { resource(id: $id) { id parent { id title capacity type parentRef } } }`, map[string]any{"id": child.ID})
		expectCalls(t, env, calls{restclient.OpGetResource: 2})
		sameFields(t, "resource.parent", get(d, "resource.parent"), parent, "id", "title", "capacity", "type", "parentRef")
	})

	t.Run("CreditNote.invoice+lines", func(t *testing.T) {
		q := `query($l: ID) { creditNotes(locationId: $l, first: 12) { nodes { id invoiceRef invoice { id number status } lines { invoiceRef invoiceItemRef invoice { id number } invoiceItem { id description invoiceRef } } } } }`
		d := mustRun(t, env, creds, q, map[string]any{"l": loc0})
		invoices := distinct(d, "creditNotes.nodes.*.invoiceRef")
		for id := range distinct(d, "creditNotes.nodes.*.lines.*.invoiceRef") {
			invoices[id] = true
		}
		if len(invoices) < 2 {
			t.Fatalf("want credit notes of several invoices, got %d", len(invoices))
		}
		expectCalls(t, env, calls{restclient.OpListCreditNotes: 1, restclient.OpListInvoiceItems: int64(len(invoices))})
		collect(d, "creditNotes.nodes.*", func(cn any) {
			if str(cn, "invoice.id") != str(cn, "invoiceRef") || str(cn, "invoice.number") == "" {
				t.Errorf("credit note invoice: %s", pretty(cn))
			}
			for _, l := range list(cn, "lines") {
				if str(l, "invoice.id") != str(l, "invoiceRef") || str(l, "invoiceItem.id") != str(l, "invoiceItemRef") || str(l, "invoiceItem.invoiceRef") != str(l, "invoiceRef") {
					t.Errorf("credit note line links: %s", pretty(l))
				}
			}
		})
		// One invoice's credit notes, with the invoice reached three ways:
		// one invoice call.
		inv := str(d, "creditNotes.nodes.0.invoiceRef")
		d = mustRun(t, env, creds, `query($i: ID) { creditNotes(invoiceId: $i) { nodes { invoice { number } lines { invoice { number } invoiceItem { description } } } } }`, map[string]any{"i": inv})
		expectCalls(t, env, calls{restclient.OpListCreditNotes: 1, restclient.OpListInvoiceItems: 1})
		if len(distinct(d, "creditNotes.nodes.*.lines.*.invoiceItem.description")) == 0 {
			t.Fatalf("no invoice items resolved: %s", pretty(d))
		}
	})

	t.Run("InvoiceItem.invoice+Invoice.creditNotes", func(t *testing.T) {
		cns, _, err := rc.Billing.ListCreditNotes(ctx, &restclient.CreditNoteListOptions{LocationRef: loc0, ListOptions: restclient.ListOptions{Limit: 1}})
		if err != nil || len(cns) == 0 {
			t.Fatal("no credit note", err)
		}
		inv := deref(cns[0].InvoiceRef)
		want, _, err := rc.Billing.ListCreditNotes(ctx, &restclient.CreditNoteListOptions{InvoiceRef: inv})
		if err != nil {
			t.Fatal(err)
		}
		d := mustRun(t, env, creds, `query($i: ID!) { invoice(id: $i) { id number items { id invoice { id number } } creditNotes { nodes { id invoiceRef } } } }`, map[string]any{"i": inv})
		expectCalls(t, env, calls{restclient.OpListInvoiceItems: 1, restclient.OpListCreditNotes: 1})
		for _, it := range list(d, "invoice.items") {
			if str(it, "invoice.id") != inv || str(it, "invoice.number") != str(d, "invoice.number") {
				t.Errorf("item invoice: %s", pretty(it))
			}
		}
		nodes := list(d, "invoice.creditNotes.nodes")
		if len(nodes) != len(want) || len(want) == 0 {
			t.Fatalf("invoice.creditNotes: %d, REST %d", len(nodes), len(want))
		}
		for i := range want {
			sameFields(t, "invoice.creditNotes", nodes[i], want[i], "id", "invoiceRef")
		}
	})

	t.Run("InvoiceItem.booking.resource", func(t *testing.T) {
		inv, n := invoiceWith(t, env, rc, ctx, func(it *restclient.InvoiceItem) string {
			if it.Booking != nil && it.Booking.Resource != nil {
				return it.Booking.Resource.ID
			}
			return ""
		})
		if n < 1 {
			t.Fatal("no invoice item with a booking")
		}
		d := mustRun(t, env, creds, `query($i: ID!) { invoice(id: $i) { items { booking { id resource { id title type } } } } }`, map[string]any{"i": inv})
		expectCalls(t, env, calls{restclient.OpListInvoiceItems: 1})
		if got := len(distinct(d, "invoice.items.*.booking.resource.id")); got != n {
			t.Fatalf("embedded resources: %d, want %d", got, n)
		}
		d = mustRun(t, env, creds, `query($i: ID!) { invoice(id: $i) { items { booking { resource { id title type capacity } } } } }`, map[string]any{"i": inv})
		expectCalls(t, env, calls{restclient.OpListInvoiceItems: 1, restclient.OpGetResource: int64(n)})
		checkResources(t, rc, ctx, d, "invoice.items.*.booking.resource")
	})

	t.Run("Transaction.booking.resource", func(t *testing.T) {
		q := `query($l: ID!) { transactions(locationId: $l, type: BOOKING, first: 40) { nodes { booking { id resource { id title } } } } }`
		d := mustRun(t, env, creds, q, map[string]any{"l": loc0})
		expectCalls(t, env, calls{restclient.OpListTransactions: 1})
		ids := distinct(d, "transactions.nodes.*.booking.resource.id")
		if len(ids) < 2 || len(list(d, "transactions.nodes")) <= len(ids) {
			t.Fatalf("want repeated resources among the bookings: %d resources, %d nodes", len(ids), len(list(d, "transactions.nodes")))
		}
		d = mustRun(t, env, creds, `query($l: ID!) { transactions(locationId: $l, type: BOOKING, first: 40) { nodes { booking { resource { id title type } } } } }`, map[string]any{"l": loc0})
		expectCalls(t, env, calls{restclient.OpListTransactions: 1, restclient.OpGetResource: int64(len(ids))})
		checkResources(t, rc, ctx, d, "transactions.nodes.*.booking.resource")
		// What decides is the fields the query selects once @skip, @include
		// and fragments are applied.
		for _, c := range []struct {
			sel   string
			calls int64
		}{
			{`id title capacity @skip(if: true)`, 0},
			{`id title capacity @include(if: $more)`, 0},
			{`... on Resource { id title }`, 0},
			{`...summary`, 0},
			{`id ... @include(if: true) { title }`, 0},
			{`id title capacity @skip(if: false)`, int64(len(ids))},
			{`id ... on Resource { capacity }`, int64(len(ids))},
			{`id ... @include(if: true) { title type }`, int64(len(ids))},
		} {
			vars := "$l: ID!"
			if strings.Contains(c.sel, "$more") {
				vars += ", $more: Boolean!"
			}
			q := `query(` + vars + `) { transactions(locationId: $l, type: BOOKING, first: 40) { nodes { booking { resource { ` + c.sel + ` } } } } }`
			if strings.Contains(c.sel, "...summary") {
				q += ` fragment summary on Resource { id title }`
			}
			d := mustRun(t, env, creds, q, map[string]any{"l": loc0, "more": false})
			expectCalls(t, env, calls{restclient.OpListTransactions: 1, restclient.OpGetResource: c.calls})
			if got := len(distinct(d, "transactions.nodes.*.booking.resource.id")); got != len(ids) {
				t.Errorf("%s: %d resources, want %d", c.sel, got, len(ids))
			}
		}
	})

	t.Run("Order.product+option", func(t *testing.T) {
		// Embedded product {id title createDate description media} and
		// option {id title}: only the list call.
		q := `query($a: ID!, $b: ID!) {
  a: orders(locationId: $a, first: 30) { nodes { product { id title createDate description media { key } } option { id title } } }
  b: orders(locationId: $b, first: 30) { nodes { product { id title } option { id } } }
}`
		d := mustRun(t, env, creds, q, map[string]any{"a": loc0, "b": loc1})
		expectCalls(t, env, calls{restclient.OpListOrders: 2})
		if len(distinct(d, "a.nodes.*.product.id")) < 2 {
			t.Fatalf("want orders of several products: %s", pretty(d))
		}
		// One field more on product and option in two locations: one product
		// list per location, no single product get.
		q = `query($a: ID!, $b: ID!) {
  a: orders(locationId: $a, first: 30) { nodes { locationRef product { id visibility locationRef options { id } } option { id title price { money { amount } } } } }
  b: orders(locationId: $b, first: 30) { nodes { locationRef product { id refundPolicy } option { id available } } }
}`
		d = mustRun(t, env, creds, q, map[string]any{"a": loc0, "b": loc1})
		expectCalls(t, env, calls{restclient.OpListOrders: 2, restclient.OpListProducts: 2})
		checkProducts(t, rc, ctx, d, []string{"a.nodes.*", "b.nodes.*"}, "product", "option")
	})

	t.Run("Transaction.order.product+option", func(t *testing.T) {
		txs, _, err := rc.Transactions.ListTransactions(ctx, &restclient.TransactionListOptions{LocationRef: loc0, Type: restclient.TransactionTypeOrder, ListOptions: restclient.ListOptions{Limit: 30}})
		if err != nil {
			t.Fatal(err)
		}
		// The option's spec name is `name`; the deprecated `title` is the
		// same value. Both come from the embedded {id, name}: no other call.
		q := `query($l: ID!) { transactions(locationId: $l, type: ORDER, first: 30) { nodes { id locationRef order { id product { id title } option { id name title } } } } }`
		d := mustRun(t, env, creds, q, map[string]any{"l": loc0})
		expectCalls(t, env, calls{restclient.OpListTransactions: 1})
		if len(distinct(d, "transactions.nodes.*.order.product.id")) < 2 || len(distinct(d, "transactions.nodes.*.order.option.name")) < 1 {
			t.Fatalf("want several embedded products and options: %s", pretty(d))
		}
		nodes := list(d, "transactions.nodes")
		if len(nodes) != len(txs) {
			t.Fatalf("%d transactions, REST %d", len(nodes), len(txs))
		}
		for i, tx := range txs {
			n := nodes[i]
			if tx.Order == nil || tx.Order.Option == nil || tx.Order.Option.Name == nil {
				if get(n, "order.option") != nil {
					t.Errorf("%s: option %v without an embedded one", tx.ID, get(n, "order.option"))
				}
				continue
			}
			if str(n, "order.option.id") != tx.Order.Option.ID || str(n, "order.option.name") != *tx.Order.Option.Name || str(n, "order.option.title") != *tx.Order.Option.Name {
				t.Errorf("%s: option %v, REST {%s %s}", tx.ID, get(n, "order.option"), tx.Order.Option.ID, *tx.Order.Option.Name)
			}
		}
		// Any other field loads the product's option, and the name stays.
		q = `query($l: ID!) { transactions(locationId: $l, type: ORDER, first: 30) { nodes { locationRef order { product { id description } option { id name title stock { quantity } } } } } }`
		d = mustRun(t, env, creds, q, map[string]any{"l": loc0})
		expectCalls(t, env, calls{restclient.OpListTransactions: 1, restclient.OpListProducts: 1})
		checkProducts(t, rc, ctx, d, []string{"transactions.nodes.*"}, "order.product", "order.option")
		collect(d, "transactions.nodes.*.order.option", func(o any) {
			if o != nil && (str(o, "name") == "" || str(o, "name") != str(o, "title")) {
				t.Errorf("loaded option %v: name and title differ", o)
			}
		})
	})

	t.Run("InvoiceItem.order.product+productOption", func(t *testing.T) {
		inv, n := invoiceWith(t, env, rc, ctx, func(it *restclient.InvoiceItem) string {
			if it.Order != nil && it.Order.Product != nil {
				return it.Order.Product.ID
			}
			return ""
		})
		if n < 1 {
			t.Fatal("no invoice item with an order")
		}
		d := mustRun(t, env, creds, `query($i: ID!) { invoice(id: $i) { items { order { product { id title } productOption { id title } } } } }`, map[string]any{"i": inv})
		expectCalls(t, env, calls{restclient.OpListInvoiceItems: 1})
		d = mustRun(t, env, creds, `query($i: ID!) { invoice(id: $i) { items { locationRef order { product { id description locationRef } productOption { id description } } } } }`, map[string]any{"i": inv})
		expectCalls(t, env, calls{restclient.OpListInvoiceItems: 1, restclient.OpListProducts: 1})
		checkProducts(t, rc, ctx, d, []string{"invoice.items.*"}, "order.product", "order.productOption")
	})

	t.Run("Transaction.ticket.event", func(t *testing.T) {
		q := `query($l: ID!) { transactions(locationId: $l, type: EVENT_TICKET, first: 40) { nodes { ticket { event { id title startDate endDate } } } } }`
		d := mustRun(t, env, creds, q, map[string]any{"l": loc0})
		expectCalls(t, env, calls{restclient.OpListTransactions: 1})
		ids := distinct(d, "transactions.nodes.*.ticket.event.id")
		if len(ids) < 2 {
			t.Fatalf("want tickets of several events: %s", pretty(d))
		}
		q = `query($l: ID!) { transactions(locationId: $l, type: EVENT_TICKET, first: 40) { nodes { ticket { event { id title venue } } } } }`
		d = mustRun(t, env, creds, q, map[string]any{"l": loc0})
		expectCalls(t, env, calls{restclient.OpListTransactions: 1, restclient.OpGetEvent: int64(len(ids))})
		checkEvents(t, rc, ctx, d, "transactions.nodes.*.ticket.event")
	})

	t.Run("InvoiceItem.ticket.event", func(t *testing.T) {
		inv, n := invoiceWith(t, env, rc, ctx, func(it *restclient.InvoiceItem) string {
			if it.Ticket != nil && it.Ticket.Event != nil {
				return it.Ticket.Event.ID
			}
			return ""
		})
		if n < 1 {
			t.Fatal("no invoice item with a ticket")
		}
		d := mustRun(t, env, creds, `query($i: ID!) { invoice(id: $i) { items { ticket { event { id title startDate endDate } } } } }`, map[string]any{"i": inv})
		expectCalls(t, env, calls{restclient.OpListInvoiceItems: 1})
		d = mustRun(t, env, creds, `query($i: ID!) { invoice(id: $i) { items { ticket { event { id venue description } } } } }`, map[string]any{"i": inv})
		expectCalls(t, env, calls{restclient.OpListInvoiceItems: 1, restclient.OpGetEvent: int64(n)})
		checkEvents(t, rc, ctx, d, "invoice.items.*.ticket.event")
	})

	t.Run("Transaction.invoice", func(t *testing.T) {
		q := `query($l: ID!) { transactions(locationId: $l, first: 100) { nodes { invoice { id title } } } }`
		d := mustRun(t, env, creds, q, map[string]any{"l": loc0})
		expectCalls(t, env, calls{restclient.OpListTransactions: 1})
		ids := distinct(d, "transactions.nodes.*.invoice.id")
		if len(ids) < 2 {
			t.Fatalf("want transactions of several invoices: %d", len(ids))
		}
		q = `query($l: ID!) { transactions(locationId: $l, first: 100) { nodes { invoice { id number items { id } } } } }`
		d = mustRun(t, env, creds, q, map[string]any{"l": loc0})
		expectCalls(t, env, calls{restclient.OpListTransactions: 1, restclient.OpListInvoiceItems: int64(len(ids))})
		collect(d, "transactions.nodes.*.invoice", func(inv any) {
			if str(inv, "number") == "" || len(list(inv, "items")) == 0 {
				t.Errorf("loaded invoice: %s", pretty(inv))
			}
		})
	})

	t.Run("Comment.parentComment+replies", func(t *testing.T) {
		post := env.ID(t, "post", 0)
		want, _, err := rc.Feed.ListComments(ctx, post)
		if err != nil {
			t.Fatal(err)
		}
		d := mustRun(t, env, creds, `query($p: ID!) { postComments(postId: $p) { id parentCommentRef parentComment { id text parentComment { id } } replies { id parentCommentRef replies { id } } } }`, map[string]any{"p": post})
		expectCalls(t, env, calls{restclient.OpListComments: 1})
		replies := map[string][]string{}
		for _, c := range want {
			if p := deref(c.ParentCommentRef); p != "" {
				replies[p] = append(replies[p], c.ID)
			}
		}
		if len(replies) == 0 {
			t.Fatal("demo post has no replies")
		}
		for _, c := range list(d, "postComments") {
			if str(c, "parentCommentRef") != str(c, "parentComment.id") {
				t.Errorf("comment %s parent %q, want %q", str(c, "id"), str(c, "parentComment.id"), str(c, "parentCommentRef"))
			}
			var got []string
			for _, r := range list(c, "replies") {
				got = append(got, str(r, "id"))
				if str(r, "parentCommentRef") != str(c, "id") {
					t.Errorf("reply %s of %s has parent %s", str(r, "id"), str(c, "id"), str(r, "parentCommentRef"))
				}
			}
			if w := replies[str(c, "id")]; len(got) != len(w) || (len(w) > 0 && !equalStrings(got, w)) {
				t.Errorf("comment %s replies %v, want %v", str(c, "id"), got, w)
			}
		}
	})

	t.Run("Post.comments", func(t *testing.T) {
		post := env.ID(t, "post", 1)
		want, _, err := rc.Feed.ListComments(ctx, post)
		if err != nil {
			t.Fatal(err)
		}
		d := mustRun(t, env, creds, `mutation($id: ID!) { updatePost(id: $id, input: {text: "edited"}) { post { id comments { id text replies { id } } } } }`, map[string]any{"id": post})
		expectCalls(t, env, calls{restclient.OpUpdatePost: 1, restclient.OpListComments: 1})
		got := list(d, "updatePost.post.comments")
		if len(got) != len(want) || len(want) == 0 {
			t.Fatalf("post comments %d, REST %d", len(got), len(want))
		}
		for i := range want {
			sameFields(t, "post.comments", got[i], want[i], "id", "text")
		}
	})

	t.Run("location-nodes", func(t *testing.T) {
		q := `query($l: ID!, $r: ID!, $e: ID!) {
  resource(id: $r) { locationRef location { id } }
  event(id: $e) { locationRef location { id } }
  transactions(locationId: $l, first: 20) { nodes { locationRef location { id } } }
  orders(locationId: $l, first: 5) { nodes { locationRef location { id } product { locationRef location { id } } } }
  creditNotes(locationId: $l, first: 5) { nodes { locationRef location { id } lines { locationRef location { id } } } }
}`
		d := mustRun(t, env, creds, q, map[string]any{"l": loc0, "r": env.ID(t, "resource", 0), "e": env.ID(t, "event", 0)})
		// An order's embedded product has no locationRef: its location needs
		// the location's product list (one call).
		expectCalls(t, env, calls{restclient.OpGetResource: 1, restclient.OpGetEvent: 1, restclient.OpListTransactions: 1, restclient.OpListOrders: 1, restclient.OpListCreditNotes: 1, restclient.OpListProducts: 1})
		n := 0
		for _, p := range []string{"resource", "event", "transactions.nodes.*", "orders.nodes.*", "orders.nodes.*.product", "creditNotes.nodes.*", "creditNotes.nodes.*.lines.*"} {
			collect(d, p, func(o any) {
				n++
				if str(o, "location.id") == "" || str(o, "location.id") != str(o, "locationRef") {
					t.Errorf("%s: location %q, locationRef %q", p, str(o, "location.id"), str(o, "locationRef"))
				}
			})
		}
		if n < 30 {
			t.Fatalf("checked only %d location links", n)
		}
	})

	t.Run("Location.lists", func(t *testing.T) {
		q := `query($l: ID!) { location(id: $l) { id products { id } orders(first: 5) { nodes { id locationRef } } transactions(first: 5) { nodes { id locationRef } } creditNotes(first: 5) { nodes { id locationRef } } } }`
		d := mustRun(t, env, creds, q, map[string]any{"l": loc1})
		expectCalls(t, env, calls{restclient.OpListProducts: 1, restclient.OpListOrders: 1, restclient.OpListTransactions: 1, restclient.OpListCreditNotes: 1})
		ps, _, err := rc.Shop.ListProducts(ctx, &restclient.ProductListOptions{LocationRef: loc1})
		if err != nil {
			t.Fatal(err)
		}
		if len(list(d, "location.products")) != len(ps) || len(ps) == 0 {
			t.Fatalf("products %d, REST %d", len(list(d, "location.products")), len(ps))
		}
		for _, f := range []string{"orders", "transactions", "creditNotes"} {
			nodes := list(d, "location."+f+".nodes")
			if len(nodes) != 5 {
				t.Fatalf("%s: %d nodes", f, len(nodes))
			}
			for _, n := range nodes {
				if str(n, "locationRef") != loc1 {
					t.Errorf("%s node of location %s", f, str(n, "locationRef"))
				}
			}
		}
	})
}

// invoiceWith returns the demo invoice whose items name the most distinct ids
// by key, and that number.
func invoiceWith(t *testing.T, env *testenv.Env, rc *restclient.Client, ctx context.Context, key func(*restclient.InvoiceItem) string) (string, int) {
	t.Helper()
	best, bestN := "", 0
	for _, id := range env.Manifest.IDs["invoice"] {
		inv, _, err := rc.Billing.ListInvoiceItems(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, it := range inv.Items {
			if k := key(it); k != "" {
				seen[k] = true
			}
		}
		if len(seen) > bestN {
			best, bestN = id, len(seen)
		}
	}
	return best, bestN
}

// checkResources compares every resource at path with the REST service.
func checkResources(t *testing.T, rc *restclient.Client, ctx context.Context, d any, path string) {
	t.Helper()
	n := 0
	collect(d, path, func(r any) {
		n++
		want, _, err := rc.Resources.GetResource(ctx, str(r, "id"))
		if err != nil {
			t.Fatal(err)
		}
		sameFields(t, path, r, want, "id", "title", "type", "capacity")
	})
	if n == 0 {
		t.Fatalf("no resource at %s", path)
	}
}

// checkEvents compares every event at path with the REST service.
func checkEvents(t *testing.T, rc *restclient.Client, ctx context.Context, d any, path string) {
	t.Helper()
	n := 0
	collect(d, path, func(e any) {
		n++
		want, _, err := rc.Events.GetEvent(ctx, str(e, "id"))
		if err != nil {
			t.Fatal(err)
		}
		sameFields(t, path, e, want, "id", "title", "venue", "description")
	})
	if n == 0 {
		t.Fatalf("no event at %s", path)
	}
}

// checkProducts compares the product and option of every object at the
// given paths with the product of that id in its location's REST list.
func checkProducts(t *testing.T, rc *restclient.Client, ctx context.Context, d any, paths []string, productField, optionField string) {
	t.Helper()
	lists := map[string][]*restclient.Product{}
	n := 0
	for _, p := range paths {
		collect(d, p, func(o any) {
			prod := get(o, productField)
			if prod == nil {
				return
			}
			n++
			loc := str(o, "locationRef")
			if lists[loc] == nil {
				ps, _, err := rc.Shop.ListProducts(ctx, &restclient.ProductListOptions{LocationRef: loc})
				if err != nil {
					t.Fatal(err)
				}
				lists[loc] = ps
			}
			var want *restclient.Product
			for _, wp := range lists[loc] {
				if wp.ID == str(prod, "id") {
					want = wp
				}
			}
			if want == nil {
				t.Fatalf("product %s not in location %s", str(prod, "id"), loc)
			}
			sameFields(t, productField, prod, want, "id", "description", "visibility", "refundPolicy", "locationRef", "options")
			if opt := get(o, optionField); opt != nil {
				found := false
				for _, wo := range want.Options {
					if wo.ID == str(opt, "id") {
						found = true
						sameFields(t, optionField, opt, wo, "id", "title", "description", "available", "price", "stock")
					}
				}
				if !found {
					t.Errorf("option %s not in product %s", str(opt, "id"), want.ID)
				}
			}
		})
	}
	if n == 0 {
		t.Fatalf("no product at %v", paths)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
