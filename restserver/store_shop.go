package restserver

import (
	"context"
	"encoding/json"
)

// Products and orders.

// products returns every product of a location of network, newest first.
func (s *store) products(ctx context.Context, network, location string) ([]json.RawMessage, error) {
	return docs(ctx, s.read, `SELECT doc FROM products WHERE network_id = ? AND location_id = ? ORDER BY create_date DESC, rowid DESC`, network, location)
}

// orderFilter selects the orders of a location; the other fields narrow
// when set.
type orderFilter struct {
	location string
	status   string
	created  dateRange
}

// orders returns a page of the orders of network that match f, newest first.
func (s *store) orders(ctx context.Context, network string, f orderFilter, pg pageRequest) ([]json.RawMessage, *cursor, error) {
	ls := listSpec{table: "orders", network: network, page: pg, where: []string{"location_id = ?"}, args: []any{f.location}}
	ls.filter("status", f.status)
	ls.created(f.created)
	return listPage(ctx, s.read, ls)
}
