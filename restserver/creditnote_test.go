package restserver

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver/wire"
)

// Unit tests of the credit-note amount rules (docs/local-rest-service.md, "Amount rules"):
// computeCreditNote is pure, so each case states an invoice, its items and
// a request, and the amounts or the error that must come out.

const (
	testInvoice = "11111111-1111-4111-8111-111111111111"
	itemA       = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	itemB       = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
	itemC       = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
)

// stored returns an item of testInvoice of qty units at unit (tax included
// at rate percent), as the demo data computes it, with cq units and ca
// already credited.
func stored(id string, unit, qty, rate, cq, ca float64) *creditItem {
	it := wire.InvoiceItem{ID: id, InvoiceRef: new(testInvoice)}
	itemAmounts(&it, unit, qty, 0, rate)
	return &creditItem{item: it, invoiceID: testInvoice, creditedQty: cq, creditedAmount: ca}
}

func line(id string, qty, amount float64) creditLineInput {
	l := creditLineInput{itemID: id}
	if qty != 0 {
		l.quantity = new(qty)
	}
	if amount != 0 {
		l.amount = new(amount)
	}
	return l
}

func invoice(status string) *wire.Invoice {
	return &wire.Invoice{ID: testInvoice, Status: new(status), Number: new("INV-7"), CurrencyCode: new("EUR")}
}

// wantLine is what one computed line must hold; quantity -1 means absent.
type wantLine struct {
	quantity, creditedQty, amount, excl, tax, rate float64
}

