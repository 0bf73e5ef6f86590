package restserver

import (
	"testing"

	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver/wire"
)

// TestCreditNoteLineRoundingToZeroIsRefused: a line whose credit rounds to
// 0.00 (by amount or by quantity) is answered 400 naming the line; no note
// is stored and no number consumed.
func TestCreditNoteLineRoundingToZeroIsRefused(t *testing.T) {
	ts := newTestServer(t)
	inv, item := freshInvoice(t, ts, "issued") // 3 x 40
	notes := ts.count(t, "credit_notes")
	ts.do(t, ts.basic(), "POST", restclient.OpListCreditNotes.Route, creditNoteBody(inv, "other", map[string]any{"invoiceItemRef": item, "amount": 0.004})).
		wantError(t, 400, "invalid_request", "creditNote.lines[0].amount: credits 0.00")
	// 120 / 3 x 0.0001 = 0.004 -> 0.00: the quantity is named.
	inv2, item2 := freshInvoice(t, ts, "issued")
	ts.do(t, ts.basic(), "POST", restclient.OpListCreditNotes.Route, creditNoteBody(inv2, "other",
		map[string]any{"invoiceItemRef": item2, "quantity": 0.0001})).
		wantError(t, 400, "invalid_request", "creditNote.lines[0].quantity: credits 0.00")
	if n := ts.count(t, "credit_notes"); n != notes {
		t.Fatalf("%d credit notes stored for refused requests", n-notes)
	}
	var credited float64
	ts.db.read.QueryRow(`SELECT credited_amount + credited_quantity FROM invoice_items WHERE id = ?`, item2).Scan(&credited)
	if credited != 0 {
		t.Fatalf("the item was credited %v", credited)
	}
	// The first real note of the invoice gets the first number.
	var out struct{ CreditNote wire.CreditNote }
	ts.ok(t, ts.basic(), 201, "POST", restclient.OpListCreditNotes.Route, creditNoteBody(inv, "other", map[string]any{"invoiceItemRef": item, "amount": 0.01})).json(t, &out)
	if *out.CreditNote.Number != "CN-T-1-1" || *out.CreditNote.TotalAmount != 0.01 {
		t.Fatalf("credit note number %s total %v, want CN-T-1-1 0.01", *out.CreditNote.Number, *out.CreditNote.TotalAmount)
	}
}

// TestCreditNoteRefundIDOfAnotherNetwork: a refund id naming another
// network's transaction is answered as an unknown transaction (404) and
// nothing is stored; one of the caller's network is accepted.
func TestCreditNoteRefundIDOfAnotherNetwork(t *testing.T) {
	ts := newTestServer(t)
	inv, item := freshInvoice(t, ts, "paid")
	own := ts.Manifest.IDs["transaction"][0]
	foreign := ts.Manifest.OtherNetworks[0].IDs["transaction"][0]
	body := func(refundID string) map[string]any {
		b := creditNoteBody(inv, "other", map[string]any{"invoiceItemRef": item, "amount": 10})
		b["creditNote"].(map[string]any)["refunds"] = []any{map[string]any{"amount": 10, "transactionRef": own, "id": refundID}}
		return b
	}
	notes := ts.count(t, "credit_notes")
	// Another network's transaction and an id that names nothing get the
	// same answer: the 404 reveals nothing about other tenants.
	for _, id := range []string{foreign, "00000000-0000-4000-8000-0000000000aa"} {
		ts.do(t, ts.basic(), "POST", restclient.OpListCreditNotes.Route, body(id)).
			wantError(t, 404, "not_found", "creditNote.refunds[0].id: transaction not found")
	}
	if n := ts.count(t, "credit_notes"); n != notes {
		t.Fatalf("a credit note with a refund id outside the caller's transactions was stored")
	}
	var out struct{ CreditNote wire.CreditNote }
	ts.ok(t, ts.basic(), 201, "POST", restclient.OpListCreditNotes.Route, body(own)).json(t, &out)
	if len(out.CreditNote.Refunds) != 1 || out.CreditNote.Refunds[0].ID != own {
		t.Fatalf("refunds = %+v", out.CreditNote.Refunds)
	}
}
