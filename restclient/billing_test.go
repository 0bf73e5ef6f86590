package restclient

import (
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"testing"
)

func TestCreateCreditNote(t *testing.T) {
	u := newUpstream(t)
	obs := &observations{}
	note := fixture(t, "credit_note.json")
	u.serveJSON(OpCreateCreditNote.Pattern(), wantRequest{
		method: "POST", path: OpListCreditNotes.Route,
		body: `{"creditNote":{"invoiceRef":"inv-1","reason":"duplicate","lines":[{"invoiceItemRef":"item-1","amount":0,"quantity":2}],
			"creditAmount":0,"memo":"m","effectiveDate":"2021-05-21T10:00:00Z","outOfBandAmount":1.5,
			"refunds":[{"amount":3,"id":"r-1","transactionRef":"tx-1"}]}}`,
	}, http.StatusCreated, `{"creditNote":`+note+`}`)
	c := u.client()

	got, resp, err := c.Billing.CreateCreditNote(obs.ctx(t), &CreditNoteCreateRequest{
		InvoiceRef: new("inv-1"),
		Reason:     new("duplicate"),
		Lines:      []CreditNoteLineRequest{{InvoiceItemRef: new("item-1"), Amount: new(0.0), Quantity: new(2.0)}},
		// An explicit zero amount is sent; absent fields are not.
		CreditAmount:    new(0.0),
		EffectiveDate:   NewTimestamp(mustTime(t, "2021-05-21T10:00:00Z")),
		Memo:            new("m"),
		OutOfBandAmount: new(1.5),
		Refunds:         []CreditNoteRefundRequest{{Amount: new(3.0), ID: new("r-1"), TransactionRef: new("tx-1")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("status = %d", resp.StatusCode)
	}
	assertComplete(t, got, nil)
	assertRoundTrip(t, got, note)
	if *got.CreditAmount != 7.5 || got.Lines[0].Discounts[0].Promocode.Expiration.String() != "2021-05-21T12:30:00Z" {
		t.Errorf("unexpected values: %v %v", *got.CreditAmount, got.Lines[0].Discounts[0].Promocode.Expiration)
	}
	checkObserved(t, obs, "POST", OpListCreditNotes.Route, 201)

	if _, _, err := c.Billing.CreateCreditNote(obs.ctx(t), nil); err == nil {
		t.Error("nil request accepted")
	}
}

func TestListCreditNotes(t *testing.T) {
	u := newUpstream(t)
	note := fixture(t, "credit_note.json")
	u.serveJSON(OpListCreditNotes.Pattern(), wantRequest{
		method: "GET", path: OpListCreditNotes.Route,
		query: url.Values{"invoiceRef": {"inv-1"}, "locationRef": {"loc-1"}, "limit": {"10"}, "nextPageToken": {"p2"}},
	}, http.StatusOK, `{"creditNotes":[`+note+`],"nextPageToken":"p3","searchQueryNext":"invoiceRef=inv-1&nextPageToken=p3"}`)
	c := u.client()

	got, resp, err := c.Billing.ListCreditNotes(ctxT(t), &CreditNoteListOptions{
		InvoiceRef: "inv-1", LocationRef: "loc-1", ListOptions: ListOptions{Limit: 10, NextPageToken: "p2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("got %d notes", len(got))
	}
	assertComplete(t, got[0], nil)
	assertRoundTrip(t, got[0], note)
	if resp.NextPageToken != "p3" || resp.SearchQueryNext != "invoiceRef=inv-1&nextPageToken=p3" {
		t.Errorf("paging = %q %q", resp.NextPageToken, resp.SearchQueryNext)
	}
}

func TestAllCreditNotes(t *testing.T) {
	u := newUpstream(t)
	u.handle(OpListCreditNotes.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("locationRef") != "loc-1" {
			t.Errorf("filter lost on page %q", r.URL.Query().Get("nextPageToken"))
		}
		switch r.URL.Query().Get("nextPageToken") {
		case "":
			w.Write([]byte(`{"creditNotes":[{"id":"a"},{"id":"b"}],"nextPageToken":"t2","searchQueryNext":"x"}`))
		case "t2":
			w.Write([]byte(`{"creditNotes":[{"id":"c"}]}`))
		default:
			t.Errorf("unexpected token")
		}
	})
	c := u.client()
	var ids []string
	for n, err := range c.Billing.AllCreditNotes(ctxT(t), &CreditNoteListOptions{LocationRef: "loc-1"}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, n.ID)
	}
	if !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Errorf("ids = %v", ids)
	}
}

var invoicePartials = map[string][]string{
	".Customer.User": {"ID", "Name", "PhotoURL", "Surname"},
}

var invoiceItemPartials = map[string][]string{
	".Booking.Resource":    {"ID", "Title", "Type"},
	".Order.Product":       {"ID", "Title"},
	".Order.ProductOption": {"ID", "Title"},
	".Ticket.Event":        {"EndDate", "ID", "StartDate", "Title"},
	".UserCreatedBy":       {"ID", "Name", "Surname"},
}

func TestListInvoiceItems(t *testing.T) {
	u := newUpstream(t)
	inv, item := fixture(t, "invoice.json"), fixture(t, "invoice_item.json")
	u.serveJSON(OpListInvoiceItems.Pattern(), wantRequest{
		method: "GET", path: "/billing/invoices/v1/inv%2F1/items",
	}, http.StatusOK, `{"invoice":`+inv+`,"invoiceItems":[`+item+`],"addedLater":{"x":1}}`)
	c := u.client()

	got, _, err := c.Billing.ListInvoiceItems(ctxT(t), "inv/1")
	if err != nil {
		t.Fatal(err)
	}
	partials := maps(invoicePartials)
	for k, v := range invoiceItemPartials {
		partials[".Items"+k] = v
	}
	assertComplete(t, got.Invoice, partials)
	assertRoundTrip(t, got.Invoice, inv)
	if len(got.Items) != 1 {
		t.Fatalf("%d items", len(got.Items))
	}
	assertComplete(t, got.Items[0], invoiceItemPartials)
	assertRoundTrip(t, got.Items[0], item)
	if string(got.Invoice.Company.Metadata) == "" {
		t.Error("metadata lost")
	}

	if _, _, err := c.Billing.ListInvoiceItems(ctxT(t), ".."); err == nil {
		t.Error(`id ".." accepted`)
	}
}

func maps(m map[string][]string) map[string][]string {
	out := make(map[string][]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestListInvoiceItemsShapes: whichever of invoice.items and invoiceItems the
// upstream fills, ListInvoiceItems returns both filled with the same items in
// upstream order.
func TestListInvoiceItemsShapes(t *testing.T) {
	const items = `[{"id":"a","invoiceRef":"inv-1"},{"id":"b","invoiceRef":"inv-1"}]`
	cases := []struct{ name, body string }{
		{"only invoice.items", `{"invoice":{"id":"inv-1","items":` + items + `}}`},
		{"only invoiceItems", `{"invoice":{"id":"inv-1"},"invoiceItems":` + items + `}`},
		{"invoiceItems with empty invoice.items", `{"invoice":{"id":"inv-1","items":[]},"invoiceItems":` + items + `}`},
		{"both", `{"invoice":{"id":"inv-1","items":` + items + `},"invoiceItems":` + items + `}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := newUpstream(t)
			u.serveJSON(OpListInvoiceItems.Pattern(), wantRequest{method: "GET", path: "/billing/invoices/v1/inv-1/items"}, http.StatusOK, tc.body)
			got, _, err := u.client().Billing.ListInvoiceItems(ctxT(t), "inv-1")
			if err != nil {
				t.Fatal(err)
			}
			if got.Invoice == nil || got.Invoice.ID != "inv-1" {
				t.Fatalf("invoice %+v", got.Invoice)
			}
			if len(got.Invoice.Items) != 2 || len(got.Items) != 2 {
				t.Fatalf("%d invoice.items, %d invoiceItems", len(got.Invoice.Items), len(got.Items))
			}
			for i, id := range []string{"a", "b"} {
				if got.Invoice.Items[i].ID != id || got.Items[i].ID != id {
					t.Errorf("item %d: invoice.items %q, invoiceItems %q, want %q", i, got.Invoice.Items[i].ID, got.Items[i].ID, id)
				}
				if got.Items[i].InvoiceRef == nil || *got.Items[i].InvoiceRef != "inv-1" || !reflect.DeepEqual(got.Items[i], &got.Invoice.Items[i]) {
					t.Errorf("item %d differs: %+v, %+v", i, got.Items[i], got.Invoice.Items[i])
				}
			}
		})
	}

	t.Run("no invoice", func(t *testing.T) {
		u := newUpstream(t)
		u.serveJSON(OpListInvoiceItems.Pattern(), wantRequest{method: "GET", path: "/billing/invoices/v1/inv-1/items"}, http.StatusOK, `{"invoiceItems":`+items+`}`)
		got, _, err := u.client().Billing.ListInvoiceItems(ctxT(t), "inv-1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Invoice != nil || len(got.Items) != 2 {
			t.Errorf("invoice %+v, %d items", got.Invoice, len(got.Items))
		}
	})

	t.Run("null item", func(t *testing.T) {
		u := newUpstream(t)
		u.serveJSON(OpListInvoiceItems.Pattern(), wantRequest{method: "GET", path: "/billing/invoices/v1/inv-1/items"}, http.StatusOK, `{"invoice":{"id":"inv-1"},"invoiceItems":[{"id":"a"},null]}`)
		var de *DecodeError
		if _, _, err := u.client().Billing.ListInvoiceItems(ctxT(t), "inv-1"); !errors.As(err, &de) {
			t.Errorf("null item: %v", err)
		}
	})
}
