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
	// A page token is bound to the row's pattern, as the mux registered it.
	route := r.Pattern
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
	after, err := s.decodePageToken(q.Get("nextPageToken"), route, c.network, filters)
	if err != nil {
		return 0, nil, err
	}
	docs, next, err := s.db.redemptions(r.Context(), c.network, coupon, promocode, pageRequest{limit: limit, after: after})
	if err != nil {
		return 0, nil, err
	}
	body := redemptionsPage{Redemptions: docs}
	if next != nil {
		body.NextPageToken = s.encodePageToken(route, c.network, filters, *next)
		body.SearchQueryNext = searchQueryNext(filters, limit, body.NextPageToken)
	}
	return http.StatusOK, body, nil
}
