package restserver

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/workspacenet/facade/internal/base/ids"
	"github.com/workspacenet/facade/restserver/wire"
)

// Credit notes in three steps (docs/local-rest-service.md, "Amount rules"):
//
//   - validateCreditNote checks the request on its own (no storage);
//   - computeCreditNote applies the amount rules to the invoice and its
//     items as stored (a pure function);
//   - the store's createCreditNote loads the invoice and items, calls
//     computeCreditNote and persists the result, in one write transaction.

// creditNoteReasons are the accepted credit-note reasons.
var creditNoteReasons = []string{"duplicate", "orderChange", "productUnsatisfactory", "fraudulent", "other"}

// amountEpsilon absorbs float rounding when comparing amounts (half a cent).
const amountEpsilon = 0.005

// quantityEpsilon absorbs float rounding when comparing quantities.
const quantityEpsilon = 1e-9

// creditNoteInput is a validated POST /billing/credit_notes/v1 body.
type creditNoteInput struct {
	invoiceID       string // lowercased
	reason          string
	lines           []creditLineInput
	creditAmount    *float64 // >= 0 when set
	outOfBandAmount *float64 // >= 0 when set
	refunds         []refundInput
	refundTotal     float64
	memo            *string // memo, or else internalNote
	effectiveDate   *wire.Timestamp
}

// creditLineInput is one requested line: an item and optionally a quantity
// and an amount (both > 0 when set).
type creditLineInput struct {
	itemID   string // lowercased, unique in the note
	quantity *float64
	amount   *float64
}

// refundInput is one requested refund.
type refundInput struct {
	id            string // lowercased; "" = generate one
	amount        float64
	transactionID string // lowercased
}

// validateCreditNote checks req and returns it as a creditNoteInput; now is
// the effective date when req has none. Every error is a 400 naming the
// field.
func validateCreditNote(req *wire.CreditNoteCreateRequest, now time.Time) (*creditNoteInput, error) {
	in := &creditNoteInput{}
	var err error
	if in.invoiceID, err = refParam(req.InvoiceRef, "creditNote.invoiceRef"); err != nil {
		return nil, err
	}
	if req.Reason == nil || *req.Reason == "" {
		return nil, invalidf("creditNote.reason: is required")
	}
	if !slices.Contains(creditNoteReasons, *req.Reason) {
		return nil, invalidf("creditNote.reason: must be one of %s", strings.Join(creditNoteReasons, ", "))
	}
	in.reason = *req.Reason
	if in.lines, err = validateCreditLines(req.Lines); err != nil {
		return nil, err
	}
	if req.CreditAmount != nil && *req.CreditAmount < 0 {
		return nil, invalidf("creditNote.creditAmount: must not be negative")
	}
	if req.OutOfBandAmount != nil && *req.OutOfBandAmount < 0 {
		return nil, invalidf("creditNote.outOfBandAmount: must not be negative")
	}
	in.creditAmount, in.outOfBandAmount = req.CreditAmount, req.OutOfBandAmount
	if in.refunds, in.refundTotal, err = validateRefunds(req.Refunds); err != nil {
		return nil, err
	}
	in.memo = req.Memo
	if in.memo == nil {
		in.memo = req.InternalNote
	}
	if err := maxLen(in.memo, 2000, "creditNote.memo"); err != nil {
		return nil, err
	}
	in.effectiveDate = req.EffectiveDate
	if in.effectiveDate == nil || in.effectiveDate.IsZero() {
		in.effectiveDate = wire.NewTimestamp(now)
	}
	return in, nil
}

