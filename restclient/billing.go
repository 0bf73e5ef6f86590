package restclient

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
)

// The decoders of the operations' answers, made once.
var (
	parseCreditNote     = parseOne[CreditNote]("creditNote")
	parseCreditNoteList = parseList[CreditNote]("creditNotes")
)

// BillingService covers the billing area: credit notes and invoice items.
type BillingService service

// CreateCreditNote creates a credit note for an invoice.
//
// REST: POST /billing/credit_notes/v1 with body {"creditNote": req}.
func (s *BillingService) CreateCreditNote(ctx context.Context, req *CreditNoteCreateRequest) (*CreditNote, *Response, error) {
	if req == nil {
		return nil, nil, errors.New("restclient: CreateCreditNote: nil request")
	}
	return doOne[CreditNote](ctx, s.client, http.MethodPost, "/billing/credit_notes/v1", "",
		parseCreditNote, map[string]any{"creditNote": req})
}

// CreditNoteListOptions filter ListCreditNotes. One of InvoiceRef and
// LocationRef is required by the upstream.
type CreditNoteListOptions struct {
	InvoiceRef  string // sent as invoiceRef
	LocationRef string // sent as locationRef
	ListOptions
}

func (o *CreditNoteListOptions) query() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	setIf(q, "invoiceRef", o.InvoiceRef)
	setIf(q, "locationRef", o.LocationRef)
	o.ListOptions.encode(q)
	return q
}

// ListCreditNotes lists one page of the credit notes of an invoice or a
// location; Response.NextPageToken and SearchQueryNext lead to the next.
//
// REST: GET /billing/credit_notes/v1.
func (s *BillingService) ListCreditNotes(ctx context.Context, opts *CreditNoteListOptions) ([]*CreditNote, *Response, error) {
	return doList[CreditNote](ctx, s.client, "/billing/credit_notes/v1", "", opts.query(), parseCreditNoteList)
}

// AllCreditNotes iterates over every credit note matching opts, following
// pages from opts.NextPageToken; an error ends the sequence.
//
// REST: GET /billing/credit_notes/v1, once per page.
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

// ListInvoiceItems returns an invoice with its items. The response carries
// the items twice, as invoice.items and as invoiceItems, and either may be
// the one filled: when Invoice is non-nil and one of the two is empty, it is
// filled from the other, so both Invoice.Items and Items hold the items. A
// null in invoiceItems is a *DecodeError.
//
// REST: GET /billing/invoices/v1/{id}/items.
func (s *BillingService) ListInvoiceItems(ctx context.Context, invoiceID string) (*InvoiceItems, *Response, error) {
	id, err := escapeID("ListInvoiceItems", invoiceID)
	if err != nil {
		return nil, nil, err
	}
	out := new(InvoiceItems)
	resp, _, err := s.client.do(ctx, call{
		method: http.MethodGet,
		route:  "/billing/invoices/v1/{id}/items",
		id:     id,
		decode: func(data []byte) (pageInfo, error) {
			if _, err := decodeStruct(out)(data); err != nil {
				return pageInfo{}, err
			}
			return pageInfo{}, out.fillItems()
		},
	})
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
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
//
// REST: GET /billing/invoices/v1/{id}/items.
func (s *BillingService) ListInvoiceItemsLazily(ctx context.Context, invoiceID string) (*InvoiceItems, *Response, error) {
	id, err := escapeID("ListInvoiceItemsLazily", invoiceID)
	if err != nil {
		return nil, nil, err
	}
	const route = "/billing/invoices/v1/{id}/items"
	out := new(InvoiceItems)
	resp, _, err := s.client.do(ctx, call{
		method: http.MethodGet,
		route:  route,
		id:     id,
		decode: func(data []byte) (pageInfo, error) { return pageInfo{}, out.decodeLazily(data, http.MethodGet, route) },
	})
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
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
