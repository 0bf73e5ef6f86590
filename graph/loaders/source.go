package loaders

import (
	"context"

	"github.com/workspacenet/facade/graph/paging"
	"github.com/workspacenet/facade/restclient"
)

// Source is how resolvers fetch upstream objects for one GraphQL request
// (For). A Source serves one request and is never shared between requests,
// so nothing fetched with one caller's credentials is served to another.
// *Loaders (New) is the facade's; graph/loaders/naive is the benchmark's
// baseline.
//
// The list methods take the list's filters with the page's Limit and
// NextPageToken; a filter's CreateDate ends are UTC without a monotonic
// clock reading, so equal options compare equal.
type Source interface {
	// Resource returns GET /resources/v1/{id}; read its objects through
	// Complete.
	Resource(ctx context.Context, id string) (*restclient.Resource, error)
	// Event returns GET /events/v1/{id}.
	Event(ctx context.Context, id string) (*restclient.Event, error)
	// Visit returns GET /visitors/visits/v1/{id}.
	Visit(ctx context.Context, id string) (*restclient.Visit, error)
	// Product returns product id (GET /shop/products/v1/{productId} needs the
	// full shop scope).
	Product(ctx context.Context, id string) (*restclient.Product, error)
	// ProductsInLocation returns GET /shop/products/v1?locationRef= (the
	// read-only shop scope suffices).
	ProductsInLocation(ctx context.Context, locationID string) ([]*restclient.Product, error)
	// ProductInLocation returns product id of location locationID ("" when
	// unknown), as Product does.
	ProductInLocation(ctx context.Context, locationID, id string) (*restclient.Product, error)
	// Invoice returns GET /billing/invoices/v1/{id}/items: the invoice and
	// its items; read its objects, arrays and items through Complete.
	Invoice(ctx context.Context, id string) (*restclient.InvoiceItems, error)
	// Comments returns GET /feed/posts/v1/{id}/comments.
	Comments(ctx context.Context, postID string) ([]*restclient.Comment, error)
	// CreditNotes returns one page of GET /billing/credit_notes/v1.
	CreditNotes(ctx context.Context, o restclient.CreditNoteListOptions) (*paging.Page[restclient.CreditNote], error)
	// Transactions returns one page of GET /transactions/money/v1.
	Transactions(ctx context.Context, o restclient.TransactionListOptions) (*paging.Page[restclient.Transaction], error)
	// Orders returns one page of GET /shop/orders/v1.
	Orders(ctx context.Context, o restclient.OrderListOptions) (*paging.Page[restclient.Order], error)
	// Redemptions returns one page of GET /discounts/redemptions/v1.
	Redemptions(ctx context.Context, o restclient.RedemptionListOptions) (*paging.Page[restclient.Redemption], error)
	// EmbeddedFirst reports whether a link is answered from the summary
	// embedded in its parent, with no call, when the summary holds every
	// field the query selects on it.
	EmbeddedFirst() bool
}

// Upstream makes the one REST call behind each fetching method of Source,
// with no batching, cache or call accounting: Source implementations build
// on it, so they all ask the upstream the same questions.
type Upstream struct {
	Client *restclient.Client
}

// Resource calls GET /resources/v1/{id}, decoding the resource's objects on
// first read (GetResourceLazily).
func (u Upstream) Resource(ctx context.Context, id string) (*restclient.Resource, error) {
	return value(u.Client.Resources.GetResourceLazily(ctx, id))
}

// Event calls GET /events/v1/{id}.
func (u Upstream) Event(ctx context.Context, id string) (*restclient.Event, error) {
	return value(u.Client.Events.GetEvent(ctx, id))
}

// Visit calls GET /visitors/visits/v1/{id}.
func (u Upstream) Visit(ctx context.Context, id string) (*restclient.Visit, error) {
	return value(u.Client.Visitors.GetVisit(ctx, id))
}

// Product calls GET /shop/products/v1/{productId}.
func (u Upstream) Product(ctx context.Context, id string) (*restclient.Product, error) {
	return value(u.Client.Shop.GetProduct(ctx, id))
}

// ProductsInLocation calls GET /shop/products/v1?locationRef=.
func (u Upstream) ProductsInLocation(ctx context.Context, locationID string) ([]*restclient.Product, error) {
	return value(u.Client.Shop.ListProducts(ctx, &restclient.ProductListOptions{LocationRef: locationID}))
}

// Invoice calls GET /billing/invoices/v1/{id}/items, decoding the invoice's
// objects and arrays and the items on first read (ListInvoiceItemsLazily).
func (u Upstream) Invoice(ctx context.Context, id string) (*restclient.InvoiceItems, error) {
	return value(u.Client.Billing.ListInvoiceItemsLazily(ctx, id))
}

// Comments calls GET /feed/posts/v1/{id}/comments.
func (u Upstream) Comments(ctx context.Context, postID string) ([]*restclient.Comment, error) {
	return value(u.Client.Feed.ListComments(ctx, postID))
}

// CreditNotes calls GET /billing/credit_notes/v1.
func (u Upstream) CreditNotes(ctx context.Context, o restclient.CreditNoteListOptions) (*paging.Page[restclient.CreditNote], error) {
	return page(u.Client.Billing.ListCreditNotes(ctx, &o))
}

// Transactions calls GET /transactions/money/v1.
func (u Upstream) Transactions(ctx context.Context, o restclient.TransactionListOptions) (*paging.Page[restclient.Transaction], error) {
	return page(u.Client.Transactions.ListTransactions(ctx, &o))
}

// Orders calls GET /shop/orders/v1.
func (u Upstream) Orders(ctx context.Context, o restclient.OrderListOptions) (*paging.Page[restclient.Order], error) {
	return page(u.Client.Shop.ListOrders(ctx, &o))
}

// Redemptions calls GET /discounts/redemptions/v1.
func (u Upstream) Redemptions(ctx context.Context, o restclient.RedemptionListOptions) (*paging.Page[restclient.Redemption], error) {
	return page(u.Client.Discounts.ListRedemptions(ctx, &o))
}

// value drops the *restclient.Response of a call's answer.
func value[V any](v V, _ *restclient.Response, err error) (V, error) { return v, err }

// page returns a list call's answer as a paging.Page.
func page[T any](items []*T, resp *restclient.Response, err error) (*paging.Page[T], error) {
	if err != nil {
		return nil, err
	}
	return &paging.Page[T]{Items: items, Next: resp.NextPageToken}, nil
}