func TestComputeCreditNoteLines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items []*creditItem
		lines []creditLineInput
		want  []wantLine
		total float64
		excl  float64
		taxes [][3]float64 // rate, amount, taxable amount; by rate
	}{
		{
			name:  "quantity only credits T/Q per unit",
			items: []*creditItem{stored(itemA, 40, 3, 20, 0, 0)},
			lines: []creditLineInput{line(itemA, 1, 0)},
			want:  []wantLine{{quantity: 1, creditedQty: 1, amount: 40, excl: 33.33, tax: 6.67, rate: 20}},
			total: 40, excl: 33.33, taxes: [][3]float64{{20, 6.67, 33.33}},
		},
		{
			name:  "quantity only rounds T/Q x q to cents",
			items: []*creditItem{stored(itemA, 33.34, 3, 0, 0, 0)}, // T = 100.02
			lines: []creditLineInput{line(itemA, 2, 0)},
			want:  []wantLine{{quantity: 2, creditedQty: 2, amount: 66.68, excl: 66.68, tax: 0, rate: 0}},
			total: 66.68, excl: 66.68, taxes: [][3]float64{{0, 0, 66.68}},
		},
		{
			name: "the remaining quantity credits the whole remaining amount",
			// 100 over 3 units; 1 unit was credited 30: the last 2 are 70, not 2 x 100/3.
			items: []*creditItem{{item: wire.InvoiceItem{ID: itemA, Quantity: new(3.0), TotalAmount: new(100.0)},
				invoiceID: testInvoice, creditedQty: 1, creditedAmount: 30}},
			lines: []creditLineInput{line(itemA, 2, 0)},
			want:  []wantLine{{quantity: 2, creditedQty: 2, amount: 70, excl: 70, tax: 0, rate: 0}},
			total: 70, excl: 70, taxes: [][3]float64{{0, 0, 70}},
		},
		{
			name:  "amount only: no line quantity, the remaining quantity is unchanged",
			items: []*creditItem{stored(itemA, 40, 3, 20, 0, 0)},
			lines: []creditLineInput{line(itemA, 0, 30)},
			want:  []wantLine{{quantity: -1, creditedQty: 0, amount: 30, excl: 25, tax: 5, rate: 20}},
			total: 30, excl: 25, taxes: [][3]float64{{20, 5, 25}},
		},
		{
			name:  "amount only is rounded to cents",
			items: []*creditItem{stored(itemA, 10, 1, 0, 0, 0)},
			lines: []creditLineInput{line(itemA, 0, 3.333)},
			want:  []wantLine{{quantity: -1, amount: 3.33, excl: 3.33, rate: 0}},
			total: 3.33, excl: 3.33, taxes: [][3]float64{{0, 0, 3.33}},
		},
		{
			name:  "both: the amount for the quantity",
			items: []*creditItem{stored(itemA, 40, 3, 20, 0, 0)},
			lines: []creditLineInput{line(itemA, 2, 12)},
			want:  []wantLine{{quantity: 2, creditedQty: 2, amount: 12, excl: 10, tax: 2, rate: 20}},
			total: 12, excl: 10, taxes: [][3]float64{{20, 2, 10}},
		},
		{
			name:  "neither: everything that remains",
			items: []*creditItem{stored(itemA, 40, 3, 20, 1, 40)},
			lines: []creditLineInput{line(itemA, 0, 0)},
			want:  []wantLine{{quantity: 2, creditedQty: 2, amount: 80, excl: 66.67, tax: 13.33, rate: 20}},
			total: 80, excl: 66.67, taxes: [][3]float64{{20, 13.33, 66.67}},
		},
		{
			name:  "an amount that rounds to the remaining amount is accepted",
			items: []*creditItem{stored(itemA, 10, 1, 0, 0, 0)},
			lines: []creditLineInput{line(itemA, 0, 10.004)},
			want:  []wantLine{{quantity: -1, amount: 10, excl: 10}},
			total: 10, excl: 10, taxes: [][3]float64{{0, 0, 10}},
		},
		{
			name:  "amount only on an item whose quantity is all credited",
			items: []*creditItem{stored(itemA, 10, 2, 0, 2, 15)},
			lines: []creditLineInput{line(itemA, 0, 5)},
			want:  []wantLine{{quantity: -1, amount: 5, excl: 5}},
			total: 5, excl: 5, taxes: [][3]float64{{0, 0, 5}},
		},
		{
			name: "an item without tax: rate 0, tax included, excl = amount",
			items: []*creditItem{{item: wire.InvoiceItem{ID: itemA, Quantity: new(1.0), TotalAmount: new(9.99)},
				invoiceID: testInvoice}},
			lines: []creditLineInput{line(itemA, 0, 0)},
			want:  []wantLine{{quantity: 1, creditedQty: 1, amount: 9.99, excl: 9.99, tax: 0, rate: 0}},
			total: 9.99, excl: 9.99, taxes: [][3]float64{{0, 0, 9.99}},
		},
		{
			name:  "taxes are grouped by rate and listed by rate; totals are the sums",
			items: []*creditItem{stored(itemA, 12, 1, 20, 0, 0), stored(itemB, 10.9, 1, 9, 0, 0), stored(itemC, 24, 1, 20, 0, 0)},
			lines: []creditLineInput{line(itemA, 0, 0), line(itemB, 0, 0), line(itemC, 0, 0)},
			want: []wantLine{
				{quantity: 1, creditedQty: 1, amount: 12, excl: 10, tax: 2, rate: 20},
				{quantity: 1, creditedQty: 1, amount: 10.9, excl: 10, tax: 0.9, rate: 9},
				{quantity: 1, creditedQty: 1, amount: 24, excl: 20, tax: 4, rate: 20},
			},
			total: 46.9, excl: 40, taxes: [][3]float64{{9, 0.9, 10}, {20, 6, 30}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &creditNoteInput{invoiceID: testInvoice, reason: "other", lines: tc.lines}
			got, err := computeCreditNote(in, invoice("issued"), tc.items)
			if err != nil {
				t.Fatalf("computeCreditNote: %v", err)
			}
			if len(got.lines) != len(tc.want) {
				t.Fatalf("%d lines, want %d", len(got.lines), len(tc.want))
			}
			for i, w := range tc.want {
				l := got.lines[i]
				if w.quantity < 0 && l.quantity != nil || w.quantity >= 0 && (l.quantity == nil || *l.quantity != w.quantity) {
					t.Errorf("line %d: quantity %v, want %v (-1: absent)", i, ptrString(l.quantity), w.quantity)
				}
				if l.creditedQty != w.creditedQty || l.amount != w.amount || l.excl != w.excl ||
					*l.tax.Amount != w.tax || *l.tax.TaxableAmount != w.excl || deref(l.tax.Rate, -1) != w.rate {
					t.Errorf("line %d: credited qty %v amount %v excl %v tax %v/%v rate %v, want %+v",
						i, l.creditedQty, l.amount, l.excl, *l.tax.Amount, *l.tax.TaxableAmount, deref(l.tax.Rate, -1), w)
				}
				if l.item.ID != tc.items[i].item.ID {
					t.Errorf("line %d is of item %s, want %s", i, l.item.ID, tc.items[i].item.ID)
				}
			}
			if got.total != tc.total || got.excl != tc.excl {
				t.Errorf("total %v excl %v, want %v %v", got.total, got.excl, tc.total, tc.excl)
			}
			if len(got.taxes) != len(tc.taxes) {
				t.Fatalf("taxes %+v, want %v", got.taxes, tc.taxes)
			}
			for i, w := range tc.taxes {
				tx := got.taxes[i]
				if *tx.Rate != w[0] || *tx.Amount != w[1] || *tx.TaxableAmount != w[2] || !*tx.Inclusive {
					t.Errorf("tax %d = rate %v amount %v taxable %v inclusive %v, want %v", i, *tx.Rate, *tx.Amount, *tx.TaxableAmount, *tx.Inclusive, w)
				}
			}
			// Unpaid (issued) invoice: a pre-payment note of the total.
			if got.paid || got.noteType != "prePayment" || got.prePayment != tc.total || got.postPayment != 0 ||
				got.creditAmount != 0 || got.outOfBand != 0 {
				t.Errorf("split %+v, want a pre-payment note of %v", got, tc.total)
			}
		})
	}
}

