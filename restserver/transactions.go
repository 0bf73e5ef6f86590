package restserver

import (
	"encoding/json"
	"net/http"
)

var (
	transactionStatuses = []string{"canceled", "failed", "pending", "processing", "succeeded"}
	transactionTypes    = []string{"booking", "creditPackage", "eventTicket", "invoice", "order", "subscription"}
)

// transactionsPage is the body of GET /transactions/money/v1.
type transactionsPage struct {
	Transactions  []json.RawMessage `json:"transactions"`
	NextPageToken string            `json:"nextPageToken,omitempty"`
}

// listTransactions is GET /transactions/money/v1: the money transactions of
// a location, newest first, filtered by status, type and createDate range.
func (s *Server) listTransactions(r *http.Request, c *caller) (int, any, error) {
	// A page token is bound to the row's pattern, as the mux registered it.
	route := r.Pattern
	q := r.URL.Query()
	location, err := requiredUUIDParam(q, "locationRef")
	if err != nil {
		return 0, nil, err
	}
	status, err := enumParam(q, "status", transactionStatuses)
	if err != nil {
		return 0, nil, err
	}
	typ, err := enumParam(q, "type", transactionTypes)
	if err != nil {
		return 0, nil, err
	}
	limit, err := limitParam(q, false)
	if err != nil {
		return 0, nil, err
	}
	filters := map[string]string{"locationRef": location, "status": status, "type": typ}
	created, err := dateRangeParam(q, "createDate", filters)
	if err != nil {
		return 0, nil, err
	}
	after, err := s.decodePageToken(q.Get("nextPageToken"), route, c.network, filters)
	if err != nil {
		return 0, nil, err
	}
	docs, next, err := s.db.transactions(r.Context(), c.network, transactionFilter{location: location, status: status, typ: typ, created: created},
		pageRequest{limit: limit, after: after})
	if err != nil {
		return 0, nil, err
	}
	body := transactionsPage{Transactions: docs}
	if next != nil {
		body.NextPageToken = s.encodePageToken(route, c.network, filters, *next)
	}
	return http.StatusOK, body, nil
}
