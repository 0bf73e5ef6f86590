package restserver

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/workspacenet/facade/restserver/wire"
)

// TestDocPagesEncodeAsMarshal: a list page written by appendJSON is
// byte for byte what json.Marshal writes for it, whatever its documents
// and tokens.
func TestDocPagesEncodeAsMarshal(t *testing.T) {
	docs := []json.RawMessage{
		json.RawMessage(`{"id":"a","title":"caf\u00e9 \u003cb\u003e","amount":12.5,"tags":["x"],"n":null}`),
		json.RawMessage(`{"id":"b","nested":{"createDate":"2026-01-02T03:04:05Z"},"ok":true}`),
	}
	tokens := []string{"", "eyJhIjoxfQ-_x", `odd "token" <&> é` + "\n"}
	for _, d := range [][]json.RawMessage{nil, {}, docs[:1], docs} {
		for _, next := range tokens {
			for _, search := range tokens {
				for _, body := range []jsonAppender{
					transactionsPage{Transactions: d, NextPageToken: next},
					ordersPage{Orders: d, NextPageToken: next},
					creditNotesPage{CreditNotes: d, NextPageToken: next, SearchQueryNext: search},
					redemptionsPage{Redemptions: d, NextPageToken: next, SearchQueryNext: search},
				} {
					want, err := json.Marshal(body)
					if err != nil {
						t.Fatal(err)
					}
					if got, err := body.appendJSON(nil); err != nil || string(got) != string(want) {
						t.Errorf("%T:\n got %s\nwant %s", body, got, want)
					}
				}
			}
		}
	}
}

// TestInvoiceItemsBodyAsBefore: GET /billing/invoices/v1/{id}/items, its
// items written as stored, is the same JSON (up to member order) as the
// invoice and its items decoded and encoded, for every demo invoice.
func TestInvoiceItemsBodyAsBefore(t *testing.T) {
	ts := newTestServer(t)
	ids := ts.Manifest.IDs["invoice"]
	if len(ids) == 0 {
		t.Fatal("no invoice in the demo data")
	}
	ctx := context.Background()
	withItems := 0
	for _, id := range ids {
		var got any
		ts.ok(t, ts.bearer(), 200, "GET", "/billing/invoices/v1/"+id+"/items", nil).json(t, &got)

		inv, raw, err := ts.db.invoiceWithItems(ctx, ts.Manifest.NetworkID, id)
		if err != nil {
			t.Fatal(err)
		}
		items := make([]wire.InvoiceItem, len(raw))
		for i, d := range raw {
			if err := json.Unmarshal(d, &items[i]); err != nil {
				t.Fatal(err)
			}
		}
		inv.Items, inv.ItemsCount = items, new(float64(len(items)))
		b, err := json.Marshal(map[string]any{"invoice": inv, "invoiceItems": items})
		if err != nil {
			t.Fatal(err)
		}
		var want any
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("invoice %s:\n got %v\nwant %v", id, got, want)
		}
		if len(items) > 0 {
			withItems++
		}
	}
	t.Logf("%d of %d invoices have items", withItems, len(ids))

	// An invoice without items (none in the demo data): "items" omitted,
	// "invoiceItems" empty, as encoding/json writes it.
	inv := &wire.Invoice{ID: "x", ItemsCount: new(float64(0))}
	got, err := invoiceItemsBody{invoice: inv, items: []json.RawMessage{}}.appendJSON(nil)
	want, _ := json.Marshal(map[string]any{"invoice": inv, "invoiceItems": []wire.InvoiceItem{}})
	if err != nil || string(got) != string(want) {
		t.Errorf("no items:\n got %s\nwant %s", got, want)
	}
}
