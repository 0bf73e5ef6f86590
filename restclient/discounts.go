package restclient

import (
	"context"
	"iter"
	"net/url"
)

// The decoders of the operations' answers, made once.
var (
	parseRedemptionList = parseList[Redemption]("redemptions")
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

func (o *RedemptionListOptions) query() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	setIf(q, "couponRef", o.CouponRef)
	setIf(q, "promocodeRef", o.PromocodeRef)
	o.ListOptions.encode(q)
	return q
}

// ListRedemptions lists one page of the redemptions of a coupon or promocode;
// Response.NextPageToken and SearchQueryNext lead to the next.
//
// REST: GET /discounts/redemptions/v1.
func (s *DiscountsService) ListRedemptions(ctx context.Context, opts *RedemptionListOptions) ([]*Redemption, *Response, error) {
	return doList[Redemption](ctx, s.client, "/discounts/redemptions/v1", "", opts.query(), parseRedemptionList)
}

// AllRedemptions iterates over every redemption matching opts, following
// pages from opts.NextPageToken; an error ends the sequence.
//
// REST: GET /discounts/redemptions/v1, once per page.
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
