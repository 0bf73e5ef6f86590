package restserver

import (
	"context"
	"encoding/json"
)

// Money transactions.

// transactionFilter selects the money transactions of a location; the other
// fields narrow when set.
type transactionFilter struct {
	location string
	status   string
	typ      string
	created  dateRange
}

// transactions returns a page of the money transactions of network that
// match f, newest first.
func (s *store) transactions(ctx context.Context, network string, f transactionFilter, pg pageRequest) ([]json.RawMessage, *cursor, error) {
	ls := listSpec{table: "transactions", network: network, page: pg, where: []string{"location_id = ?"}, args: []any{f.location}}
	ls.filter("status", f.status)
	ls.filter("type", f.typ)
	ls.created(f.created)
	return listPage(ctx, s.read, ls)
}
