package loaders

import (
	"context"
	"net/url"

	"github.com/workspacenet/facade/graph/paging"
	"github.com/workspacenet/facade/restclient"
)

// Source is a request's loaders as its resolvers reach them (For): the
// facade's batching loaders (New), or the benchmark's naive baseline
// (NewNaive, graph/loaders/naive). A Source serves one request and is never
// shared between requests, so nothing fetched with one caller's credentials
// is served to another.
type Source = *Loaders

// Filter is the filter of a list operation: its list options
// (restclient.TransactionListOptions, ...), whose Values are the query.
// Options that compare equal ask the same question: a filter's CreateDate
// ends are UTC without a monotonic clock reading.
type Filter interface {
	comparable
	Values() url.Values
}

// Get returns the answer of the GET op (a row of restclient's operation
// table) for id, in its path parameter: through the request's loader of op,
// each id is fetched once per request, concurrently with the other loads of
// the request. The answer is decoded lazily where op has a lazy decoder
// (restclient.GetLazily: read its objects through Complete).
func Get[T any](ctx context.Context, op *restclient.Op[T], id string) (T, error) {
	l := For(ctx)
	if l.naive {
		return direct(ctx, l, op, id, fetchOne[T])
	}
	return load(ctx, l, l.slot(op.Row()), op.Key, op, id, fetchOne[T])
}

// Find returns one page of the GET op's list filtered by f (with the page's
// Limit and NextPageToken in it): through the request's loader of op, equal
// filters are fetched once per request. One list operation is found with
// one type of filter.
func Find[T any, F Filter](ctx context.Context, op *restclient.Op[[]*T], f F) (*paging.Page[T], error) {
	l := For(ctx)
	if l.naive {
		return direct(ctx, l, op, f, fetchPage[T, F])
	}
	return load(ctx, l, l.slot(op.Row()), op.Key, op, f, fetchPage[T, F])
}

// ProductsInLocation returns every product of a location (one call per
// location and request).
func ProductsInLocation(ctx context.Context, locationID string) ([]*restclient.Product, error) {
	p, err := Find(ctx, restclient.OpListProducts, restclient.ProductListOptions{LocationRef: locationID})
	if err != nil {
		return nil, err
	}
	return p.Items, nil
}

// ProductInLocation returns product id of location locationID ("" when
// unknown): found in its location's product list (one call per location
// however many products a query needs), else by id when the location is
// unknown or its list does not hold it. The naive baseline gets it by id.
func ProductInLocation(ctx context.Context, locationID, id string) (*restclient.Product, error) {
	if locationID != "" && !For(ctx).naive {
		ps, err := ProductsInLocation(ctx, locationID)
		if err == nil {
			for _, p := range ps {
				if p.ID == id {
					return p, nil
				}
			}
		}
	}
	return Get(ctx, restclient.OpGetProduct, id)
}

// EmbeddedFirst reports whether a link is answered from the summary
// embedded in its parent, with no call, when the summary holds every field
// the query selects on it: true but for the naive baseline.
func (l *Loaders) EmbeddedFirst() bool { return !l.naive }

// fetchOne makes the call behind Get.
func fetchOne[T any](l *Loaders, op *restclient.Op[T], ctx context.Context, id string) (T, error) {
	v, _, err := restclient.GetLazily(ctx, l.client, op, id, nil)
	return v, err
}

// fetchPage makes the call behind Find. A location's product list holds
// whole products: the batching loaders keep each as the product by id too,
// so that no product it holds is fetched again.
func fetchPage[T any, F Filter](l *Loaders, op *restclient.Op[[]*T], ctx context.Context, f F) (*paging.Page[T], error) {
	items, resp, err := restclient.GetLazily(ctx, l.client, op, "", f.Values())
	if err != nil {
		return nil, err
	}
	if ps, ok := any(items).([]*restclient.Product); ok && !l.naive {
		get := restclient.OpGetProduct
		for _, p := range ps {
			prime(ctx, l, l.slot(get.Row()), get.Key, get, p.ID, p, fetchOne[*restclient.Product])
		}
	}
	return &paging.Page[T]{Items: items, Next: resp.NextPageToken}, nil
}
