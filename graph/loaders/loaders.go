// Package loaders defines Source, through which resolvers fetch upstream
// objects (For), and the facade's implementation of it: per-request batching
// loaders that turn ids into upstream objects with as few REST calls as
// possible. The REST API has no batch-get endpoints, so a "batch" means:
// collect the keys of one window, de-duplicate them, fetch them concurrently
// (bounded per request), and cache every result for the rest of the request.
// Lists that return the objects a query needs (a location's products) are
// preferred over single gets, and links are answered from embedded summaries
// when those suffice.
//
// A Source is created for each GraphQL request by the facade's handler and
// never shared between requests, so nothing fetched with one caller's
// credentials is served to another.
package loaders

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/graph-gophers/dataloader/v7"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/workspacenet/facade/graph/calls"
	"github.com/workspacenet/facade/graph/paging"
	"github.com/workspacenet/facade/restclient"
)

// DefaultMaxConcurrency is DefaultConfig's MaxConcurrency.
const DefaultMaxConcurrency = 32

// Config tunes the batching loaders.
type Config struct {
	// Wait is the batch window. The REST API has no batch endpoint, so a
	// window only delays calls; 0 (the default) dispatches each key at once,
	// while the loader's cache still de-duplicates (see BENCHMARKS.md).
	Wait time.Duration
	// MaxConcurrency bounds the upstream calls in flight for one GraphQL
	// request; 0: no bound. DefaultMaxConcurrency: a feed of 100
	// transactions needs about 20 calls in one round, and they should not
	// wait for each other.
	MaxConcurrency int
	// ObserveBatch, when set, is told the distinct keys of every batch a
	// loader dispatches, by loader name ("resource", "transactions", ...)
	// (metrics).
	ObserveBatch func(loader string, keys int)
	// Priority, when set, ranks the upstream call a load makes for ctx
	// (restclient.WithPriority; graph's callPriority).
	Priority func(ctx context.Context) int
}

// DefaultConfig returns the default tuning (part of graph.DefaultOptions).
func DefaultConfig() Config { return Config{MaxConcurrency: DefaultMaxConcurrency} }

// Loaders are one request's batching loaders: the facade's Source. List
// pages are keyed by their options, so equal options asked twice in a
// request are fetched once.
type Loaders struct {
	cfg Config
	up  Upstream
	sem chan struct{}

	// Each loader is made on its first use: most queries need one or two
	// of them, and a dataloader costs dozens of allocations to set up.
	resource           lazy[string, *restclient.Resource]
	event              lazy[string, *restclient.Event]
	visit              lazy[string, *restclient.Visit]
	product            lazy[string, *restclient.Product]
	productsByLocation lazy[string, []*restclient.Product]
	invoice            lazy[string, *restclient.InvoiceItems]
	comments           lazy[string, []*restclient.Comment]
	creditNotes        lazy[restclient.CreditNoteListOptions, *paging.Page[restclient.CreditNote]]
	transactions       lazy[restclient.TransactionListOptions, *paging.Page[restclient.Transaction]]
	orders             lazy[restclient.OrderListOptions, *paging.Page[restclient.Order]]
	redemptions        lazy[restclient.RedemptionListOptions, *paging.Page[restclient.Redemption]]
}

// New returns fresh loaders for one request.
func New(client *restclient.Client, cfg Config) *Loaders {
	l := new(Loaders)
	l.Init(client, cfg)
	return l
}