// validateCreditLines checks a credit note's lines: 1 to 100, each of its
// own item, with a quantity and an amount greater than 0 when set.
func validateCreditLines(lines []wire.CreditNoteLineRequest) ([]creditLineInput, error) {
	if len(lines) == 0 {
		return nil, invalidf("creditNote.lines: at least one line is required")
	}
	if len(lines) > 100 {
		return nil, invalidf("creditNote.lines: at most 100 lines")
	}
	var out []creditLineInput
	for i, l := range lines {
		f := fmt.Sprintf("creditNote.lines[%d]", i)
		id, err := refParam(l.InvoiceItemRef, f+".invoiceItemRef")
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(l creditLineInput) bool { return l.itemID == id }) {
			return nil, invalidf("%s.invoiceItemRef: the item appears in two lines", f)
		}
		if l.Quantity != nil && *l.Quantity <= 0 {
			return nil, invalidf("%s.quantity: must be greater than 0", f)
		}
		if l.Amount != nil && *l.Amount <= 0 {
			return nil, invalidf("%s.amount: must be greater than 0", f)
		}
		out = append(out, creditLineInput{itemID: id, quantity: l.Quantity, amount: l.Amount})
	}
	return out, nil
}

// validateRefunds checks a credit note's refunds (each an amount greater
// than 0 to a transaction, with a uuid when it names one) and returns them
// with their total.
func validateRefunds(refunds []wire.CreditNoteRefundRequest) ([]refundInput, float64, error) {
	var (
		out   []refundInput
		total float64
	)
	for i, rf := range refunds {
		f := fmt.Sprintf("creditNote.refunds[%d]", i)
		if rf.Amount == nil || *rf.Amount <= 0 {
			return nil, 0, invalidf("%s.amount: must be greater than 0", f)
		}
		txID, err := refParam(rf.TransactionRef, f+".transactionRef")
		if err != nil {
			return nil, 0, err
		}
		if rf.ID != nil && !ids.IsUUID(*rf.ID) {
			return nil, 0, invalidf("%s.id: must be a uuid", f)
		}
		r := refundInput{amount: *rf.Amount, transactionID: txID}
		if rf.ID != nil {
			r.id = strings.ToLower(*rf.ID)
		}
		out = append(out, r)
		total += *rf.Amount
	}
	return out, total, nil
}

// creditItem is an invoice item as crediting sees it: the stored item,
// the invoice it belongs to and what earlier credit notes took from it.
type creditItem struct {
	item           wire.InvoiceItem
	invoiceID      string
	creditedQty    float64
	creditedAmount float64
}

// creditedLine is one computed line of a credit note.
type creditedLine struct {
	item *wire.InvoiceItem
	// quantity is the line's quantity as returned: nil when the line gives
	// an amount only.
	quantity *float64
	// creditedQty and amount are what the item's remaining quantity and
	// amount lose.
	creditedQty float64
	amount      float64
	excl        float64   // amount excluding tax
	tax         *wire.Tax // the line's tax: amount, taxable amount, the item's rate
}

// creditAmounts is the outcome of the amount rules for one credit note.
type creditAmounts struct {
	lines []creditedLine
	taxes []wire.Tax // grouped by rate and inclusiveness, by rate
	total float64    // sum of the lines
	excl  float64    // sum of the lines excluding tax
	paid  bool       // the invoice is paid: a post-payment note
	// noteType is "prePayment" or "postPayment".
	noteType string
	// creditAmount and outOfBand split a post-payment total with the
	// refunds; both 0 before payment.
	creditAmount, outOfBand float64
	// prePayment and postPayment: the total on the side of the payment the
	// note is on, 0 on the other.
	prePayment, postPayment float64
}

