package restserver

import (
	"encoding/json"
	"net/http"

	"github.com/workspacenet/facade/restclient"
)

var orderStatuses = []string{"new", "inProgress", "completed", "canceled"}

// listProducts is GET /shop/products/v1: every product of a location, newest
// first. Not paged.
func (s *Server) listProducts(r *http.Request, c *caller) (int, any, error) {
	q := r.URL.Query()
	location, err := requiredUUIDParam(q, "locationRef")
	if err != nil {
		return 0, nil, err
	}
	rows, err := s.db.read.QueryContext(r.Context(), `SELECT doc FROM products WHERE network_id = ? AND location_id = ? ORDER BY create_date DESC, rowid DESC`, c.network, location)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	products := []json.RawMessage{}
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return 0, nil, err
		}
		products = append(products, json.RawMessage(doc))
	}
	if err := rows.Err(); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"products": products}, nil
}

// getProduct is GET /shop/products/v1/{productId}.
func (s *Server) getProduct(r *http.Request, c *caller) (int, any, error) {
	id, err := pathID(r, "productId")
	if err != nil {
		return 0, nil, err
	}
	var p restclient.Product
	if err := getDoc(r.Context(), s.db.read, "products", c.network, id, &p); err != nil {
		return 0, nil, notFound(err, "product not found")
	}
	return http.StatusOK, map[string]any{"product": p}, nil
}

// ordersPage is the body of GET /shop/orders/v1.
type ordersPage struct {
	Orders        []json.RawMessage `json:"orders"`
	NextPageToken string            `json:"nextPageToken,omitempty"`
}

// listOrders is GET /shop/orders/v1: the orders of a location, newest first,
// filtered by status and createDate range.
func (s *Server) listOrders(r *http.Request, c *caller) (int, any, error) {
	const route = "GET /shop/orders/v1"
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
	ls := listSpec{table: "orders", network: c.network, limit: limit, where: []string{"location_id = ?"}, args: []any{location}}
	if status != "" {
		ls.where, ls.args = append(ls.where, "status = ?"), append(ls.args, status)
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
	page := ordersPage{Orders: nonNil(docs)}
	if next != nil {
		page.NextPageToken = s.encodePageToken(route, c.network, filters, *next)
	}
	return http.StatusOK, page, nil
}
