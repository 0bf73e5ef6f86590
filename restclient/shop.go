package restclient

import (
	"context"
	"iter"
	"net/url"
)

// ShopService covers the shop area: products and orders.
type ShopService service

// ProductListOptions filter ListProducts. LocationRef is required by the upstream.
type ProductListOptions struct {
	LocationRef string // sent as locationRef
}

// Values returns o as the list's query.
func (o ProductListOptions) Values() url.Values {
	q := url.Values{}
	setIf(q, "locationRef", o.LocationRef)
	return q
}

// ListProducts returns every product of a location (OpListProducts; the
// list is not paged).
func (s *ShopService) ListProducts(ctx context.Context, opts *ProductListOptions) ([]*Product, *Response, error) {
	return query(ctx, s.client, OpListProducts, valuesOf(opts))
}

// GetProduct returns one product (OpGetProduct).
func (s *ShopService) GetProduct(ctx context.Context, id string) (*Product, *Response, error) {
	return get(ctx, s.client, OpGetProduct, id)
}

// OrderListOptions filter ListOrders. LocationRef is required by the upstream.
type OrderListOptions struct {
	LocationRef string      // sent as locationRef
	Status      OrderStatus // sent as status
	CreateDate  DateRange   // sent as createDate[gte], createDate[lte]
	ListOptions
}

// Values returns o as the list's query.
func (o OrderListOptions) Values() url.Values {
	q := url.Values{}
	setIf(q, "locationRef", o.LocationRef)
	setIf(q, "status", string(o.Status))
	o.CreateDate.encode(q, "createDate")
	o.ListOptions.encode(q)
	return q
}

// ListOrders lists one page of shop orders (OpListOrders);
// Response.NextPageToken leads to the next.
func (s *ShopService) ListOrders(ctx context.Context, opts *OrderListOptions) ([]*Order, *Response, error) {
	return query(ctx, s.client, OpListOrders, valuesOf(opts))
}

// AllOrders iterates over every order matching opts, following pages from
// opts.NextPageToken; an error ends the sequence (OpListOrders, once per
// page).
func (s *ShopService) AllOrders(ctx context.Context, opts *OrderListOptions) iter.Seq2[*Order, error] {
	o := OrderListOptions{}
	if opts != nil {
		o = *opts
	}
	return paginate(o.NextPageToken, func(token string) ([]*Order, *Response, error) {
		o.NextPageToken = token
		return s.ListOrders(ctx, &o)
	})
}
