package graph_test

import (
	"testing"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
)

// TestEntryPoints runs every Query field on demo ids and compares the answer
// with what the REST service returns for the same credentials, and the
// upstream calls with the one operation each field maps to.
func TestEntryPoints(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	creds := env.Bearer()
	rc, ctx := env.REST(t, creds)
	loc := env.ID(t, "location", 0)

	t.Run("resource", func(t *testing.T) {
		id := env.ID(t, "resource", 0)
		want, _, err := rc.Resources.GetResource(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		d := mustRun(t, env, creds, `query($id: ID!) { resource(id: $id) { id title description type capacity visibility locationRef parentRef createDate money { price tiers { from upTo unitAmount } } schedule { default { closedDays } } } }`, map[string]any{"id": id})
		expectCalls(t, env, calls{restclient.OpGetResource: 1})
		sameFields(t, "resource", get(d, "resource"), want, "id", "title", "description", "type", "capacity", "visibility", "locationRef", "parentRef", "createDate", "money", "schedule.default.closedDays")
	})

	t.Run("event", func(t *testing.T) {
		id := env.ID(t, "event", 0)
		want, _, err := rc.Events.GetEvent(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		d := mustRun(t, env, creds, `query($id: ID!) { event(id: $id) { id title venue locationRef startDate endDate price { money { amount enabled } } location { id } } }`, map[string]any{"id": id})
		expectCalls(t, env, calls{restclient.OpGetEvent: 1})
		sameFields(t, "event", get(d, "event"), want, "id", "title", "venue", "locationRef", "startDate", "endDate", "price")
		if str(d, "event.location.id") != deref(want.LocationRef) {
			t.Errorf("event.location.id = %q, want %q", str(d, "event.location.id"), deref(want.LocationRef))
		}
	})

	t.Run("visit", func(t *testing.T) {
		id := env.ID(t, "visit", 0)
		want, _, err := rc.Visitors.GetVisit(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		d := mustRun(t, env, creds, `query($id: ID!) { visit(id: $id) { id code comment date checkInDate locationRef userRefHost visitor { email name surname } userHost { id name } location { id title } } }`, map[string]any{"id": id})
		expectCalls(t, env, calls{restclient.OpGetVisit: 1})
		sameFields(t, "visit", get(d, "visit"), want, "id", "code", "comment", "date", "checkInDate", "locationRef", "userRefHost", "visitor", "userHost.id", "userHost.name", "location.id", "location.title")
	})

	t.Run("product", func(t *testing.T) {
		id := env.ID(t, "product", 0)
		want, _, err := rc.Shop.GetProduct(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		d := mustRun(t, env, creds, `query($id: ID!) { product(id: $id) { id title description locationRef visibility options { id title available price { money { amount currencyCode } } } } }`, map[string]any{"id": id})
		expectCalls(t, env, calls{restclient.OpGetProduct: 1})
		sameFields(t, "product", get(d, "product"), want, "id", "title", "description", "locationRef", "visibility", "options.0.id", "options.0.title", "options.0.available", "options.0.price.money")
	})

	t.Run("products", func(t *testing.T) {
		want, _, err := rc.Shop.ListProducts(ctx, &restclient.ProductListOptions{LocationRef: loc})
		if err != nil {
			t.Fatal(err)
		}
		d := mustRun(t, env, creds, `query($l: ID!) { products(locationId: $l) { id title locationRef } }`, map[string]any{"l": loc})
		expectCalls(t, env, calls{restclient.OpListProducts: 1})
		got := list(d, "products")
		if len(got) != len(want) || len(want) == 0 {
			t.Fatalf("products: %d, REST %d", len(got), len(want))
		}
		for i := range want {
			sameFields(t, "products", got[i], want[i], "id", "title", "locationRef")
		}
	})

	t.Run("invoice", func(t *testing.T) {
		id := env.ID(t, "invoice", 0)
		want, _, err := rc.Billing.ListInvoiceItems(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		d := mustRun(t, env, creds, `query($id: ID!) { invoice(id: $id) { id number status totalAmount currencyCode locationRef customer { id title } items { id description totalAmount invoiceRef } } }`, map[string]any{"id": id})
		expectCalls(t, env, calls{restclient.OpListInvoiceItems: 1})
		sameFields(t, "invoice", get(d, "invoice"), want.Invoice, "id", "number", "status", "totalAmount", "currencyCode", "locationRef", "customer.id", "customer.title")
		items := list(d, "invoice.items")
		if len(items) == 0 || len(items) != len(want.Items) {
			t.Fatalf("invoice items: %d, REST %d", len(items), len(want.Items))
		}
		for i, it := range want.Items {
			sameFields(t, "invoice.items", items[i], it, "id", "description", "totalAmount", "invoiceRef")
		}
	})

	t.Run("creditNotes", func(t *testing.T) {
		byLoc, _, err := rc.Billing.ListCreditNotes(ctx, &restclient.CreditNoteListOptions{LocationRef: loc, ListOptions: restclient.ListOptions{Limit: 7}})
		if err != nil || len(byLoc) == 0 {
			t.Fatalf("REST credit notes: %v (%d)", err, len(byLoc))
		}
		d := mustRun(t, env, creds, `query($l: ID) { creditNotes(locationId: $l, first: 7) { nodes { id number reason totalAmount invoiceRef } } }`, map[string]any{"l": loc})
		expectCalls(t, env, calls{restclient.OpListCreditNotes: 1})
		nodes := list(d, "creditNotes.nodes")
		if len(nodes) != len(byLoc) {
			t.Fatalf("creditNotes(locationId): %d nodes, REST %d", len(nodes), len(byLoc))
		}
		for i := range byLoc {
			sameFields(t, "creditNotes", nodes[i], byLoc[i], "id", "number", "reason", "totalAmount", "invoiceRef")
		}

		inv := deref(byLoc[0].InvoiceRef)
		byInv, _, err := rc.Billing.ListCreditNotes(ctx, &restclient.CreditNoteListOptions{InvoiceRef: inv})
		if err != nil || len(byInv) == 0 {
			t.Fatalf("REST credit notes of invoice: %v (%d)", err, len(byInv))
		}
		d = mustRun(t, env, creds, `query($i: ID) { creditNotes(invoiceId: $i) { nodes { id invoiceRef } } }`, map[string]any{"i": inv})
		expectCalls(t, env, calls{restclient.OpListCreditNotes: 1})
		nodes = list(d, "creditNotes.nodes")
		if len(nodes) != len(byInv) {
			t.Fatalf("creditNotes(invoiceId): %d nodes, REST %d", len(nodes), len(byInv))
		}
		for i := range byInv {
			sameFields(t, "creditNotes", nodes[i], byInv[i], "id", "invoiceRef")
			if str(nodes[i], "invoiceRef") != inv {
				t.Errorf("credit note %s belongs to %s, want %s", str(nodes[i], "id"), str(nodes[i], "invoiceRef"), inv)
			}
		}
	})

	t.Run("transactions", func(t *testing.T) {
		want, _, err := rc.Transactions.ListTransactions(ctx, &restclient.TransactionListOptions{LocationRef: loc, ListOptions: restclient.ListOptions{Limit: 10}})
		if err != nil {
			t.Fatal(err)
		}
		d := mustRun(t, env, creds, `query($l: ID!) { transactions(locationId: $l, first: 10) { nodes { id amount createDate currencyCode locationRef status type } } }`, map[string]any{"l": loc})
		expectCalls(t, env, calls{restclient.OpListTransactions: 1})
		nodes := list(d, "transactions.nodes")
		if len(nodes) != 10 || len(want) != 10 {
			t.Fatalf("transactions: %d nodes, REST %d", len(nodes), len(want))
		}
		for i := range want {
			sameFields(t, "transactions", nodes[i], want[i], "id", "amount", "createDate", "currencyCode", "locationRef")
			if g, w := str(nodes[i], "status"), enumOf(string(*want[i].Status)); g != w {
				t.Errorf("transaction %d status %s, want %s", i, g, w)
			}
			if g, w := str(nodes[i], "type"), enumOf(string(*want[i].Type)); g != w {
				t.Errorf("transaction %d type %s, want %s", i, g, w)
			}
		}
	})

	t.Run("orders", func(t *testing.T) {
		want, _, err := rc.Shop.ListOrders(ctx, &restclient.OrderListOptions{LocationRef: loc, ListOptions: restclient.ListOptions{Limit: 6}})
		if err != nil {
			t.Fatal(err)
		}
		d := mustRun(t, env, creds, `query($l: ID!) { orders(locationId: $l, first: 6) { nodes { id number quantity comment status createDate } } }`, map[string]any{"l": loc})
		expectCalls(t, env, calls{restclient.OpListOrders: 1})
		nodes := list(d, "orders.nodes")
		if len(nodes) != len(want) || len(want) != 6 {
			t.Fatalf("orders: %d nodes, REST %d", len(nodes), len(want))
		}
		for i := range want {
			sameFields(t, "orders", nodes[i], want[i], "id", "number", "quantity", "comment", "createDate")
			if g, w := str(nodes[i], "status"), enumOf(string(*want[i].Status)); g != w {
				t.Errorf("order %d status %s, want %s", i, g, w)
			}
		}
	})

	t.Run("redemptions", func(t *testing.T) {
		for _, c := range []struct{ arg, kind string }{{"couponId", "coupon"}, {"promocodeId", "promocode"}} {
			id := env.ID(t, c.kind, 0)
			opts := &restclient.RedemptionListOptions{ListOptions: restclient.ListOptions{Limit: 5}}
			if c.kind == "coupon" {
				opts.CouponRef = id
			} else {
				opts.PromocodeRef = id
			}
			want, _, err := rc.Discounts.ListRedemptions(ctx, opts)
			if err != nil || len(want) == 0 {
				t.Fatalf("REST redemptions: %v (%d)", err, len(want))
			}
			d := mustRun(t, env, creds, `query($id: ID) { redemptions(`+c.arg+`: $id, first: 5) { nodes { createDate locationRef promocodeRef coupon { id percentOff } promocode { id code } customer { id title } product { orderRef title type } location { id } } } }`, map[string]any{"id": id})
			expectCalls(t, env, calls{restclient.OpListRedemptions: 1})
			nodes := list(d, "redemptions.nodes")
			if len(nodes) != len(want) {
				t.Fatalf("redemptions(%s): %d nodes, REST %d", c.arg, len(nodes), len(want))
			}
			for i := range want {
				sameFields(t, "redemptions", nodes[i], want[i], "createDate", "locationRef", "promocodeRef", "coupon.id", "coupon.percentOff", "promocode.id", "promocode.code", "customer.id", "customer.title", "product")
				if str(nodes[i], "location.id") != deref(want[i].LocationRef) {
					t.Errorf("redemption %d location.id %q", i, str(nodes[i], "location.id"))
				}
			}
		}
	})

	t.Run("postComments", func(t *testing.T) {
		post := env.ID(t, "post", 0)
		want, _, err := rc.Feed.ListComments(ctx, post)
		if err != nil || len(want) == 0 {
			t.Fatalf("REST comments: %v (%d)", err, len(want))
		}
		d := mustRun(t, env, creds, `query($p: ID!) { postComments(postId: $p) { id text likes createDate parentCommentRef postRef membership { id user { id name } } } }`, map[string]any{"p": post})
		expectCalls(t, env, calls{restclient.OpListComments: 1})
		got := list(d, "postComments")
		if len(got) != len(want) {
			t.Fatalf("postComments: %d, REST %d", len(got), len(want))
		}
		for i := range want {
			sameFields(t, "postComments", got[i], want[i], "id", "text", "likes", "createDate", "parentCommentRef", "postRef", "membership.id", "membership.user.id", "membership.user.name")
		}
	})

	t.Run("location", func(t *testing.T) {
		d := mustRun(t, env, creds, `query($l: ID!) { location(id: $l) { id } }`, map[string]any{"l": loc})
		expectCalls(t, env, calls{})
		if str(d, "location.id") != loc {
			t.Fatalf("location.id = %q, want %q", str(d, "location.id"), loc)
		}
	})
}

// enumOf maps a REST camelCase value to the GraphQL UPPER_SNAKE_CASE enum.
func enumOf(s string) string {
	out := make([]byte, 0, len(s)+4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			out = append(out, '_')
		} else if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		out = append(out, c)
	}
	return string(out)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
