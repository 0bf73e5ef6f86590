package restserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/workspacenet/facade/restserver/wire"
)

// Invoices, their items and credit notes.

// createCreditNote issues the credit note of in on its invoice in network,
// in one write transaction: it loads the invoice and the items of the lines,
// applies the amount rules (computeCreditNote), checks the refunds'
// transactions, and stores the note, the items' credited quantities and
// amounts and the invoice's new amounts. Nothing is stored on error.
func (s *store) createCreditNote(ctx context.Context, network string, now time.Time, in *creditNoteInput) (*wire.CreditNote, error) {
	var note wire.CreditNote
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var inv wire.Invoice
		if err := getDoc(ctx, tx, "invoices", network, in.invoiceID, &inv); err != nil {
			return notFound(err, "creditNote.invoiceRef: invoice not found")
		}
		items := make([]*creditItem, len(in.lines))
		for i, l := range in.lines {
			it, err := creditItemByID(ctx, tx, network, l.itemID)
			if err != nil && !errors.Is(err, errNotFound) {
				return err
			}
			items[i] = it
		}
		amounts, err := computeCreditNote(in, &inv, items)
		if err != nil {
			return err
		}
		for i, rf := range in.refunds {
			if err := mustExist(ctx, tx, "transactions", network, rf.transactionID); err != nil {
				return notFound(err, fmt.Sprintf("creditNote.refunds[%d].transactionRef: transaction not found", i))
			}
			// A refund id names a transaction of this network; another
			// network's and an unknown one get the same 404, so the answer
			// reveals nothing of other tenants.
			if rf.id != "" {
				if err := mustExist(ctx, tx, "transactions", network, rf.id); err != nil {
					return notFound(err, fmt.Sprintf("creditNote.refunds[%d].id: transaction not found", i))
				}
			}
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM credit_notes WHERE network_id = ? AND invoice_id = ?`, network, in.invoiceID).Scan(&n); err != nil {
			return err
		}
		note = newCreditNote(in, &inv, amounts, network, n, now)
		applyCreditToInvoice(&inv, amounts.total, amounts.paid, amounts.creditAmount)
		return persistCreditNote(ctx, tx, network, now, &note, amounts, &inv)
	})
	if err != nil {
		return nil, err
	}
	return &note, nil
}

// creditItemByID loads invoice item id of network with what earlier
// credit notes took from it; errNotFound when there is none.
func creditItemByID(ctx context.Context, q querier, network, id string) (*creditItem, error) {
	var (
		ci  creditItem
		doc string
	)
	err := q.QueryRowContext(ctx, `SELECT invoice_id, credited_quantity, credited_amount, doc FROM invoice_items WHERE network_id = ? AND id = ?`,
		network, id).Scan(&ci.invoiceID, &ci.creditedQty, &ci.creditedAmount, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(doc), &ci.item); err != nil {
		return nil, err
	}
	return &ci, nil
}

// persistCreditNote stores note, adds each line's credit to its item and
// stores the invoice inv (with the note applied).
func persistCreditNote(ctx context.Context, q querier, network string, now time.Time, note *wire.CreditNote, amounts *creditAmounts, inv *wire.Invoice) error {
	if err := insert(ctx, q, record{table: "credit_notes", id: note.ID, network: network, createDate: now,
		cols: map[string]any{"location_id": deref(inv.LocationRef, ""), "invoice_id": *note.InvoiceRef}, doc: note}); err != nil {
		return err
	}
	for _, l := range amounts.lines {
		if _, err := q.ExecContext(ctx, `UPDATE invoice_items SET credited_quantity = credited_quantity + ?, credited_amount = credited_amount + ? WHERE network_id = ? AND id = ?`,
			l.creditedQty, l.amount, network, l.item.ID); err != nil {
			return err
		}
	}
	return updateDoc(ctx, q, "invoices", network, *note.InvoiceRef, inv)
}

// invoiceWithItems returns invoice id of network and its items' documents
// in invoice order; errNotFound when there is no such invoice.
func (s *store) invoiceWithItems(ctx context.Context, network, id string) (*wire.Invoice, []json.RawMessage, error) {
	var inv wire.Invoice
	if err := getDoc(ctx, s.read, "invoices", network, id, &inv); err != nil {
		return nil, nil, err
	}
	items, err := docs(ctx, s.read, `SELECT doc FROM invoice_items WHERE network_id = ? AND invoice_id = ? ORDER BY position, rowid`, network, id)
	if err != nil {
		return nil, nil, err
	}
	return &inv, items, nil
}

// creditNotes returns a page of the credit notes of network, of invoice
// and/or location (each "" = any), newest first.
func (s *store) creditNotes(ctx context.Context, network, invoice, location string, pg pageRequest) ([]json.RawMessage, *cursor, error) {
	ls := listSpec{table: "credit_notes", network: network, page: pg}
	ls.filter("invoice_id", invoice)
	ls.filter("location_id", location)
	return listPage(ctx, s.read, ls)
}

// invoicesOfLocation returns the invoices of a location of network in
// creation order.
func invoicesOfLocation(ctx context.Context, q querier, network, location string) ([]wire.Invoice, error) {
	raw, err := docs(ctx, q, `SELECT doc FROM invoices WHERE network_id = ? AND location_id = ? ORDER BY rowid`, network, location)
	if err != nil {
		return nil, err
	}
	invoices := make([]wire.Invoice, len(raw))
	for i, d := range raw {
		if err := json.Unmarshal(d, &invoices[i]); err != nil {
			return nil, err
		}
	}
	return invoices, nil
}