// Init makes l fresh loaders for one request, as New does, in place (a
// Loaders inside a request's own allocation). l must not be in use.
func (l *Loaders) Init(client *restclient.Client, cfg Config) {
	// The fetch funcs take the Loaders instead of capturing them: they are
	// static, so a request's loaders cost no allocation until used.
	*l = Loaders{cfg: cfg, up: Upstream{Client: client}}
	if cfg.MaxConcurrency > 0 {
		l.sem = make(chan struct{}, cfg.MaxConcurrency)
	}
	l.resource.name, l.resource.fetch = "resource", func(l *Loaders, ctx context.Context, id string) (*restclient.Resource, error) {
		return l.up.Resource(ctx, id)
	}
	l.event.name, l.event.fetch = "event", func(l *Loaders, ctx context.Context, id string) (*restclient.Event, error) {
		return l.up.Event(ctx, id)
	}
	l.visit.name, l.visit.fetch = "visit", func(l *Loaders, ctx context.Context, id string) (*restclient.Visit, error) {
		return l.up.Visit(ctx, id)
	}
	l.product.name, l.product.fetch = "product", func(l *Loaders, ctx context.Context, id string) (*restclient.Product, error) {
		return l.up.Product(ctx, id)
	}
	l.productsByLocation.name, l.productsByLocation.fetch = "productsByLocation", func(l *Loaders, ctx context.Context, loc string) ([]*restclient.Product, error) {
		v, err := l.up.ProductsInLocation(ctx, loc)
		if err == nil {
			for _, p := range v {
				l.product.prime(ctx, l, p.ID, p)
			}
		}
		return v, err
	}
	l.invoice.name, l.invoice.fetch = "invoice", func(l *Loaders, ctx context.Context, id string) (*restclient.InvoiceItems, error) {
		return l.up.Invoice(ctx, id)
	}
	l.comments.name, l.comments.fetch = "comments", func(l *Loaders, ctx context.Context, id string) ([]*restclient.Comment, error) {
		return l.up.Comments(ctx, id)
	}
	l.creditNotes.name, l.creditNotes.fetch = "creditNotes", func(l *Loaders, ctx context.Context, o restclient.CreditNoteListOptions) (*paging.Page[restclient.CreditNote], error) {
		return l.up.CreditNotes(ctx, o)
	}
	l.transactions.name, l.transactions.fetch = "transactions", func(l *Loaders, ctx context.Context, o restclient.TransactionListOptions) (*paging.Page[restclient.Transaction], error) {
		return l.up.Transactions(ctx, o)
	}
	l.orders.name, l.orders.fetch = "orders", func(l *Loaders, ctx context.Context, o restclient.OrderListOptions) (*paging.Page[restclient.Order], error) {
		return l.up.Orders(ctx, o)
	}
	l.redemptions.name, l.redemptions.fetch = "redemptions", func(l *Loaders, ctx context.Context, o restclient.RedemptionListOptions) (*paging.Page[restclient.Redemption], error) {
		return l.up.Redemptions(ctx, o)
	}
}

// lazy is a loader made on its first use: a graph-gophers dataloader whose
// cache is the request's de-duplication. Each key is fetched once per
// request and its result kept for the rest of it; a key primed before it is
// loaded is never fetched.
type lazy[K comparable, V any] struct {
	name  string // in spans and metrics
	fetch func(*Loaders, context.Context, K) (V, error)

	once   sync.Once
	loader *dataloader.Loader[K, V]
	cache  *dataloader.InMemoryCache[K, V] // the loader's cache
}

// get returns the dataloader, making it on the first call.
func (z *lazy[K, V]) get(l *Loaders) *dataloader.Loader[K, V] {
	z.once.Do(func() {
		z.cache = dataloader.NewCache[K, V]()
		z.loader = newLoader(l, z.name, z.fetch, z.cache)
	})
	return z.loader
}

// load loads key k through the loader. A key the request loaded or primed
// before is answered from the loader's cache directly: Load would make a
// channel and a result cell before looking there (5 allocations per hit).
func (z *lazy[K, V]) load(ctx context.Context, l *Loaders, k K) (V, error) {
	dl := z.get(l)
	if t, ok := z.cache.Get(ctx, k); ok {
		return t()
	}
	if p := l.cfg.Priority; p != nil {
		ctx = restclient.WithPriority(ctx, p(ctx))
	}
	return dl.Load(ctx, k)()
}

// prime stores v as k's result unless k is loaded or loading.
func (z *lazy[K, V]) prime(ctx context.Context, l *Loaders, k K, v V) {
	z.get(l).Prime(ctx, k, v)
}

