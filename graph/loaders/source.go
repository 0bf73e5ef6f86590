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
		if err := l.acquire(ctx); err != nil {
			var zero T
			return zero, err
		}
		defer l.release()
		return byID[T]{op}.fetch(l, ctx, id)
	}
	return load[string, T](ctx, l, byIDSlot(l, op), id)
}

// byIDSlot returns the slot of op's loader for Get, making the loader on
// first use.
func byIDSlot[T any](l *Loaders, op *restclient.Op[T]) *slot {
	s := l.slot(op.Row())
	s.once.Do(func() { initSlot(s, l, op.Key, byID[T]{op}) })
	return s
}

// Find returns one page of the GET op's list filtered by f (with the page's
// Limit and NextPageToken in it): through the request's loader of op, equal
// filters are fetched once per request. One list operation is found with
// one type of filter.
func Find[T any, F Filter](ctx context.Context, op *restclient.Op[[]*T], f F) (*paging.Page[T], error) {
	p, err := find(ctx, op, f)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// find is Find answering the page itself.
func find[T any, F Filter](ctx context.Context, op *restclient.Op[[]*T], f F) (paging.Page[T], error) {
	l := For(ctx)
	if l.naive {
		if err := l.acquire(ctx); err != nil {
			return paging.Page[T]{}, err
		}
		defer l.release()
		return byFilter[T, F]{op}.fetch(l, ctx, f)
	}
	s := l.slot(op.Row())
	s.once.Do(func() { initSlot(s, l, op.Key, byFilter[T, F]{op}) })
	return load[F, paging.Page[T]](ctx, l, s, f)
}

// ProductsInLocation returns every product of a location (one call per
// location and request).
func ProductsInLocation(ctx context.Context, locationID string) ([]*restclient.Product, error) {
	p, err := find(ctx, restclient.OpListProducts, restclient.ProductListOptions{LocationRef: locationID})
	return p.Items, err
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

// byID is the fetch of Get's loader of op: its answer for an id.
type byID[T any] struct{ op *restclient.Op[T] }

func (b byID[T]) fetch(l *Loaders, ctx context.Context, id string) (T, error) {
	v, _, err := restclient.GetLazily(ctx, l.client, b.op, id, nil)
	return v, err
}

// byFilter is the fetch of Find's loader of op: one page of its list. A
// location's product list holds whole products: the batching loaders keep
// each as the product by id too, so that no product it holds is fetched
// again.
type byFilter[T any, F Filter] struct{ op *restclient.Op[[]*T] }

func (b byFilter[T, F]) fetch(l *Loaders, ctx context.Context, f F) (paging.Page[T], error) {
	items, resp, err := restclient.GetLazily(ctx, l.client, b.op, "", f.Values())
	if err != nil {
		return paging.Page[T]{}, err
	}
	if ps, ok := any(items).([]*restclient.Product); ok && !l.naive {
		dl, _ := loaderIn[string, *restclient.Product](byIDSlot(l, restclient.OpGetProduct))
		for _, p := range ps {
			dl.Prime(ctx, p.ID, p)
		}
	}
	return paging.Page[T]{Items: items, Next: resp.NextPageToken}, nil
}
