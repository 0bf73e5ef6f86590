package restclient

import (
	"context"
	"iter"
	"net/url"
)

// DiscountsService covers the discounts area: redemptions.
type DiscountsService service

// RedemptionListOptions filter ListRedemptions. One of CouponRef and
// PromocodeRef is required by the upstream.
type RedemptionListOptions struct {
	CouponRef    string // sent as couponRef
	PromocodeRef string // sent as promocodeRef
	ListOptions
}

// Values returns o as the list's query.
func (o RedemptionListOptions) Values() url.Values {
	q := url.Values{}
	setIf(q, "couponRef", o.CouponRef)
	setIf(q, "promocodeRef", o.PromocodeRef)
	o.ListOptions.encode(q)
	return q
}

// ListRedemptions lists one page of the redemptions of a coupon or promocode
// (OpListRedemptions); Response.NextPageToken and SearchQueryNext lead to
// the next.
func (s *DiscountsService) ListRedemptions(ctx context.Context, opts *RedemptionListOptions) ([]*Redemption, *Response, error) {
	return query(ctx, s.client, OpListRedemptions, valuesOf(opts))
}

// AllRedemptions iterates over every redemption matching opts, following
// pages from opts.NextPageToken; an error ends the sequence
// (OpListRedemptions, once per page).
func (s *DiscountsService) AllRedemptions(ctx context.Context, opts *RedemptionListOptions) iter.Seq2[*Redemption, error] {
	o := RedemptionListOptions{}
	if opts != nil {
		o = *opts
	}
	return paginate(o.NextPageToken, func(token string) ([]*Redemption, *Response, error) {
		o.NextPageToken = token
		return s.ListRedemptions(ctx, &o)
	})
}
