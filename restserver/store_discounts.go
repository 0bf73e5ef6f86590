package restserver

import (
	"context"
	"encoding/json"
)

// Discount redemptions.

// redemptions returns a page of the redemptions of network, of coupon
// and/or promocode (each "" = any), newest first.
func (s *store) redemptions(ctx context.Context, network, coupon, promocode string, pg pageRequest) ([]json.RawMessage, *cursor, error) {
	ls := listSpec{table: "redemptions", network: network, page: pg}
	ls.filter("coupon_id", coupon)
	ls.filter("promocode_id", promocode)
	return listPage(ctx, s.read, ls)
}