// computeCreditNote applies the amount rules of a credit note to the invoice
// inv and the stored items of its lines (items[i] is the item of
// in.lines[i], nil when there is no such item). It does no I/O. Its errors
// name the field at fault, checked in the order: the invoice (voided: 409),
// then each line in order (unknown item: 404; item of another invoice: 400;
// nothing left, too much quantity or amount: 409; an amount that rounds to
// 0.00: 400), then the split of the total (400).
func computeCreditNote(in *creditNoteInput, inv *wire.Invoice, items []*creditItem) (*creditAmounts, error) {
	if inv.Status != nil && *inv.Status == "voided" {
		return nil, conflictf("creditNote.invoiceRef: the invoice is voided")
	}
	out := &creditAmounts{}
	var taxes taxGroups
	for i, l := range in.lines {
		line, err := creditLine(fmt.Sprintf("creditNote.lines[%d]", i), l, items[i], in.invoiceID)
		if err != nil {
			return nil, err
		}
		taxes.add(line.tax, line.excl)
		out.lines = append(out.lines, line)
		out.total = round2(out.total + line.amount)
		out.excl = round2(out.excl + line.excl)
	}
	out.taxes = taxes.list()
	if err := out.split(in, inv); err != nil {
		return nil, err
	}
	return out, nil
}

// creditLine applies the amount rules to line l, named f, of a credit note
// of invoice invoiceID: ci is its stored item (nil: none). Without a
// quantity or an amount the line credits what remains of the item; with a
// quantity alone, that share of the item's total (what remains, for the
// last units).
func creditLine(f string, l creditLineInput, ci *creditItem, invoiceID string) (creditedLine, error) {
	if ci == nil {
		return creditedLine{}, notFoundf("%s.invoiceItemRef: invoice item not found", f)
	}
	if ci.invoiceID != invoiceID {
		return creditedLine{}, invalidf("%s.invoiceItemRef: the item belongs to another invoice", f)
	}
	item := &ci.item
	if item.DeleteDate != nil {
		return creditedLine{}, conflictf("%s.invoiceItemRef: the item was deleted from the invoice", f)
	}
	itemTotal, itemQty := deref(item.TotalAmount, 0), deref(item.Quantity, 1)
	remQ, remA := itemQty-ci.creditedQty, round2(itemTotal-ci.creditedAmount)
	var q, a float64
	switch {
	case l.quantity == nil && l.amount == nil:
		q, a = remQ, remA
	case l.amount == nil:
		q = *l.quantity
		if q >= remQ-quantityEpsilon {
			a = remA
		} else {
			a = round2(itemTotal / itemQty * q)
		}
	case l.quantity == nil:
		a = round2(*l.amount)
	default:
		q, a = *l.quantity, round2(*l.amount)
	}
	if err := creditFits(f, l, q, a, remQ, remA); err != nil {
		return creditedLine{}, err
	}
	lineExcl := a
	if itemTotal > 0 && item.TotalExcludingTaxAmount != nil {
		lineExcl = round2(a * *item.TotalExcludingTaxAmount / itemTotal)
	}
	tax := &wire.Tax{Amount: new(round2(a - lineExcl)), TaxableAmount: new(lineExcl), Rate: new(0.0), Inclusive: new(true)}
	if item.Tax != nil {
		tax.Rate, tax.Inclusive = item.Tax.Rate, item.Tax.Inclusive
	}
	line := creditedLine{item: item, creditedQty: q, amount: a, excl: lineExcl, tax: tax}
	if l.quantity != nil || l.amount == nil {
		line.quantity = new(q)
	}
	return line, nil
}

// creditFits checks that a line (l, named f) crediting quantity q and
// amount a fits what remains of its item (remQ, remA), and credits at
// least a cent.
func creditFits(f string, l creditLineInput, q, a, remQ, remA float64) error {
	if remA <= 0 || remQ <= quantityEpsilon && l.amount == nil {
		return conflictf("%s.invoiceItemRef: the item is already fully credited", f)
	}
	if q > remQ+quantityEpsilon {
		return conflictf("%s.quantity: exceeds the item's remaining quantity %g", f, remQ)
	}
	if a > remA+amountEpsilon {
		return conflictf("%s.amount: exceeds the item's remaining amount %.2f", f, remA)
	}
	if a < amountEpsilon {
		// Rounded to cents the line credits nothing: refused rather
		// than issued as a note (and a number) of 0.00.
		field := f + ".amount"
		if l.amount == nil {
			field = f + ".quantity"
		}
		return invalidf("%s: credits 0.00 once rounded to cents; a line must credit at least 0.01", field)
	}
	return nil
}

