package restserver

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/workspacenet/facade/internal/ids"
	"github.com/workspacenet/facade/restclient"
)

// creditNoteReasons are the accepted credit-note reasons.
var creditNoteReasons = []string{"duplicate", "orderChange", "productUnsatisfactory", "fraudulent", "other"}

// amountEpsilon absorbs float rounding when comparing amounts (half a cent).
const amountEpsilon = 0.005

// createCreditNote is POST /billing/credit_notes/v1. See README.md ("Amount rules") for
// the amount rules.
func (s *Server) createCreditNote(r *http.Request, c *caller) (int, any, error) {
	ctx := r.Context()
	var req restclient.CreditNoteCreateRequest
	if err := decodeBody(r, "creditNote", &req); err != nil {
		return 0, nil, err
	}
	invoiceID, err := refParam(req.InvoiceRef, "creditNote.invoiceRef")
	if err != nil {
		return 0, nil, err
	}
	if req.Reason == nil || *req.Reason == "" {
		return 0, nil, invalidf("creditNote.reason: is required")
	}
	if !slices.Contains(creditNoteReasons, *req.Reason) {
		return 0, nil, invalidf("creditNote.reason: must be one of %s", strings.Join(creditNoteReasons, ", "))
	}
	if len(req.Lines) == 0 {
		return 0, nil, invalidf("creditNote.lines: at least one line is required")
	}
	if len(req.Lines) > 100 {
		return 0, nil, invalidf("creditNote.lines: at most 100 lines")
	}
	itemIDs := make([]string, len(req.Lines))
	for i, l := range req.Lines {
		f := fmt.Sprintf("creditNote.lines[%d]", i)
		id, err := refParam(l.InvoiceItemRef, f+".invoiceItemRef")
		if err != nil {
			return 0, nil, err
		}
		if slices.Contains(itemIDs[:i], id) {
			return 0, nil, invalidf("%s.invoiceItemRef: the item appears in two lines", f)
		}
		itemIDs[i] = id
		if l.Quantity != nil && *l.Quantity <= 0 {
			return 0, nil, invalidf("%s.quantity: must be greater than 0", f)
		}
		if l.Amount != nil && *l.Amount <= 0 {
			return 0, nil, invalidf("%s.amount: must be greater than 0", f)
		}
	}
	if req.CreditAmount != nil && *req.CreditAmount < 0 {
		return 0, nil, invalidf("creditNote.creditAmount: must not be negative")
	}
	if req.OutOfBandAmount != nil && *req.OutOfBandAmount < 0 {
		return 0, nil, invalidf("creditNote.outOfBandAmount: must not be negative")
	}
	refundTxIDs := make([]string, len(req.Refunds))
	refundTotal := 0.0
	for i, rf := range req.Refunds {
		f := fmt.Sprintf("creditNote.refunds[%d]", i)
		if rf.Amount == nil || *rf.Amount <= 0 {
			return 0, nil, invalidf("%s.amount: must be greater than 0", f)
		}
		id, err := refParam(rf.TransactionRef, f+".transactionRef")
		if err != nil {
			return 0, nil, err
		}
		if rf.ID != nil && !ids.IsUUID(*rf.ID) {
			return 0, nil, invalidf("%s.id: must be a uuid", f)
		}
		refundTxIDs[i] = id
		refundTotal += *rf.Amount
	}
	memo := req.Memo
	if memo == nil {
		memo = req.InternalNote
	}
	if err := maxLen(memo, 2000, "creditNote.memo"); err != nil {
		return 0, nil, err
	}
	now := s.now().UTC()
	effective := req.EffectiveDate
	if effective == nil || effective.IsZero() {
		effective = restclient.NewTimestamp(now)
	}

	var note restclient.CreditNote
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		var inv restclient.Invoice
		if err := getDoc(ctx, tx, "invoices", c.network, invoiceID, &inv); err != nil {
			return notFound(err, "creditNote.invoiceRef: invoice not found")
		}
		if inv.Status != nil && *inv.Status == "voided" {
			return conflictf("creditNote.invoiceRef: the invoice is voided")
		}
		currency := deref(inv.CurrencyCode, "EUR")
		type credit struct {
			id       string
			qty, amt float64
		}
		var (
			lines   []restclient.CreditNoteLine
			credits []credit
			total   float64
			excl    float64
			taxes   = map[[2]float64]*restclient.Tax{}
		)
		for i, l := range req.Lines {
			f := fmt.Sprintf("creditNote.lines[%d]", i)
			var (
				itemInvoice string
				credQ, cred float64
				doc         string
			)
			err := tx.QueryRowContext(ctx, `SELECT invoice_id, credited_quantity, credited_amount, doc FROM invoice_items WHERE network_id = ? AND id = ?`,
				c.network, itemIDs[i]).Scan(&itemInvoice, &credQ, &cred, &doc)
			if errors.Is(err, sql.ErrNoRows) {
				return notFoundf("%s.invoiceItemRef: invoice item not found", f)
			}
			if err != nil {
				return err
			}
			if itemInvoice != invoiceID {
				return invalidf("%s.invoiceItemRef: the item belongs to another invoice", f)
			}
			var item restclient.InvoiceItem
			if err := json.Unmarshal([]byte(doc), &item); err != nil {
				return err
			}
			itemTotal, itemQty := deref(item.TotalAmount, 0), deref(item.Quantity, 1)
			remQ, remA := itemQty-credQ, round2(itemTotal-cred)
			var q, a float64
			switch {
			case l.Quantity == nil && l.Amount == nil:
				q, a = remQ, remA
			case l.Amount == nil:
				q = *l.Quantity
				if q >= remQ-1e-9 {
					a = remA
				} else {
					a = round2(itemTotal / itemQty * q)
				}
			case l.Quantity == nil:
				a = round2(*l.Amount)
			default:
				q, a = *l.Quantity, round2(*l.Amount)
			}
			if remA <= 0 || remQ <= 1e-9 && l.Amount == nil {
				return conflictf("%s.invoiceItemRef: the item is already fully credited", f)
			}
			if q > remQ+1e-9 {
				return conflictf("%s.quantity: exceeds the item's remaining quantity %g", f, remQ)
			}
			if a > remA+amountEpsilon {
				return conflictf("%s.amount: exceeds the item's remaining amount %.2f", f, remA)
			}
			lineExcl := a
			if itemTotal > 0 && item.TotalExcludingTaxAmount != nil {
				lineExcl = round2(a * *item.TotalExcludingTaxAmount / itemTotal)
			}
			tax := &restclient.Tax{Amount: new(round2(a - lineExcl)), TaxableAmount: new(lineExcl), Rate: new(0.0), Inclusive: new(true)}
			if item.Tax != nil {
				tax.Rate, tax.Inclusive = item.Tax.Rate, item.Tax.Inclusive
			}
			key := [2]float64{deref(tax.Rate, 0), b2f(deref(tax.Inclusive, true))}
			if t, ok := taxes[key]; ok {
				*t.Amount = round2(*t.Amount + *tax.Amount)
				*t.TaxableAmount = round2(*t.TaxableAmount + lineExcl)
			} else {
				taxes[key] = &restclient.Tax{Amount: new(*tax.Amount), TaxableAmount: new(lineExcl), Rate: tax.Rate, Inclusive: tax.Inclusive}
			}
			var qty *float64
			if l.Quantity != nil || l.Amount == nil {
				qty = new(q)
			}
			unitExcl := item.UnitExcludingTaxAmount
			lines = append(lines, restclient.CreditNoteLine{
				ID: newID(), InvoiceItemRef: new(item.ID), InvoiceRef: new(invoiceID), LocationRef: inv.LocationRef, NetworkRef: new(c.network),
				CreateDate: restclient.NewTimestamp(now), UpdateDate: restclient.NewTimestamp(now), CurrencyCode: new(currency),
				Quantity: qty, UnitAmount: item.UnitAmount, UnitExcludingTaxAmount: unitExcl,
				TotalAmount: new(a), TotalExcludingTaxAmount: new(lineExcl), DiscountedAmount: new(0.0), Tax: tax, Memo: memo,
				BaseAmounts: &restclient.LineBaseAmounts{CurrencyCode: new(currency), DiscountedAmount: new(0.0), Tax: tax,
					TotalAmount: new(a), TotalExcludingTaxAmount: new(lineExcl), UnitAmount: item.UnitAmount, UnitExcludingTaxAmount: unitExcl},
			})
			credits = append(credits, credit{item.ID, q, a})
			total = round2(total + a)
			excl = round2(excl + lineExcl)
		}

		paid := inv.Status != nil && *inv.Status == "paid"
		noteType := "prePayment"
		var creditAmount, outOfBand float64
		if paid {
			noteType = "postPayment"
			outOfBand = deref(req.OutOfBandAmount, 0)
			creditAmount = round2(total - refundTotal - outOfBand)
			if req.CreditAmount != nil {
				creditAmount = *req.CreditAmount
			}
			if creditAmount < -amountEpsilon || abs(refundTotal+outOfBand+creditAmount-total) > amountEpsilon {
				return invalidf("creditNote.creditAmount: refunds + outOfBandAmount + creditAmount must equal the credited total %.2f", total)
			}
		} else if refundTotal > 0 || deref(req.OutOfBandAmount, 0) > 0 || deref(req.CreditAmount, 0) > 0 {
			return invalidf("creditNote.refunds: refunds, outOfBandAmount and creditAmount apply to paid invoices only; this credit note reduces the amount due")
		}
		var refunds []restclient.CreditNoteRefund
		for i, rf := range req.Refunds {
			ok, err := exists(ctx, tx, "transactions", c.network, refundTxIDs[i])
			if err != nil {
				return err
			}
			if !ok {
				return notFoundf("creditNote.refunds[%d].transactionRef: transaction not found", i)
			}
			id := newID()
			if rf.ID != nil {
				id = strings.ToLower(*rf.ID)
			}
			refunds = append(refunds, restclient.CreditNoteRefund{ID: id, Amount: rf.Amount, CurrencyCode: new(currency),
				TransactionRef: new(refundTxIDs[i]), Method: &restclient.CreditNoteRefundMethod{Label: new("External"), Type: new("external")}})
		}
		var taxList []restclient.Tax
		for _, t := range taxes {
			taxList = append(taxList, *t)
		}
		sort.Slice(taxList, func(i, j int) bool { return *taxList[i].Rate < *taxList[j].Rate })

		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM credit_notes WHERE network_id = ? AND invoice_id = ?`, c.network, invoiceID).Scan(&n); err != nil {
			return err
		}
		number := fmt.Sprintf("CN-%s-%d", deref(inv.Number, "0"), n+1)
		pre, post := 0.0, 0.0
		if paid {
			post = total
		} else {
			pre = total
		}
		note = restclient.CreditNote{
			ID: newID(), InvoiceRef: new(invoiceID), LocationRef: inv.LocationRef, NetworkRef: new(c.network),
			CreateDate: restclient.NewTimestamp(now), UpdateDate: restclient.NewTimestamp(now), EffectiveDate: effective,
			CurrencyCode: new(currency), Number: new(number), Title: new("Credit note " + number), Status: new("issued"), Type: new(noteType),
			Reason: req.Reason, Memo: memo, InternalNote: memo, Lines: lines, Refunds: refunds,
			CreditAmount: new(creditAmount), OutOfBandAmount: new(outOfBand), PrePaymentAmount: new(pre), PostPaymentAmount: new(post),
			SubtotalAmount: new(total), SubtotalAmountExcludingTax: new(excl), TotalAmount: new(total), TotalExcludingTaxAmount: new(excl),
			Taxes: taxList, PdfURL: new("https://files.workspace.example/credit-notes/" + number + ".pdf"),
			BaseAmounts: &restclient.CreditNoteBaseAmounts{CurrencyCode: new(currency), PrePaymentAmount: new(pre), PostPaymentAmount: new(post),
				SubtotalAmount: new(total), SubtotalAmountExcludingTax: new(excl), Taxes: taxList, TotalAmount: new(total), TotalExcludingTaxAmount: new(excl)},
		}
		if err := insert(ctx, tx, record{table: "credit_notes", id: note.ID, network: c.network, createDate: now,
			cols: map[string]any{"location_id": deref(inv.LocationRef, ""), "invoice_id": invoiceID}, doc: note}); err != nil {
			return err
		}
		for _, cr := range credits {
			if _, err := tx.ExecContext(ctx, `UPDATE invoice_items SET credited_quantity = credited_quantity + ?, credited_amount = credited_amount + ? WHERE network_id = ? AND id = ?`,
				cr.qty, cr.amt, c.network, cr.id); err != nil {
				return err
			}
		}
		applyCreditToInvoice(&inv, total, paid, creditAmount)
		return updateDoc(ctx, tx, "invoices", c.network, invoiceID, inv)
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"creditNote": note}, nil
}

// applyCreditToInvoice books a credit note of total on inv: before payment it
// reduces the amount due; after payment it is a post-payment credit.
func applyCreditToInvoice(inv *restclient.Invoice, total float64, paid bool, creditAmount float64) {
	add := func(p **float64, v float64) { *p = new(round2(deref(*p, 0) + v)) }
	if inv.BaseAmounts == nil {
		inv.BaseAmounts = &restclient.InvoiceBaseAmounts{CurrencyCode: inv.CurrencyCode}
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

// creditNotesPage is the body of GET /billing/credit_notes/v1.
type creditNotesPage struct {
	CreditNotes     []json.RawMessage `json:"creditNotes"`
	NextPageToken   string            `json:"nextPageToken,omitempty"`
	SearchQueryNext string            `json:"searchQueryNext,omitempty"`
}

// listCreditNotes is GET /billing/credit_notes/v1: the credit notes of an
// invoice or a location (both: of that invoice in that location), newest
// first.
func (s *Server) listCreditNotes(r *http.Request, c *caller) (int, any, error) {
	const route = "GET /billing/credit_notes/v1"
	q := r.URL.Query()
	invoice, err := uuidParam(q, "invoiceRef")
	if err != nil {
		return 0, nil, err
	}
	location, err := uuidParam(q, "locationRef")
	if err != nil {
		return 0, nil, err
	}
	if invoice == "" && location == "" {
		return 0, nil, invalidf("invoiceRef or locationRef: one of the two is required")
	}
	limit, _ := limitParam(q, true)
	filters := map[string]string{"invoiceRef": invoice, "locationRef": location}
	after, err := s.decodePageToken(q.Get("nextPageToken"), route, c.network, filters)
	if err != nil {
		return 0, nil, err
	}
	ls := listSpec{table: "credit_notes", network: c.network, limit: limit, after: after}
	if invoice != "" {
		ls.where, ls.args = append(ls.where, "invoice_id = ?"), append(ls.args, invoice)
	}
	if location != "" {
		ls.where, ls.args = append(ls.where, "location_id = ?"), append(ls.args, location)
	}
	docs, next, err := listPage(r.Context(), s.db.read, ls)
	if err != nil {
		return 0, nil, err
	}
	page := creditNotesPage{CreditNotes: nonNil(docs)}
	if next != nil {
		page.NextPageToken = s.encodePageToken(route, c.network, filters, *next)
		page.SearchQueryNext = searchQueryNext(filters, limit, page.NextPageToken)
	}
	return http.StatusOK, page, nil
}

// getInvoiceItems is GET /billing/invoices/v1/{id}/items: the invoice with
// its items (in invoice order) and the items again as invoiceItems.
func (s *Server) getInvoiceItems(r *http.Request, c *caller) (int, any, error) {
	ctx := r.Context()
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	var inv restclient.Invoice
	if err := getDoc(ctx, s.db.read, "invoices", c.network, id, &inv); err != nil {
		return 0, nil, notFound(err, "invoice not found")
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT doc FROM invoice_items WHERE network_id = ? AND invoice_id = ? ORDER BY position, rowid`, c.network, id)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	items := []restclient.InvoiceItem{}
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return 0, nil, err
		}
		var it restclient.InvoiceItem
		if err := json.Unmarshal([]byte(doc), &it); err != nil {
			return 0, nil, err
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return 0, nil, err
	}
	inv.Items = items
	inv.ItemsCount = new(float64(len(items)))
	return http.StatusOK, map[string]any{"invoice": inv, "invoiceItems": items}, nil
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil(docs []json.RawMessage) []json.RawMessage {
	if docs == nil {
		return []json.RawMessage{}
	}
	return docs
}