func ptrString(p *float64) string {
	if p == nil {
		return "absent"
	}
	return fmt.Sprint(*p)
}

func TestComputeCreditNoteErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  string
		items   []*creditItem
		lines   []creditLineInput
		modify  func(*creditNoteInput)
		kind    errKind
		message string
	}{
		{"voided invoice", "voided", []*creditItem{stored(itemA, 40, 3, 20, 0, 0)}, []creditLineInput{line(itemA, 0, 0)}, nil,
			kindConflict, "creditNote.invoiceRef: the invoice is voided"},
		{"unknown item", "issued", []*creditItem{nil}, []creditLineInput{line(itemA, 0, 0)}, nil,
			kindNotFound, "creditNote.lines[0].invoiceItemRef: invoice item not found"},
		{"item of another invoice", "issued", []*creditItem{{item: wire.InvoiceItem{ID: itemA}, invoiceID: itemC}},
			[]creditLineInput{line(itemA, 0, 0)}, nil, kindInvalid, "creditNote.lines[0].invoiceItemRef: the item belongs to another invoice"},
		{"nothing left to credit", "issued", []*creditItem{stored(itemA, 40, 3, 20, 3, 120)}, []creditLineInput{line(itemA, 0, 1)}, nil,
			kindConflict, "creditNote.lines[0].invoiceItemRef: the item is already fully credited"},
		{"no quantity left, by quantity", "issued", []*creditItem{stored(itemA, 40, 3, 20, 3, 100)}, []creditLineInput{line(itemA, 1, 0)}, nil,
			kindConflict, "creditNote.lines[0].invoiceItemRef: the item is already fully credited"},
		{"more than the remaining quantity", "issued", []*creditItem{stored(itemA, 40, 3, 20, 1, 40)}, []creditLineInput{line(itemA, 3, 0)}, nil,
			kindConflict, "creditNote.lines[0].quantity: exceeds the item's remaining quantity 2"},
		{"more than the remaining amount", "issued", []*creditItem{stored(itemA, 40, 3, 20, 1, 40)}, []creditLineInput{line(itemA, 0, 80.01)}, nil,
			kindConflict, "creditNote.lines[0].amount: exceeds the item's remaining amount 80.00"},
		{"lines are checked in order: a conflict before an unknown item", "issued", []*creditItem{stored(itemA, 10, 1, 0, 0, 0), nil},
			[]creditLineInput{line(itemA, 0, 11), line(itemB, 0, 0)}, nil,
			kindConflict, "creditNote.lines[0].amount: exceeds the item's remaining amount 10.00"},
		{"lines are checked in order: an unknown item before a conflict", "issued", []*creditItem{nil, stored(itemA, 10, 1, 0, 0, 0)},
			[]creditLineInput{line(itemB, 0, 0), line(itemA, 0, 11)}, nil,
			kindNotFound, "creditNote.lines[0].invoiceItemRef: invoice item not found"},
		{"unpaid: no refunds", "issued", []*creditItem{stored(itemA, 10, 1, 0, 0, 0)}, []creditLineInput{line(itemA, 0, 0)},
			func(in *creditNoteInput) {
				in.refunds, in.refundTotal = []refundInput{{amount: 1, transactionID: itemC}}, 1
			},
			kindInvalid, "creditNote.refunds: refunds, outOfBandAmount and creditAmount apply to paid invoices only"},
		{"unpaid: no out-of-band amount", "draft", []*creditItem{stored(itemA, 10, 1, 0, 0, 0)}, []creditLineInput{line(itemA, 0, 0)},
			func(in *creditNoteInput) { in.outOfBandAmount = new(0.5) },
			kindInvalid, "apply to paid invoices only"},
		{"unpaid: no credit amount", "issued", []*creditItem{stored(itemA, 10, 1, 0, 0, 0)}, []creditLineInput{line(itemA, 0, 0)},
			func(in *creditNoteInput) { in.creditAmount = new(0.5) },
			kindInvalid, "apply to paid invoices only"},
		{"paid: parts above the total", "paid", []*creditItem{stored(itemA, 10, 1, 0, 0, 0)}, []creditLineInput{line(itemA, 0, 0)},
			func(in *creditNoteInput) {
				in.refunds, in.refundTotal = []refundInput{{amount: 8, transactionID: itemC}}, 8
				in.outOfBandAmount = new(3.0)
			},
			kindInvalid, "creditNote.creditAmount: refunds + outOfBandAmount + creditAmount must equal the credited total 10.00"},
		{"paid: a credit amount that does not add up", "paid", []*creditItem{stored(itemA, 10, 1, 0, 0, 0)}, []creditLineInput{line(itemA, 0, 0)},
			func(in *creditNoteInput) { in.creditAmount = new(9.0) },
			kindInvalid, "must equal the credited total 10.00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &creditNoteInput{invoiceID: testInvoice, reason: "other", lines: tc.lines}
			if tc.modify != nil {
				tc.modify(in)
			}
			got, err := computeCreditNote(in, invoice(tc.status), tc.items)
			var ae *apiError
			if !errors.As(err, &ae) || ae.Kind != tc.kind || !strings.Contains(ae.Message, tc.message) {
				t.Fatalf("computeCreditNote = %+v, %v; want a %s error %q", got, err, tc.kind, tc.message)
			}
		})
	}
}

