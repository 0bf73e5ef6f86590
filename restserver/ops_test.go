package restserver

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver/wire"
)

// TestAllOperationsHappyPath calls every operation with the demo credentials.
func TestAllOperationsHappyPath(t *testing.T) {
	ts := newTestServer(t)
	m := ts.Manifest
	ids := m.IDs
	for _, k := range []string{"location", "resource", "booking", "invoice", "invoiceItem", "creditNote", "transaction", "product", "order",
		"coupon", "promocode", "event", "post", "comment", "visit", "user", "membership"} {
		if len(ids[k]) == 0 {
			t.Fatalf("manifest has no %s ids", k)
		}
	}
	loc := ids["location"][0]
	b, ba := ts.bearer(), ts.basic()

	t.Run("get resource", func(t *testing.T) {
		var out struct{ Resource wire.Resource }
		ts.ok(t, ba, 200, "GET", "/resources/v1/"+ids["resource"][0], nil).json(t, &out)
		if out.Resource.ID != ids["resource"][0] || out.Resource.Title == nil {
			t.Fatalf("resource = %+v", out.Resource)
		}
	})
	t.Run("get event", func(t *testing.T) {
		var out struct{ Event wire.Event }
		ts.ok(t, b, 200, "GET", "/events/v1/"+ids["event"][0], nil).json(t, &out)
		if out.Event.ID != ids["event"][0] {
			t.Fatalf("event = %+v", out.Event)
		}
	})
	t.Run("get product and list products", func(t *testing.T) {
		var out struct{ Product wire.Product }
		ts.ok(t, b, 200, "GET", "/shop/products/v1/"+ids["product"][0], nil).json(t, &out)
		if out.Product.ID != ids["product"][0] || len(out.Product.Options) == 0 {
			t.Fatalf("product = %+v", out.Product)
		}
		var list struct{ Products []wire.Product }
		ts.ok(t, ts.readonly(), 200, "GET", "/shop/products/v1?locationRef="+loc, nil).json(t, &list)
		if len(list.Products) == 0 {
			t.Fatal("no products")
		}
		for _, p := range list.Products {
			if *p.LocationRef != loc {
				t.Fatalf("product of location %s in list of %s", *p.LocationRef, loc)
			}
		}
	})
	t.Run("invoice items", func(t *testing.T) {
		var out struct {
			Invoice      wire.Invoice
			InvoiceItems []wire.InvoiceItem
		}
		ts.ok(t, ba, 200, "GET", "/billing/invoices/v1/"+ids["invoice"][0]+"/items", nil).json(t, &out)
		if out.Invoice.ID != ids["invoice"][0] || len(out.InvoiceItems) == 0 || len(out.Invoice.Items) != len(out.InvoiceItems) {
			t.Fatalf("invoice %+v with %d items", out.Invoice.ID, len(out.InvoiceItems))
		}
		types := map[string]bool{}
		for _, it := range out.InvoiceItems {
			types[*it.Type] = true
			if *it.InvoiceRef != out.Invoice.ID {
				t.Fatalf("item %s of invoice %s", it.ID, *it.InvoiceRef)
			}
		}
		if len(types) != 6 {
			t.Fatalf("first invoice item types = %v, want all 6", types)
		}
	})
	t.Run("list credit notes", func(t *testing.T) {
		var out struct {
			CreditNotes   []wire.CreditNote
			NextPageToken *string
		}
		ts.ok(t, ba, 200, "GET", "/billing/credit_notes/v1?invoiceRef="+ids["invoice"][0], nil).json(t, &out)
		if len(out.CreditNotes) == 0 {
			t.Fatal("first invoice has no credit notes")
		}
	})
	t.Run("list transactions", func(t *testing.T) {
		var out struct {
			Transactions  []wire.Transaction
			NextPageToken string
		}
		ts.ok(t, ba, 200, "GET", "/transactions/money/v1?locationRef="+loc+"&type=booking&status=succeeded", nil).json(t, &out)
		if len(out.Transactions) == 0 {
			t.Fatal("no succeeded booking transactions")
		}
		for _, tr := range out.Transactions {
			if *tr.Type != "booking" || *tr.Status != "succeeded" || tr.Booking == nil || tr.Booking.Resource == nil {
				t.Fatalf("transaction %+v", tr)
			}
		}
	})
	t.Run("list orders", func(t *testing.T) {
		var out struct{ Orders []wire.Order }
		ts.ok(t, ba, 200, "GET", "/shop/orders/v1?locationRef="+loc+"&status=inProgress", nil).json(t, &out)
		if len(out.Orders) == 0 {
			t.Fatal("no orders")
		}
	})
	t.Run("list redemptions", func(t *testing.T) {
		var out struct{ Redemptions []wire.Redemption }
		ts.ok(t, ba, 200, "GET", "/discounts/redemptions/v1?couponRef="+ids["coupon"][0], nil).json(t, &out)
		if len(out.Redemptions) == 0 {
			t.Fatal("no redemptions")
		}
	})
	t.Run("list comments", func(t *testing.T) {
		var out struct{ Comments []wire.Comment }
		ts.ok(t, ba, 200, "GET", "/feed/posts/v1/"+ids["post"][0]+"/comments", nil).json(t, &out)
		if len(out.Comments) == 0 {
			t.Fatal("first post has no comments")
		}
		replies := 0
		for _, c := range out.Comments {
			if c.ParentCommentRef != nil {
				replies++
			}
		}
		if replies == 0 {
			t.Fatal("no threaded comments")
		}
	})
	t.Run("visits", func(t *testing.T) {
		r := ts.ok(t, b, 201, "POST", restclient.OpCreateVisit.Route, map[string]any{"visit": map[string]any{
			"date": "2026-02-01T10:00:00Z", "locationRef": loc, "visitor": map[string]any{"email": "ann@example.com", "name": "Ann"}, "comment": "hi"}})
		var out struct{ Visit wire.Visit }
		r.json(t, &out)
		if out.Visit.Code == nil || len(*out.Visit.Code) != 6 || out.Visit.Location == nil || out.Visit.UserHost == nil {
			t.Fatalf("visit = %s", r.body)
		}
		ts.ok(t, ba, 200, "GET", "/visitors/visits/v1/"+out.Visit.ID, nil)
		var upd struct{ Visit wire.Visit }
		ts.ok(t, ba, 200, "PUT", "/visitors/visits/v1/"+out.Visit.ID, map[string]any{"visit": map[string]any{"date": "2026-02-02T10:00:00Z"}}).json(t, &upd)
		if !upd.Visit.Date.Equal(time.Date(2026, 2, 2, 10, 0, 0, 0, time.UTC)) || *upd.Visit.Comment != "hi" {
			t.Fatalf("updated visit = %+v", upd.Visit)
		}
		ts.ok(t, ba, 200, "GET", "/visitors/visits/v1/"+ids["visit"][0], nil)
	})
	t.Run("visit request", func(t *testing.T) {
		var out struct{ Request wire.VisitRequest }
		ts.ok(t, ba, 201, "POST", restclient.OpCreateVisitRequest.Route, map[string]any{"request": map[string]any{
			"locationRef": loc, "userRefHost": ids["user"][1], "visitor": map[string]any{"email": "bo@example.com", "name": "Bo"}}}).json(t, &out)
		if *out.Request.UserRefHost != ids["user"][1] || *out.Request.MembershipRefHost != ids["membership"][1] {
			t.Fatalf("request = %+v", out.Request)
		}
	})
	t.Run("posts", func(t *testing.T) {
		var out struct{ Post wire.Post }
		ts.ok(t, b, 201, "POST", restclient.OpCreatePost.Route, map[string]any{"post": map[string]any{"locationRef": loc, "text": "hello",
			"media": []map[string]any{{"key": "a.png"}}, "og": map[string]any{"url": "https://example.com"}}}).json(t, &out)
		if *out.Post.Text != "hello" || len(out.Post.Media) != 1 || *out.Post.Media[0].Mime != "image/png" {
			t.Fatalf("post = %+v", out.Post)
		}
		var upd struct{ Post wire.Post }
		ts.ok(t, ba, 200, "PUT", "/feed/posts/v1/"+out.Post.ID, map[string]any{"post": map[string]any{"text": "edited", "media": []any{}}}).json(t, &upd)
		if *upd.Post.Text != "edited" || len(upd.Post.Media) != 0 {
			t.Fatalf("updated post = %+v", upd.Post)
		}
		var cs struct{ Comments []wire.Comment }
		ts.ok(t, ba, 200, "GET", "/feed/posts/v1/"+out.Post.ID+"/comments", nil).json(t, &cs)
		if cs.Comments == nil || len(cs.Comments) != 0 {
			t.Fatalf("comments of a new post = %v", cs.Comments)
		}
	})
	t.Run("booking", func(t *testing.T) {
		res := ids["resource"][0]
		start := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
		var out struct{ Booking wire.Booking }
		ts.ok(t, ba, 201, "POST", restclient.OpCreateBooking.Route, map[string]any{"booking": map[string]any{
			"resourceRef": res, "startDate": start, "endDate": start.Add(time.Hour), "title": "Standup"}}).json(t, &out)
		if *out.Booking.ResourceRef != res || *out.Booking.Title != "Standup" || out.Booking.UserOwner == nil {
			t.Fatalf("booking = %+v", out.Booking)
		}
	})
	t.Run("credit note", func(t *testing.T) {
		inv, item := creditableItem(t, ts)
		var out struct{ CreditNote wire.CreditNote }
		ts.ok(t, ba, 201, "POST", restclient.OpListCreditNotes.Route, map[string]any{"creditNote": map[string]any{
			"invoiceRef": inv, "reason": "duplicate", "lines": []map[string]any{{"invoiceItemRef": item, "amount": 0.5}}, "memo": "m"}}).json(t, &out)
		if *out.CreditNote.TotalAmount != 0.5 || len(out.CreditNote.Lines) != 1 || *out.CreditNote.Memo != "m" {
			t.Fatalf("credit note = %+v", out.CreditNote)
		}
	})
}

// creditableItem returns an issued or paid invoice of the demo network and
// one of its items with more than 10 left to credit.
func creditableItem(t testing.TB, ts *testServer) (invoice, item string) {
	t.Helper()
	for _, inv := range ts.Manifest.IDs["invoice"] {
		var out struct {
			Invoice      wire.Invoice
			InvoiceItems []wire.InvoiceItem
		}
		ts.ok(t, ts.basic(), 200, "GET", "/billing/invoices/v1/"+inv+"/items", nil).json(t, &out)
		if st := *out.Invoice.Status; st != "issued" && st != "paid" {
			continue
		}
		for _, it := range out.InvoiceItems {
			var credited float64
			ts.db.read.QueryRow(`SELECT credited_amount FROM invoice_items WHERE id = ?`, it.ID).Scan(&credited)
			if *it.TotalAmount-credited > 10 {
				return inv, it.ID
			}
		}
	}
	t.Fatal("no creditable item in the demo data")
	return "", ""
}

var _ = fmt.Sprint
var _ = http.StatusOK
