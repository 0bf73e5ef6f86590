package restserver

import (
	"encoding/json"
	"net/http"

	"github.com/workspacenet/facade/restserver/wire"
)

// createCreditNote is POST /billing/credit_notes/v1. See creditnote.go and
// docs/local-rest-service.md ("Amount rules") for the rules.
func (s *Server) createCreditNote(r *http.Request, c *caller) (int, any, error) {
	var req wire.CreditNoteCreateRequest
	if err := decodeBody(r, "creditNote", &req); err != nil {
		return 0, nil, err
	}
	now := s.now().UTC()
	in, err := validateCreditNote(&req, now)
	if err != nil {
		return 0, nil, err
	}
	note, err := s.db.createCreditNote(r.Context(), c.network, now, in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"creditNote": note}, nil
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
	// A page token is bound to the row's pattern, as the mux registered it.
	route := r.Pattern
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
	docs, next, err := s.db.creditNotes(r.Context(), c.network, invoice, location, pageRequest{limit: limit, after: after})
	if err != nil {
		return 0, nil, err
	}
	body := creditNotesPage{CreditNotes: docs}
	if next != nil {
		body.NextPageToken = s.encodePageToken(route, c.network, filters, *next)
		body.SearchQueryNext = searchQueryNext(filters, limit, body.NextPageToken)
	}
	return http.StatusOK, body, nil
}

// getInvoiceItems is GET /billing/invoices/v1/{id}/items: the invoice with
// its items (in invoice order) and the items again as invoiceItems.
func (s *Server) getInvoiceItems(r *http.Request, c *caller) (int, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	inv, items, err := s.db.invoiceWithItems(r.Context(), c.network, id)
	if err != nil {
		return 0, nil, notFound(err, "invoice not found")
	}
	inv.Items = nil // stored apart: invoiceItemsBody writes them
	inv.ItemsCount = new(float64(len(items)))
	return http.StatusOK, invoiceItemsBody{invoice: inv, items: items}, nil
}
