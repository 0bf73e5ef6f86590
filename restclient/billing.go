package restclient

import (
	"context"
	"fmt"
	"iter"
	"net/url"
)

// BillingService covers the billing area: credit notes and invoice items.
type BillingService service

// CreateCreditNote creates a credit note for an invoice (OpCreateCreditNote).
func (s *BillingService) CreateCreditNote(ctx context.Context, req *CreditNoteCreateRequest) (*CreditNote, *Response, error) {
	return write(ctx, s.client, OpCreateCreditNote, "", req)
}

// CreditNoteListOptions filter ListCreditNotes. One of InvoiceRef and
// LocationRef is required by the upstream.
type CreditNoteListOptions struct {
	InvoiceRef  string // sent as invoiceRef
	LocationRef string // sent as locationRef
	ListOptions
}

// Values returns o as the list's query.
func (o CreditNoteListOptions) Values() url.Values {
	q := url.Values{}
	setIf(q, "invoiceRef", o.InvoiceRef)
	setIf(q, "locationRef", o.LocationRef)
	o.ListOptions.encode(q)
	return q
}

// ListCreditNotes lists one page of the credit notes of an invoice or a
// location (OpListCreditNotes); Response.NextPageToken and SearchQueryNext
// lead to the next.
func (s *BillingService) ListCreditNotes(ctx context.Context, opts *CreditNoteListOptions) ([]*CreditNote, *Response, error) {
	return query(ctx, s.client, OpListCreditNotes, valuesOf(opts))
}

// AllCreditNotes iterates over every credit note matching opts, following
// pages from opts.NextPageToken; an error ends the sequence
// (OpListCreditNotes, once per page).
func (s *BillingService) AllCreditNotes(ctx context.Context, opts *CreditNoteListOptions) iter.Seq2[*CreditNote, error] {
	o := CreditNoteListOptions{}
	if opts != nil {
		o = *opts
	}
	return paginate(o.NextPageToken, func(token string) ([]*CreditNote, *Response, error) {
		o.NextPageToken = token
		return s.ListCreditNotes(ctx, &o)
	})
}

// InvoiceItems is the answer of ListInvoiceItems: the invoice and its items.
type InvoiceItems struct {
	Invoice *Invoice       `json:"invoice"`
	Items   []*InvoiceItem `json:"invoiceItems"`

	lazy *lazyDoc[InvoiceItems] // ListInvoiceItemsLazily: what Complete decodes
}

// ListInvoiceItems returns an invoice with its items (OpListInvoiceItems).
// The response carries the items twice, as invoice.items and as
// invoiceItems, and either may be the one filled: when Invoice is non-nil
// and one of the two is empty, it is filled from the other, so both
// Invoice.Items and Items hold the items. A null in invoiceItems is a
// *DecodeError.
func (s *BillingService) ListInvoiceItems(ctx context.Context, invoiceID string) (*InvoiceItems, *Response, error) {
	return get(ctx, s.client, OpListInvoiceItems, invoiceID)
}

// ListInvoiceItemsLazily is ListInvoiceItems for callers that seldom read
// more than an invoice's scalar fields: it decodes the invoice's strings,
// numbers and dates, and only validates the rest of the body (the items,
// and the invoice's objects and arrays: taxes, baseAmounts, company,
// customer, customerAddress, items, payments, transaction, user). Those
// fields are left nil; Complete, on the InvoiceItems or on its Invoice,
// returns the value with every field decoded. Malformed JSON anywhere is a
// *DecodeError here, as with ListInvoiceItems; a value of the wrong type in
// a field left undecoded (or a null in invoiceItems) is Complete's
// *DecodeError instead, naming the same route.
func (s *BillingService) ListInvoiceItemsLazily(ctx context.Context, invoiceID string) (*InvoiceItems, *Response, error) {
	return invoke(ctx, s.client, OpListInvoiceItems, invoiceID, nil, nil, OpListInvoiceItems.lazy)
}

// parseInvoiceItems is ListInvoiceItems' decoder.
func parseInvoiceItems(data []byte) (any, pageInfo, error) {
	v, err := wholeInvoiceItems(data)
	return v, pageInfo{}, err
}

// invoiceItemsLazily returns ListInvoiceItemsLazily's decoder for op (whose
// eager decoder, parseInvoiceItems, Complete's wholeInvoiceItems is).
func invoiceItemsLazily(op *Operation, _ parseFunc) parseFunc {
	return func(data []byte) (any, pageInfo, error) {
		v := new(InvoiceItems)
		return v, pageInfo{}, v.decodeLazily(data, op.Method, op.Route)
	}
}

// decodeLazily decodes data into v with the lazy decoder, and keeps what
// Complete needs when it left values undecoded.
func (v *InvoiceItems) decodeLazily(data []byte, method, route string) error {
	deferred, err := v.fastWholeLazy(data)
	if err != nil || !deferred {
		if err == nil {
			err = v.fillItems()
		}
		return err
	}
	v.lazy = &lazyDoc[InvoiceItems]{body: data, method: method, route: route, whole: wholeInvoiceItems}
	if v.Invoice != nil {
		v.Invoice.lazy = v.lazy
	}
	return nil
}

// wholeInvoiceItems decodes data as ListInvoiceItems does.
func wholeInvoiceItems(data []byte) (*InvoiceItems, error) {
	w := new(InvoiceItems)
	err := w.fastWhole(data)
	if err == nil {
		err = w.fillItems()
	}
	if err != nil {
		return nil, err
	}
	return w, nil
}

// Complete returns v with every field decoded: v itself unless
// ListInvoiceItemsLazily left fields undecoded, else the whole body decoded
// once for every caller (safe for concurrent use; v is not modified).
func (v *InvoiceItems) Complete() (*InvoiceItems, error) {
	if v.lazy == nil {
		return v, nil
	}
	return v.lazy.decoded()
}

// Complete returns v with every field decoded: v itself unless
// ListInvoiceItemsLazily left fields undecoded, else the invoice of the
// whole body, decoded once for every caller (safe for concurrent use; v is
// not modified). Read an invoice's objects and arrays through it.
func (v *Invoice) Complete() (*Invoice, error) {
	if v.lazy == nil {
		return v, nil
	}
	w, err := v.lazy.decoded()
	if err != nil {
		return nil, err
	}
	return w.Invoice, nil
}

// fillItems fills whichever of Invoice.Items and Items is empty from the
// other (see ListInvoiceItems): Items then points into Invoice.Items, or
// Invoice.Items holds copies of Items.
func (v *InvoiceItems) fillItems() error {
	for i, it := range v.Items {
		if it == nil {
			return fmt.Errorf("invoiceItems[%d] is null", i)
		}
	}
	if v.Invoice == nil {
		return nil
	}
	if len(v.Invoice.Items) == 0 && len(v.Items) > 0 {
		v.Invoice.Items = make([]InvoiceItem, len(v.Items))
		for i, it := range v.Items {
			v.Invoice.Items[i] = *it
		}
	}
	if len(v.Items) == 0 {
		for i := range v.Invoice.Items {
			v.Items = append(v.Items, &v.Invoice.Items[i])
		}
	}
	return nil
}
