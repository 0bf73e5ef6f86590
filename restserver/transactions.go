package restserver

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

var (
	transactionStatuses = []string{"canceled", "failed", "pending", "processing", "succeeded"}
	transactionTypes    = []string{"booking", "creditPackage", "eventTicket", "invoice", "order", "subscription"}
)

// enumParam reads an optional query parameter that must be one of values.
func enumParam(q map[string][]string, name string, values []string) (string, error) {
	v := ""
	if vs := q[name]; len(vs) > 0 {
		v = vs[0]
		if len(vs) > 1 {
			return "", invalidf("%s: give one value", name)
		}
	}
	if v != "" && !slices.Contains(values, v) {
		return "", invalidf("%s: must be one of %s", name, strings.Join(values, ", "))
	}
	return v, nil
}

// transactionsPage is the body of GET /transactions/money/v1.
type transactionsPage struct {
	Transactions  []json.RawMessage `json:"transactions"`
	NextPageToken string            `json:"nextPageToken,omitempty"`
}

// listTransactions is GET /transactions/money/v1: the money transactions of
// a location, newest first, filtered by status, type and createDate range.
func (s *Server) listTransactions(r *http.Request, c *caller) (int, any, error) {
	const route = "GET /transactions/money/v1"
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
	ls := listSpec{table: "transactions", network: c.network, limit: limit, where: []string{"location_id = ?"}, args: []any{location}}
	if status != "" {
		ls.where, ls.args = append(ls.where, "status = ?"), append(ls.args, status)
	}
	if typ != "" {
		ls.where, ls.args = append(ls.where, "type = ?"), append(ls.args, typ)
	}
	if err := dateRange(q, "createDate", filters, &ls); err != nil {
		return 0, nil, err
	}
	if ls.after, err = s.decodePageToken(q.Get("nextPageToken"), route, c.network, filters); err != nil {
		return 0, nil, err
	}
	docs, next, err := listPage(r.Context(), s.db.read, ls)
	if err != nil {
		return 0, nil, err
	}
	page := transactionsPage{Transactions: nonNil(docs)}
	if next != nil {
		page.NextPageToken = s.encodePageToken(route, c.network, filters, *next)
	}
	return http.StatusOK, page, nil
}