func TestComputeCreditNotePaidSplit(t *testing.T) {
	for _, tc := range []struct {
		name                          string
		refunds                       []float64
		outOfBand, creditAmount       *float64
		wantCreditAmount, wantOutBand float64
	}{
		{"all to the customer's balance by default", nil, nil, nil, 50, 0},
		{"the balance gets the remainder of refunds and out-of-band", []float64{20}, new(5.0), nil, 25, 5},
		{"several refunds", []float64{10, 15.5}, nil, nil, 24.5, 0},
		{"an explicit credit amount that adds up", []float64{20}, new(5.0), new(25.0), 25, 5},
		{"all refunded", []float64{50}, nil, nil, 0, 0},
		{"half a cent of rounding is tolerated", []float64{49.996}, nil, new(0.0), 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &creditNoteInput{invoiceID: testInvoice, reason: "other", lines: []creditLineInput{line(itemA, 0, 50)},
				outOfBandAmount: tc.outOfBand, creditAmount: tc.creditAmount}
			for _, r := range tc.refunds {
				in.refunds = append(in.refunds, refundInput{amount: r, transactionID: itemC})
				in.refundTotal += r
			}
			got, err := computeCreditNote(in, invoice("paid"), []*creditItem{stored(itemA, 40, 3, 20, 0, 0)})
			if err != nil {
				t.Fatalf("computeCreditNote: %v", err)
			}
			if !got.paid || got.noteType != "postPayment" || got.postPayment != 50 || got.prePayment != 0 || got.total != 50 {
				t.Fatalf("split %+v, want a post-payment note of 50", got)
			}
			if got.creditAmount != tc.wantCreditAmount || got.outOfBand != tc.wantOutBand {
				t.Fatalf("credit amount %v out of band %v, want %v %v", got.creditAmount, got.outOfBand, tc.wantCreditAmount, tc.wantOutBand)
			}
		})
	}
}

