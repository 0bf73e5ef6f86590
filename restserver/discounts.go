package restserver

import (
	"encoding/json"
	"net/http"
)

// redemptionsPage is the body of GET /discounts/redemptions/v1.
type redemptionsPage struct {
	Redemptions     []json.RawMessage `json:"redemptions"`
	NextPageToken   string            `json:"nextPageToken,omitempty"`
	SearchQueryNext string            `json:"searchQueryNext,omitempty"`
}

// listRedemptions is GET /discounts/redemptions/v1: the redemptions of a
// coupon or a promocode (both: of both), newest first.
func (s *Server) listRedemptions(r *http.Request, c *caller) (int, any, error) {
	const route = "GET /discounts/redemptions/v1"
	q := r.URL.Query()
	coupon, err := uuidParam(q, "couponRef")
	if err != nil {
		return 0, nil, err
	}
	promocode, err := uuidParam(q, "promocodeRef")
	if err != nil {
		return 0, nil, err
	}
	if coupon == "" && promocode == "" {
		return 0, nil, invalidf("couponRef or promocodeRef: one of the two is required")
	}
	limit, err := limitParam(q, false)
	if err != nil {
		return 0, nil, err
	}
	filters := map[string]string{"couponRef": coupon, "promocodeRef": promocode}
	ls := listSpec{table: "redemptions", network: c.network, limit: limit}
	if coupon != "" {
		ls.where, ls.args = append(ls.where, "coupon_id = ?"), append(ls.args, coupon)
	}
	if promocode != "" {
		ls.where, ls.args = append(ls.where, "promocode_id = ?"), append(ls.args, promocode)
	}
	if ls.after, err = s.decodePageToken(q.Get("nextPageToken"), route, c.network, filters); err != nil {
		return 0, nil, err
	}
	docs, next, err := listPage(r.Context(), s.db.read, ls)
	if err != nil {
		return 0, nil, err
	}
	page := redemptionsPage{Redemptions: nonNil(docs)}
	if next != nil {
		page.NextPageToken = s.encodePageToken(route, c.network, filters, *next)
		page.SearchQueryNext = searchQueryNext(filters, limit, page.NextPageToken)
	}
	return http.StatusOK, page, nil
}
