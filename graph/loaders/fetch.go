package loaders

import (
	"context"
	"time"

	"github.com/workspacenet/facade/restclient"
)

// Resource loads GET /resources/v1/{id}.
func Resource(ctx context.Context, id string) (*restclient.Resource, error) {
	return For(ctx).resource.Load(ctx, id)()
}

// Event loads GET /events/v1/{id}.
func Event(ctx context.Context, id string) (*restclient.Event, error) {
	return For(ctx).event.Load(ctx, id)()
}

// Visit loads GET /visitors/visits/v1/{id}.
func Visit(ctx context.Context, id string) (*restclient.Visit, error) {
	return For(ctx).visit.Load(ctx, id)()
}

// Product loads GET /shop/products/v1/{productId} (needs the full shop scope),
// unless a location's product list already brought it.
func Product(ctx context.Context, id string) (*restclient.Product, error) {
	return For(ctx).product.Load(ctx, id)()
}

// ProductsInLocation loads GET /shop/products/v1?locationRef= (read-only shop
// scope) and primes the per-id product cache with its products.
func ProductsInLocation(ctx context.Context, locationID string) ([]*restclient.Product, error) {
	return For(ctx).productsByLocation.Load(ctx, locationID)()
}

// ProductInLocation finds product id through its location's product list
// (one call per location however many products a query needs), falling back
// to GET /shop/products/v1/{productId} when the location is unknown or the
// list does not hold it.
func ProductInLocation(ctx context.Context, locationID, id string) (*restclient.Product, error) {
	l := For(ctx)
	if locationID != "" && !l.cfg.Naive {
		ps, err := ProductsInLocation(ctx, locationID)
		if err == nil {
			for _, p := range ps {
				if p.ID == id {
					return p, nil
				}
			}
		}
	}
	return Product(ctx, id)
}

// Invoice loads GET /billing/invoices/v1/{id}/items: the invoice and its items.
func Invoice(ctx context.Context, id string) (*restclient.InvoiceItems, error) {
	return For(ctx).invoice.Load(ctx, id)()
}

// InvoiceItem finds item itemID of invoice invoiceID with the invoice's call.
// It returns nil, nil when the invoice has no such item.
func InvoiceItem(ctx context.Context, invoiceID, itemID string) (*restclient.InvoiceItem, error) {
	inv, err := Invoice(ctx, invoiceID)
	if err != nil {
		return nil, err
	}
	for _, it := range inv.Items {
		if it.ID == itemID {
			return it, nil
		}
	}
	return nil, nil
}

// Comments loads GET /feed/posts/v1/{id}/comments.
func Comments(ctx context.Context, postID string) ([]*restclient.Comment, error) {
	return For(ctx).comments.Load(ctx, postID)()
}

// CreditNotePageKey identifies one upstream page of credit notes.
type CreditNotePageKey struct {
	InvoiceRef, LocationRef string
	Token                   string
	Limit                   int
}

// TransactionPageKey identifies one upstream page of money transactions.
type TransactionPageKey struct {
	LocationRef string
	Status      restclient.TransactionStatus
	Type        restclient.TransactionType
	GTE, LTE    string // RFC 3339 or ""
	Token       string
	Limit       int
}

// OrderPageKey identifies one upstream page of shop orders.
type OrderPageKey struct {
	LocationRef string
	Status      restclient.OrderStatus
	GTE, LTE    string
	Token       string
	Limit       int
}

// RedemptionPageKey identifies one upstream page of redemptions.
type RedemptionPageKey struct {
	CouponRef, PromocodeRef string
	Token                   string
	Limit                   int
}

// CreditNotes loads one page of GET /billing/credit_notes/v1.
func CreditNotes(ctx context.Context, k CreditNotePageKey) (*Page[restclient.CreditNote], error) {
	return For(ctx).creditNotes.Load(ctx, k)()
}

// Transactions loads one page of GET /transactions/money/v1.
func Transactions(ctx context.Context, k TransactionPageKey) (*Page[restclient.Transaction], error) {
	return For(ctx).transactions.Load(ctx, k)()
}

// Orders loads one page of GET /shop/orders/v1.
func Orders(ctx context.Context, k OrderPageKey) (*Page[restclient.Order], error) {
	return For(ctx).orders.Load(ctx, k)()
}

// Redemptions loads one page of GET /discounts/redemptions/v1.
func Redemptions(ctx context.Context, k RedemptionPageKey) (*Page[restclient.Redemption], error) {
	return For(ctx).redemptions.Load(ctx, k)()
}

func (l *Loaders) fetchCreditNotes(ctx context.Context, k CreditNotePageKey) (*Page[restclient.CreditNote], error) {
	v, resp, err := l.client.Billing.ListCreditNotes(ctx, &restclient.CreditNoteListOptions{
		InvoiceRef: k.InvoiceRef, LocationRef: k.LocationRef,
		ListOptions: restclient.ListOptions{Limit: k.Limit, NextPageToken: k.Token},
	})
	return page(v, resp, err)
}

func (l *Loaders) fetchTransactions(ctx context.Context, k TransactionPageKey) (*Page[restclient.Transaction], error) {
	v, resp, err := l.client.Transactions.ListTransactions(ctx, &restclient.TransactionListOptions{
		LocationRef: k.LocationRef, Status: k.Status, Type: k.Type, CreateDate: dateRange(k.GTE, k.LTE),
		ListOptions: restclient.ListOptions{Limit: k.Limit, NextPageToken: k.Token},
	})
	return page(v, resp, err)
}

func (l *Loaders) fetchOrders(ctx context.Context, k OrderPageKey) (*Page[restclient.Order], error) {
	v, resp, err := l.client.Shop.ListOrders(ctx, &restclient.OrderListOptions{
		LocationRef: k.LocationRef, Status: k.Status, CreateDate: dateRange(k.GTE, k.LTE),
		ListOptions: restclient.ListOptions{Limit: k.Limit, NextPageToken: k.Token},
	})
	return page(v, resp, err)
}

func (l *Loaders) fetchRedemptions(ctx context.Context, k RedemptionPageKey) (*Page[restclient.Redemption], error) {
	v, resp, err := l.client.Discounts.ListRedemptions(ctx, &restclient.RedemptionListOptions{
		CouponRef: k.CouponRef, PromocodeRef: k.PromocodeRef,
		ListOptions: restclient.ListOptions{Limit: k.Limit, NextPageToken: k.Token},
	})
	return page(v, resp, err)
}

func page[T any](items []*T, resp *restclient.Response, err error) (*Page[T], error) {
	if err != nil {
		return nil, err
	}
	return &Page[T]{Items: items, Next: resp.NextPageToken}, nil
}

// dateRange parses the RFC 3339 bounds of a page key (validated by the
// resolver that built the key).
func dateRange(gte, lte string) restclient.DateRange {
	var r restclient.DateRange
	if t, err := time.Parse(time.RFC3339Nano, gte); err == nil {
		r.GTE = &t
	}
	if t, err := time.Parse(time.RFC3339Nano, lte); err == nil {
		r.LTE = &t
	}
	return r
}
