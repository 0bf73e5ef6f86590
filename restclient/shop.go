package restclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"
)

// The decoders of the operations' answers, made once.
var (
	parseOrderList   = parseList[Order]("orders")
	parseProduct     = parseOne[Product]("product")
	parseProductList = parseList[Product]("products")
)

// ShopService covers the shop area: products and orders.
type ShopService service

// ProductListOptions filter ListProducts. LocationRef is required by the upstream.
type ProductListOptions struct {
	LocationRef string // sent as locationRef
}

// ListProducts returns every product of a location (the list is not paged).
//
// REST: GET /shop/products/v1?locationRef=.
func (s *ShopService) ListProducts(ctx context.Context, opts *ProductListOptions) ([]*Product, *Response, error) {
	q := url.Values{}
	if opts != nil {
		setIf(q, "locationRef", opts.LocationRef)
	}
	return doList[Product](ctx, s.client, "/shop/products/v1", "", q, parseProductList)
}

// GetProduct returns one product.
//
// REST: GET /shop/products/v1/{productId}.
func (s *ShopService) GetProduct(ctx context.Context, id string) (*Product, *Response, error) {
	seg, err := escapeID("GetProduct", id)
	if err != nil {
		return nil, nil, err
	}
	return doOne[Product](ctx, s.client, http.MethodGet, "/shop/products/v1/{productId}", seg, parseProduct, nil)
}

// OrderListOptions filter ListOrders. LocationRef is required by the upstream.
type OrderListOptions struct {
	LocationRef string      // sent as locationRef
	Status      OrderStatus // sent as status
	CreateDate  DateRange   // sent as createDate[gte], createDate[lte]
	ListOptions
}

func (o *OrderListOptions) query() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	setIf(q, "locationRef", o.LocationRef)
	setIf(q, "status", string(o.Status))
	o.CreateDate.encode(q, "createDate")
	o.ListOptions.encode(q)
	return q
}

// ListOrders lists one page of shop orders; Response.NextPageToken leads to
// the next.
//
// REST: GET /shop/orders/v1.
func (s *ShopService) ListOrders(ctx context.Context, opts *OrderListOptions) ([]*Order, *Response, error) {
	return doList[Order](ctx, s.client, "/shop/orders/v1", "", opts.query(), parseOrderList)
}

// AllOrders iterates over every order matching opts, following pages from
// opts.NextPageToken; an error ends the sequence.
//
// REST: GET /shop/orders/v1, once per page.
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