// taxGroups sums the lines' taxes by rate and inclusiveness.
type taxGroups struct {
	byKey map[taxKey]*wire.Tax
	keys  []taxKey // in the order first seen
}

type taxKey struct {
	rate      float64
	inclusive bool
}

// add counts a line's tax, on taxable amount excl.
func (g *taxGroups) add(tax *wire.Tax, excl float64) {
	key := taxKey{deref(tax.Rate, 0), deref(tax.Inclusive, true)}
	if t, ok := g.byKey[key]; ok {
		*t.Amount = round2(*t.Amount + *tax.Amount)
		*t.TaxableAmount = round2(*t.TaxableAmount + excl)
		return
	}
	if g.byKey == nil {
		g.byKey = map[taxKey]*wire.Tax{}
	}
	g.byKey[key] = &wire.Tax{Amount: new(*tax.Amount), TaxableAmount: new(excl), Rate: tax.Rate, Inclusive: tax.Inclusive}
	g.keys = append(g.keys, key)
}

// list returns the groups by rate (the first seen first among equal rates).
func (g *taxGroups) list() []wire.Tax {
	slices.SortStableFunc(g.keys, func(a, b taxKey) int { return cmp.Compare(a.rate, b.rate) })
	var out []wire.Tax
	for _, k := range g.keys {
		out = append(out, *g.byKey[k])
	}
	return out
}

// split places the total on its side of the payment of inv: before it the
// note reduces the amount due (and takes no refund, out-of-band amount or
// credit); after it, the total is the refunds, the out-of-band amount and
// the credit, which is the rest unless in sets it.
func (out *creditAmounts) split(in *creditNoteInput, inv *wire.Invoice) error {
	out.paid = inv.Status != nil && *inv.Status == "paid"
	out.noteType = "prePayment"
	if !out.paid {
		if in.refundTotal > 0 || deref(in.outOfBandAmount, 0) > 0 || deref(in.creditAmount, 0) > 0 {
			return invalidf("creditNote.refunds: refunds, outOfBandAmount and creditAmount apply to paid invoices only; this credit note reduces the amount due")
		}
		out.prePayment = out.total
		return nil
	}
	out.noteType = "postPayment"
	out.outOfBand = deref(in.outOfBandAmount, 0)
	out.creditAmount = round2(out.total - in.refundTotal - out.outOfBand)
	if in.creditAmount != nil {
		out.creditAmount = *in.creditAmount
	}
	if out.creditAmount < -amountEpsilon || abs(in.refundTotal+out.outOfBand+out.creditAmount-out.total) > amountEpsilon {
		return invalidf("creditNote.creditAmount: refunds + outOfBandAmount + creditAmount must equal the credited total %.2f", out.total)
	}
	out.postPayment = out.total
	return nil
}

