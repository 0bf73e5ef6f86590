// Package loaders holds the per-request batching loaders that turn ids into
// upstream objects with as few REST calls as possible. The REST API has no
// batch-get endpoints, so a "batch" means: collect the keys of one window,
// de-duplicate them, fetch them concurrently (bounded per request), and cache
// every result for the rest of the request. Lists that return the objects a
// query needs (a location's products) are preferred over single gets.
//
// A *Loaders is created for each GraphQL request (Middleware) and never shared
// between requests, so nothing fetched with one caller's credentials is served
// to another. Resolvers use the typed helpers of this package (Resource,
// Event, ProductInLocation, ...), never the loader types directly.
package loaders

import (
	"context"
	"sync"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/workspacenet/facade/graph/calls"
	"github.com/workspacenet/facade/graph/paging"
	"github.com/workspacenet/facade/restclient"
)

// Config tunes the loaders.
type Config struct {
	// Wait is the batch window. The REST API has no batch endpoint, so a
	// window only delays calls; 0 (the default) dispatches each key at once
	// while still de-duplicating and caching (see BENCHMARKS.md).
	Wait time.Duration
	// MaxConcurrency bounds the upstream calls in flight for one GraphQL
	// request (default 32: a feed of 100 transactions needs about 20 calls
	// in one round, and they should not wait for each other).
	MaxConcurrency int
	// Naive turns batching, caching and embedded-first off: every field makes
	// its own upstream call. Only for the benchmark baseline.
	Naive bool
}

func (c Config) withDefaults() Config {
	if c.MaxConcurrency <= 0 {
		c.MaxConcurrency = 32
	}
	return c
}

// Loaders are one request's loaders.
type Loaders struct {
	client *restclient.Client
	cfg    Config
	sem    chan struct{}

	resource           *dataloader.Loader[string, *restclient.Resource]
	event              *dataloader.Loader[string, *restclient.Event]
	visit              *dataloader.Loader[string, *restclient.Visit]
	product            *dataloader.Loader[string, *restclient.Product]
	productsByLocation *dataloader.Loader[string, []*restclient.Product]
	invoice            *dataloader.Loader[string, *restclient.InvoiceItems]
	comments           *dataloader.Loader[string, []*restclient.Comment]
	creditNotes        *dataloader.Loader[restclient.CreditNoteListOptions, *paging.Page[restclient.CreditNote]]
	transactions       *dataloader.Loader[restclient.TransactionListOptions, *paging.Page[restclient.Transaction]]
	orders             *dataloader.Loader[restclient.OrderListOptions, *paging.Page[restclient.Order]]
	redemptions        *dataloader.Loader[restclient.RedemptionListOptions, *paging.Page[restclient.Redemption]]
}

// New returns fresh loaders for one request.
func New(client *restclient.Client, cfg Config) *Loaders {
	cfg = cfg.withDefaults()
	l := &Loaders{client: client, cfg: cfg, sem: make(chan struct{}, cfg.MaxConcurrency)}
	l.resource = newLoader(l, func(ctx context.Context, id string) (*restclient.Resource, error) {
		v, _, err := client.Resources.GetResource(ctx, id)
		return v, err
	})
	l.event = newLoader(l, func(ctx context.Context, id string) (*restclient.Event, error) {
		v, _, err := client.Events.GetEvent(ctx, id)
		return v, err
	})
	l.visit = newLoader(l, func(ctx context.Context, id string) (*restclient.Visit, error) {
		v, _, err := client.Visitors.GetVisit(ctx, id)
		return v, err
	})
	l.product = newLoader(l, func(ctx context.Context, id string) (*restclient.Product, error) {
		v, _, err := client.Shop.GetProduct(ctx, id)
		return v, err
	})
	l.productsByLocation = newLoader(l, func(ctx context.Context, loc string) ([]*restclient.Product, error) {
		v, _, err := client.Shop.ListProducts(ctx, &restclient.ProductListOptions{LocationRef: loc})
		if err == nil && !l.cfg.Naive {
			for _, p := range v {
				l.product.Prime(ctx, p.ID, p)
			}
		}
		return v, err
	})
	l.invoice = newLoader(l, func(ctx context.Context, id string) (*restclient.InvoiceItems, error) {
		v, _, err := client.Billing.ListInvoiceItems(ctx, id)
		return v, err
	})
	l.comments = newLoader(l, func(ctx context.Context, postID string) ([]*restclient.Comment, error) {
		v, _, err := client.Feed.ListComments(ctx, postID)
		return v, err
	})
	l.creditNotes = newLoader(l, l.fetchCreditNotes)
	l.transactions = newLoader(l, l.fetchTransactions)
	l.orders = newLoader(l, l.fetchOrders)
	l.redemptions = newLoader(l, l.fetchRedemptions)
	return l
}

// Naive reports whether the loaders run in the benchmark's naive mode.
func (l *Loaders) Naive() bool { return l.cfg.Naive }

// newLoader builds a loader whose batch function fans fetch out over the
// batch's distinct keys, bounded by the request's semaphore, and returns
// results aligned with the keys.
func newLoader[K comparable, V any](l *Loaders, fetch func(context.Context, K) (V, error)) *dataloader.Loader[K, V] {
	one := func(ctx context.Context, k K) *dataloader.Result[V] {
		select {
		case l.sem <- struct{}{}:
		case <-ctx.Done():
			return &dataloader.Result[V]{Error: ctx.Err()}
		}
		defer func() { <-l.sem }()
		if err := calls.Reserve(ctx); err != nil {
			return &dataloader.Result[V]{Error: err}
		}
		v, err := fetch(ctx, k)
		return &dataloader.Result[V]{Data: v, Error: err}
	}
	batch := func(ctx context.Context, keys []K) []*dataloader.Result[V] {
		out := make([]*dataloader.Result[V], len(keys))
		if len(keys) == 1 {
			// The default (Wait 0) dispatches each key alone: the batch
			// goroutine makes the call itself.
			out[0] = one(ctx, keys[0])
			return out
		}
		var wg sync.WaitGroup
		for i, k := range keys {
			wg.Go(func() { out[i] = one(ctx, k) })
		}
		wg.Wait()
		return out
	}
	opts := []dataloader.Option[K, V]{}
	switch {
	case l.cfg.Naive:
		opts = append(opts, dataloader.WithCache[K, V](&dataloader.NoCache[K, V]{}), dataloader.WithBatchCapacity[K, V](1))
	case l.cfg.Wait <= 0:
		opts = append(opts, dataloader.WithBatchCapacity[K, V](1))
	default:
		opts = append(opts, dataloader.WithWait[K, V](l.cfg.Wait))
	}
	return dataloader.NewBatchedLoader(batch, opts...)
}

type ctxKey struct{}

// WithLoaders returns ctx carrying l.
func WithLoaders(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// For returns the request's loaders. It panics if the request was not set up
// by the facade's middleware: a programming error, not a runtime condition.
func For(ctx context.Context) *Loaders {
	l, ok := ctx.Value(ctxKey{}).(*Loaders)
	if !ok {
		panic("loaders: no loaders in context (missing middleware)")
	}
	return l
}
