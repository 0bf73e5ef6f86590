package loaders

import (
	"context"

	"github.com/workspacenet/facade/graph/paging"
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

// The list helpers load one page of a list: o holds the list's filters and
// the page's Limit and NextPageToken. Equal options (==) are fetched once per
// request, so the ends of a CreateDate filter must be UTC without a monotonic
// clock reading.

// CreditNotes loads one page of GET /billing/credit_notes/v1.
func CreditNotes(ctx context.Context, o restclient.CreditNoteListOptions) (*paging.Page[restclient.CreditNote], error) {
	return For(ctx).creditNotes.Load(ctx, o)()
}

// Transactions loads one page of GET /transactions/money/v1.
func Transactions(ctx context.Context, o restclient.TransactionListOptions) (*paging.Page[restclient.Transaction], error) {
	return For(ctx).transactions.Load(ctx, o)()
}

// Orders loads one page of GET /shop/orders/v1.
func Orders(ctx context.Context, o restclient.OrderListOptions) (*paging.Page[restclient.Order], error) {
	return For(ctx).orders.Load(ctx, o)()
}

// Redemptions loads one page of GET /discounts/redemptions/v1.
func Redemptions(ctx context.Context, o restclient.RedemptionListOptions) (*paging.Page[restclient.Redemption], error) {
	return For(ctx).redemptions.Load(ctx, o)()
}

func (l *Loaders) fetchCreditNotes(ctx context.Context, o restclient.CreditNoteListOptions) (*paging.Page[restclient.CreditNote], error) {
	return page(l.client.Billing.ListCreditNotes(ctx, &o))
}

func (l *Loaders) fetchTransactions(ctx context.Context, o restclient.TransactionListOptions) (*paging.Page[restclient.Transaction], error) {
	return page(l.client.Transactions.ListTransactions(ctx, &o))
}

func (l *Loaders) fetchOrders(ctx context.Context, o restclient.OrderListOptions) (*paging.Page[restclient.Order], error) {
	return page(l.client.Shop.ListOrders(ctx, &o))
}

func (l *Loaders) fetchRedemptions(ctx context.Context, o restclient.RedemptionListOptions) (*paging.Page[restclient.Redemption], error) {
	return page(l.client.Discounts.ListRedemptions(ctx, &o))
}

// page returns a list call's answer as a paging.Page.
func page[T any](items []*T, resp *restclient.Response, err error) (*paging.Page[T], error) {
	if err != nil {
		return nil, err
	}
	return &paging.Page[T]{Items: items, Next: resp.NextPageToken}, nil
}