// newCreditNote assembles the credit note of in with the computed amounts:
// number n+1 of invoice inv in network, issued at now.
func newCreditNote(in *creditNoteInput, inv *wire.Invoice, amounts *creditAmounts, network string, n int, now time.Time) wire.CreditNote {
	currency := deref(inv.CurrencyCode, "EUR")
	lines := make([]wire.CreditNoteLine, 0, len(amounts.lines))
	for _, l := range amounts.lines {
		item := l.item
		lines = append(lines, wire.CreditNoteLine{
			ID: newID(), InvoiceItemRef: new(item.ID), InvoiceRef: new(in.invoiceID), LocationRef: inv.LocationRef, NetworkRef: new(network),
			CreateDate: wire.NewTimestamp(now), UpdateDate: wire.NewTimestamp(now), CurrencyCode: new(currency),
			Quantity: l.quantity, UnitAmount: item.UnitAmount, UnitExcludingTaxAmount: item.UnitExcludingTaxAmount,
			TotalAmount: new(l.amount), TotalExcludingTaxAmount: new(l.excl), DiscountedAmount: new(0.0), Tax: l.tax, Memo: in.memo,
			BaseAmounts: &wire.LineBaseAmounts{CurrencyCode: new(currency), DiscountedAmount: new(0.0), Tax: l.tax,
				TotalAmount: new(l.amount), TotalExcludingTaxAmount: new(l.excl), UnitAmount: item.UnitAmount, UnitExcludingTaxAmount: item.UnitExcludingTaxAmount},
		})
	}
	var refunds []wire.CreditNoteRefund
	for _, rf := range in.refunds {
		id := rf.id
		if id == "" {
			id = newID()
		}
		refunds = append(refunds, wire.CreditNoteRefund{ID: id, Amount: new(rf.amount), CurrencyCode: new(currency),
			TransactionRef: new(rf.transactionID), Method: &wire.CreditNoteRefundMethod{Label: new("External"), Type: new("external")}})
	}
	number := fmt.Sprintf("CN-%s-%d", deref(inv.Number, "0"), n+1)
	total, excl, pre, post := amounts.total, amounts.excl, amounts.prePayment, amounts.postPayment
	return wire.CreditNote{
		ID: newID(), InvoiceRef: new(in.invoiceID), LocationRef: inv.LocationRef, NetworkRef: new(network),
		CreateDate: wire.NewTimestamp(now), UpdateDate: wire.NewTimestamp(now), EffectiveDate: in.effectiveDate,
		CurrencyCode: new(currency), Number: new(number), Title: new("Credit note " + number), Status: new("issued"), Type: new(amounts.noteType),
		Reason: new(in.reason), Memo: in.memo, InternalNote: in.memo, Lines: lines, Refunds: refunds,
		CreditAmount: new(amounts.creditAmount), OutOfBandAmount: new(amounts.outOfBand), PrePaymentAmount: new(pre), PostPaymentAmount: new(post),
		SubtotalAmount: new(total), SubtotalAmountExcludingTax: new(excl), TotalAmount: new(total), TotalExcludingTaxAmount: new(excl),
		Taxes: amounts.taxes, PdfURL: new("https://files.workspace.example/credit-notes/" + number + ".pdf"),
		BaseAmounts: &wire.CreditNoteBaseAmounts{CurrencyCode: new(currency), PrePaymentAmount: new(pre), PostPaymentAmount: new(post),
			SubtotalAmount: new(total), SubtotalAmountExcludingTax: new(excl), Taxes: amounts.taxes, TotalAmount: new(total), TotalExcludingTaxAmount: new(excl)},
	}
}

// applyCreditToInvoice books a credit note of total on inv: before payment it
// reduces the amount due; after payment it is a post-payment credit.
func applyCreditToInvoice(inv *wire.Invoice, total float64, paid bool, creditAmount float64) {
	add := func(p **float64, v float64) { *p = new(round2(deref(*p, 0) + v)) }
	if inv.BaseAmounts == nil {
		inv.BaseAmounts = &wire.InvoiceBaseAmounts{CurrencyCode: inv.CurrencyCode}
	}
	if paid {
		add(&inv.PostPaymentCreditNotesAmount, total)
		add(&inv.BaseAmounts.PostPaymentCreditNotesAmount, total)
		add(&inv.PostPaymentCreditAmount, creditAmount)
		return
	}
	add(&inv.PrePaymentCreditNotesAmount, total)
	add(&inv.BaseAmounts.PrePaymentCreditNotesAmount, total)
	add(&inv.PrePaymentCreditAmount, total)
	add(&inv.AmountDue, -total)
	add(&inv.BaseAmounts.AmountDue, -total)
	add(&inv.AmountRemaining, -total)
}