func TestComputeCreditNoteDoesNotChangeItsInputs(t *testing.T) {
	items := []*creditItem{stored(itemA, 40, 3, 20, 1, 40)}
	before := *items[0]
	beforeTax := *items[0].item.Tax
	in := &creditNoteInput{invoiceID: testInvoice, reason: "other", lines: []creditLineInput{line(itemA, 0, 0)}}
	if _, err := computeCreditNote(in, invoice("issued"), items); err != nil {
		t.Fatal(err)
	}
	if items[0].creditedQty != before.creditedQty || items[0].creditedAmount != before.creditedAmount ||
		*items[0].item.TotalAmount != *before.item.TotalAmount || *items[0].item.Tax.Amount != *beforeTax.Amount {
		t.Fatalf("item changed: %+v", items[0])
	}
}

func TestApplyCreditToInvoice(t *testing.T) {
	inv := &wire.Invoice{CurrencyCode: new("EUR"), AmountDue: new(120.0), AmountRemaining: new(120.0)}
	applyCreditToInvoice(inv, 40, false, 0)
	if *inv.AmountDue != 80 || *inv.AmountRemaining != 80 || *inv.PrePaymentCreditNotesAmount != 40 || *inv.PrePaymentCreditAmount != 40 ||
		*inv.BaseAmounts.AmountDue != -40 || *inv.BaseAmounts.PrePaymentCreditNotesAmount != 40 || inv.PostPaymentCreditNotesAmount != nil {
		t.Fatalf("unpaid invoice after a credit of 40: %+v base %+v", inv, inv.BaseAmounts)
	}
	paid := &wire.Invoice{AmountDue: new(120.0), BaseAmounts: &wire.InvoiceBaseAmounts{PostPaymentCreditNotesAmount: new(10.0)}}
	applyCreditToInvoice(paid, 50, true, 25)
	if *paid.PostPaymentCreditNotesAmount != 50 || *paid.BaseAmounts.PostPaymentCreditNotesAmount != 60 || *paid.PostPaymentCreditAmount != 25 ||
		*paid.AmountDue != 120 || paid.PrePaymentCreditNotesAmount != nil {
		t.Fatalf("paid invoice after a credit of 50: %+v base %+v", paid, paid.BaseAmounts)
	}
}

