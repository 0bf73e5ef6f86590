package restserver

import (
	"encoding/json"
	"net/http"
)

var orderStatuses = []string{"new", "inProgress", "completed", "canceled"}

// listProducts is GET /shop/products/v1: every product of a location, newest
// first. Not paged.
func (s *Server) listProducts(r *http.Request, c *caller) (int, any, error) {
	location, err := requiredUUIDParam(r.URL.Query(), "locationRef")
	if err != nil {
		return 0, nil, err
	}
	products, err := s.db.products(r.Context(), c.network, location)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"products": products}, nil
}

// ordersPage is the body of GET /shop/orders/v1.
type ordersPage struct {
	Orders        []json.RawMessage `json:"orders"`
	NextPageToken string            `json:"nextPageToken,omitempty"`
}

// listOrders is GET /shop/orders/v1: the orders of a location, newest first,
// filtered by status and createDate range.
func (s *Server) listOrders(r *http.Request, c *caller) (int, any, error) {
	// A page token is bound to the row's pattern, as the mux registered it.
	route := r.Pattern
	q := r.URL.Query()
	location, err := requiredUUIDParam(q, "locationRef")
	if err != nil {
		return 0, nil, err
	}
	status, err := enumParam(q, "status", orderStatuses)
	if err != nil {
		return 0, nil, err
	}
	limit, _ := limitParam(q, true)
	filters := map[string]string{"locationRef": location, "status": status}
	created, err := dateRangeParam(q, "createDate", filters)
	if err != nil {
		return 0, nil, err
	}
	after, err := s.decodePageToken(q.Get("nextPageToken"), route, c.network, filters)
	if err != nil {
		return 0, nil, err
	}
	docs, next, err := s.db.orders(r.Context(), c.network, orderFilter{location: location, status: status, created: created},
		pageRequest{limit: limit, after: after})
	if err != nil {
		return 0, nil, err
	}
	body := ordersPage{Orders: docs}
	if next != nil {
		body.NextPageToken = s.encodePageToken(route, c.network, filters, *next)
	}
	return http.StatusOK, body, nil
}