// newLoader builds the dataloader name whose batch function fans fetch out
// over the batch's distinct keys, bounded by the request's semaphore, and
// returns results aligned with the keys. With a window (Config.Wait > 0) a
// batch collects the keys asked for during it; without one each key is
// dispatched as its own batch at once (batch capacity 1, no timer). In a
// traced request each dispatch is a span "loader <name>" (batchSpan), parent
// of the batch's upstream calls. A fetch that panics fails its key's loads
// with an error and the key is fetched again by the next load (the
// dataloader's own recovery).
func newLoader[K comparable, V any](l *Loaders, name string, fetch func(*Loaders, context.Context, K) (V, error), cache dataloader.Cache[K, V]) *dataloader.Loader[K, V] {
	var dl *dataloader.Loader[K, V]
	one := func(ctx context.Context, k K) (res *dataloader.Result[V]) {
		defer func() {
			// A panicking fetch fails this key's loads (the presenter logs
			// it as an internal error) and is forgotten, so the next load
			// fetches it again; it never takes the process down from a
			// batch goroutine.
			if r := recover(); r != nil {
				dl.Clear(ctx, k)
				res = &dataloader.Result[V]{Error: fmt.Errorf("loader %s: panic: %v", name, r)}
			}
		}()
		if l.sem != nil {
			select {
			case l.sem <- struct{}{}:
			case <-ctx.Done():
				return &dataloader.Result[V]{Error: ctx.Err()}
			}
			defer func() { <-l.sem }()
		}
		v, err := fetch(l, ctx, k)
		return &dataloader.Result[V]{Data: v, Error: err}
	}
	batch := func(parent context.Context, keys []K) []*dataloader.Result[V] {
		// ctx is assigned once, so the goroutines below capture it by value
		// (reassigning it would move it to the heap on every dispatch).
		ctx, span := batchSpan(parent, name, len(keys))
		if span != nil {
			defer span.End()
		}
		out := make([]*dataloader.Result[V], len(keys))
		if f := l.cfg.ObserveBatch; f != nil {
			f(name, len(keys))
		}
		if len(keys) == 1 {
			// A window that caught one key: the batch goroutine makes the
			// call itself.
			out[0] = one(ctx, keys[0])
			return out
		}
		// The report marks each call with the batch's size.
		bctx := calls.WithBatch(ctx, len(keys))
		var wg sync.WaitGroup
		for i, k := range keys {
			wg.Go(func() { out[i] = one(bctx, k) })
		}
		wg.Wait()
		return out
	}
	if l.cfg.Wait > 0 {
		dl = dataloader.NewBatchedLoader(batch, dataloader.WithCache(cache), dataloader.WithWait[K, V](l.cfg.Wait))
	} else {
		// A batch of one key needs an input queue of one: the default
		// queue (1,000 requests, 8 KB) would be allocated at every key.
		dl = dataloader.NewBatchedLoader(batch, dataloader.WithCache(cache), dataloader.WithWait[K, V](0),
			dataloader.WithBatchCapacity[K, V](1), dataloader.WithInputCapacity[K, V](1))
	}
	return dl
}

type ctxKey struct{}

// ContextKey is the key of the request's Source in a context: the context
// that carries it (graph's request, in the request's allocation) returns the
// Source from Value for this key.
var ContextKey any = ctxKey{}

// For returns the request's Source. It panics if the request was not set up
// by the facade's handler: a programming error, not a runtime condition.
func For(ctx context.Context) Source {
	s, ok := ctx.Value(ctxKey{}).(Source)
	if !ok {
		panic("loaders: no loaders in context (missing middleware)")
	}
	return s
}

// batchSpan starts the span of one loader dispatch of n keys as a child of
// ctx's span; nil (and no allocation) when ctx carries no valid span.
func batchSpan(ctx context.Context, name string, n int) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return ctx, nil
	}
	ctx, span := parent.TracerProvider().Tracer("github.com/workspacenet/facade/graph/loaders").Start(ctx, "loader "+name)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("facade.loader", name), attribute.Int("facade.loader.keys", n))
	}
	return ctx, span
}