func TestValidateCreditNote(t *testing.T) {
	now := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	req := &wire.CreditNoteCreateRequest{
		InvoiceRef: new(strings.ToUpper(testInvoice)), Reason: new("duplicate"),
		Lines:        []wire.CreditNoteLineRequest{{InvoiceItemRef: new(strings.ToUpper(itemA)), Quantity: new(1.0)}, {InvoiceItemRef: new(itemB)}},
		InternalNote: new("note"),
		Refunds: []wire.CreditNoteRefundRequest{{Amount: new(2.5), TransactionRef: new(itemC), ID: new("DDDDDDDD-DDDD-4DDD-8DDD-DDDDDDDDDDDD")},
			{Amount: new(1.25), TransactionRef: new(itemC)}},
	}
	in, err := validateCreditNote(req, now)
	if err != nil {
		t.Fatal(err)
	}
	if in.invoiceID != testInvoice || in.lines[0].itemID != itemA || *in.lines[0].quantity != 1 || in.lines[1].quantity != nil || in.lines[1].amount != nil {
		t.Fatalf("input %+v", in)
	}
	if *in.memo != "note" || !in.effectiveDate.Equal(now) || in.refundTotal != 3.75 ||
		in.refunds[0].id != "dddddddd-dddd-4ddd-8ddd-dddddddddddd" || in.refunds[1].id != "" {
		t.Fatalf("input %+v (memo %q, effective %v, refunds %+v)", in, *in.memo, in.effectiveDate, in.refunds)
	}
	// memo wins over internalNote; an effective date is kept.
	req.Memo, req.EffectiveDate = new("memo"), wire.NewTimestamp(now.AddDate(0, 0, -1))
	if in, err = validateCreditNote(req, now); err != nil || *in.memo != "memo" || !in.effectiveDate.Equal(now.AddDate(0, 0, -1)) {
		t.Fatalf("input %+v, %v", in, err)
	}
	// The same item twice, in any case, is refused.
	req.Lines[1].InvoiceItemRef = new(itemA)
	if _, err := validateCreditNote(req, now); err == nil || !strings.Contains(err.Error(), "creditNote.lines[1].invoiceItemRef: the item appears in two lines") {
		t.Fatalf("duplicate item: %v", err)
	}
}

// TestDeletedInvoiceItem: the demo has an item deleted from a draft
// invoice; it is listed with its deleteDate, not counted in the invoice's
// total, and cannot be credited (409, naming the line).
func TestDeletedInvoiceItem(t *testing.T) {
	ts := newTestServer(t)
	type item struct {
		ID          string   `json:"id"`
		TotalAmount float64  `json:"totalAmount"`
		DeleteDate  *string  `json:"deleteDate"`
		Quantity    *float64 `json:"quantity"`
	}
	var found *item
	var invID string
	for _, inv := range ts.Manifest.IDs["invoice"] {
		var out struct {
			Invoice struct {
				TotalAmount float64 `json:"totalAmount"`
				ItemsCount  float64 `json:"itemsCount"`
			} `json:"invoice"`
			InvoiceItems []item `json:"invoiceItems"`
		}
		ts.ok(t, ts.basic(), 200, "GET", "/billing/invoices/v1/"+inv+"/items", nil).json(t, &out)
		sum := 0.0
		for i, it := range out.InvoiceItems {
			if it.DeleteDate != nil {
				found, invID = &out.InvoiceItems[i], inv
				continue
			}
			sum += it.TotalAmount
		}
		if found != nil {
			if math.Abs(sum-out.Invoice.TotalAmount) > 0.005 {
				t.Errorf("invoice %s: total %.2f, its items that are not deleted sum to %.2f", inv, out.Invoice.TotalAmount, sum)
			}
			break
		}
	}
	if found == nil {
		t.Fatal("no deleted invoice item in the demo data")
	}
	ts.do(t, ts.basic(), "POST", restclient.OpListCreditNotes.Route, map[string]any{"creditNote": map[string]any{"invoiceRef": invID, "reason": "other",
		"lines": []any{map[string]any{"invoiceItemRef": found.ID}}}}).wantError(t, 409, "conflict", "creditNote.lines[0].invoiceItemRef: the item was deleted")
}
