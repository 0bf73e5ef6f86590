package loaders

import (
	"context"

	"github.com/workspacenet/facade/graph/paging"
	"github.com/workspacenet/facade/restclient"
)

var _ Source = (*Loaders)(nil)

// Resource implements Source.
func (l *Loaders) Resource(ctx context.Context, id string) (*restclient.Resource, error) {
	return l.resource.load(ctx, l, id)
}

// Event implements Source.
func (l *Loaders) Event(ctx context.Context, id string) (*restclient.Event, error) {
	return l.event.load(ctx, l, id)
}

// Visit implements Source.
func (l *Loaders) Visit(ctx context.Context, id string) (*restclient.Visit, error) {
	return l.visit.load(ctx, l, id)
}

// Product implements Source: no call when a location's product list already
// brought the product.
func (l *Loaders) Product(ctx context.Context, id string) (*restclient.Product, error) {
	return l.product.load(ctx, l, id)
}

// ProductsInLocation implements Source, and primes the per-id product cache
// with the list's products.
func (l *Loaders) ProductsInLocation(ctx context.Context, locationID string) ([]*restclient.Product, error) {
	return l.productsByLocation.load(ctx, l, locationID)
}

// ProductInLocation implements Source: it finds the product through its
// location's product list (one call per location however many products a
// query needs), falling back to Product when the location is unknown or the
// list does not hold it.
func (l *Loaders) ProductInLocation(ctx context.Context, locationID, id string) (*restclient.Product, error) {
	if locationID != "" {
		ps, err := l.ProductsInLocation(ctx, locationID)
		if err == nil {
			for _, p := range ps {
				if p.ID == id {
					return p, nil
				}
			}
		}
	}
	return l.Product(ctx, id)
}

// Invoice implements Source.
func (l *Loaders) Invoice(ctx context.Context, id string) (*restclient.InvoiceItems, error) {
	return l.invoice.load(ctx, l, id)
}

// Comments implements Source.
func (l *Loaders) Comments(ctx context.Context, postID string) ([]*restclient.Comment, error) {
	return l.comments.load(ctx, l, postID)
}

// CreditNotes implements Source.
func (l *Loaders) CreditNotes(ctx context.Context, o restclient.CreditNoteListOptions) (*paging.Page[restclient.CreditNote], error) {
	return l.creditNotes.load(ctx, l, o)
}

// Transactions implements Source.
func (l *Loaders) Transactions(ctx context.Context, o restclient.TransactionListOptions) (*paging.Page[restclient.Transaction], error) {
	return l.transactions.load(ctx, l, o)
}

// Orders implements Source.
func (l *Loaders) Orders(ctx context.Context, o restclient.OrderListOptions) (*paging.Page[restclient.Order], error) {
	return l.orders.load(ctx, l, o)
}

// Redemptions implements Source.
func (l *Loaders) Redemptions(ctx context.Context, o restclient.RedemptionListOptions) (*paging.Page[restclient.Redemption], error) {
	return l.redemptions.load(ctx, l, o)
}

// EmbeddedFirst implements Source: true.
func (l *Loaders) EmbeddedFirst() bool { return true }
