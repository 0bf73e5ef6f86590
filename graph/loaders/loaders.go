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
	"net/http"
	"sync"
	"time"

	"github.com/graph-gophers/dataloader/v7"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/workspacenet/facade/internal/policy/calls"
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
	// ThroughLoad sends every key missing from a loader's cache through
	// the dataloader's Load (its batcher and sleeper goroutines) even
	// without a window, where it is otherwise fetched on the loading
	// goroutine (loadHere): the oracle of that path in tests.
	ThroughLoad bool
}

// DefaultConfig returns the default tuning (part of graph.DefaultOptions).
func DefaultConfig() Config { return Config{MaxConcurrency: DefaultMaxConcurrency} }

// Loaders are one request's loaders: the facade's Source. The batching
// loaders (New) keep one loader per GET operation of restclient's table,
// made on its first use (most queries need one or two, and a dataloader
// costs dozens of allocations to set up); list pages are keyed by their
// filter, so equal filters asked twice in a request are fetched once. The
// naive baseline (NewNaive) makes every call as it is asked.
type Loaders struct {
	cfg    Config
	client *restclient.Client
	naive  bool
	sem    chan struct{}
	slots  [maxGets]slot
}

// maxGets bounds the GET operations of restclient's table (each has its
// slot in every request's Loaders); the package refuses to start when the
// table has more.
const maxGets = 16

// slotOf maps an operation's table index to its slot (-1: not a GET).
var slotOf = func() []int {
	out := make([]int, len(restclient.Operations()))
	n := 0
	for i, op := range restclient.Operations() {
		out[i] = -1
		if op.Method == http.MethodGet {
			out[i] = n
			n++
		}
	}
	if n > maxGets {
		panic(fmt.Sprintf("graph/loaders: restclient's table has %d GET operations, more than maxGets (%d): raise it", n, maxGets))
	}
	return out
}()

// slot is the place of one operation's loader in a request's Loaders.
type slot struct {
	once   sync.Once
	loader any // *dataloader.Loader[K, V]
	cache  any // *dataloader.InMemoryCache[K, V], the loader's cache
	batch  any // dataloader.BatchFunc[K, V], the loader's batch function
	// mu makes loadHere's look-up and store of a missing key one step, as
	// the dataloader's own lock does Load's.
	mu sync.Mutex
}

// slot returns op's slot; op must be a GET of the table.
func (l *Loaders) slot(op *restclient.Operation) *slot { return &l.slots[slotOf[op.Index()]] }

// New returns fresh loaders for one request.
func New(client *restclient.Client, cfg Config) *Loaders {
	l := new(Loaders)
	l.Init(client, cfg)
	return l
}

// NewNaive returns the naive baseline for one request: every field that
// needs an upstream object makes its own call, with no batching, no
// per-request cache, no answers from embedded summaries and no lookups of
// products in their location's list. Its calls are bounded as the batching
// loaders' are: at most DefaultMaxConcurrency in flight.
func NewNaive(client *restclient.Client) *Loaders {
	return &Loaders{client: client, naive: true, sem: make(chan struct{}, DefaultMaxConcurrency)}
}

// Init makes l fresh loaders for one request, as New does, in place (a
// Loaders inside a request's own allocation). l must not be in use.
func (l *Loaders) Init(client *restclient.Client, cfg Config) {
	*l = Loaders{cfg: cfg, client: client}
	if cfg.MaxConcurrency > 0 {
		l.sem = make(chan struct{}, cfg.MaxConcurrency)
	}
}

// fetcher makes the upstream call behind key k of a loader (byID, byFilter:
// values holding their operation's row, so that a loader is made without a
// function value of its own).
type fetcher[K, V any] interface {
	fetch(l *Loaders, ctx context.Context, k K) (V, error)
}

// initSlot puts in s, under s.once, a graph-gophers dataloader whose cache
// is the request's de-duplication: each key is fetched once per request and
// its result kept for the rest of it, and a key primed before it is loaded
// is never fetched. name names it in spans and metrics; f makes its calls.
func initSlot[K comparable, V any, F fetcher[K, V]](s *slot, l *Loaders, name string, f F) {
	c := dataloader.NewCache[K, V]()
	dl, batch := newLoader[K, V](l, name, f, c)
	s.cache, s.loader, s.batch = c, dl, batch
}

// loaderIn returns the loader s holds, and its cache.
func loaderIn[K comparable, V any](s *slot) (*dataloader.Loader[K, V], *dataloader.InMemoryCache[K, V]) {
	dl, ok := s.loader.(*dataloader.Loader[K, V])
	if !ok {
		panic(fmt.Sprintf("graph/loaders: a loader used with two kinds of key or answer (%T)", s.loader))
	}
	return dl, s.cache.(*dataloader.InMemoryCache[K, V])
}

// load loads key k through the loader s holds (initSlot). A key the request
// loaded or primed before is answered from the loader's cache directly:
// Load would make a channel and a result cell before looking there (5
// allocations per hit). A missing key is fetched by the loader's batch
// function: through Load when there is a batch window (the batcher collects
// the window's keys), else on this goroutine (loadHere), as a batch of its
// one key. Both give the same answers, errors and calls (Load is the
// oracle: Config.ThroughLoad).
func load[K comparable, V any](ctx context.Context, l *Loaders, s *slot, k K) (V, error) {
	dl, cache := loaderIn[K, V](s)
	if t, ok := cache.Get(ctx, k); ok {
		return t()
	}
	if p := l.cfg.Priority; p != nil {
		ctx = restclient.WithPriority(ctx, p(ctx))
	}
	if l.cfg.Wait > 0 || l.cfg.ThroughLoad {
		return dl.Load(ctx, k)()
	}
	return loadHere(ctx, s, dl, cache, k)
}

// acquire takes one of the request's slots for a call in flight, or
// returns ctx's error; release gives it back.
func (l *Loaders) acquire(ctx context.Context) error {
	select {
	case l.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *Loaders) release() { <-l.sem }

// newLoader builds the dataloader name, and returns it with its batch
// function (loadHere runs it too), which fans f's fetch out over the batch's
// distinct keys, bounded by the request's semaphore, and
// returns results aligned with the keys. With a window (Config.Wait > 0) a
// batch collects the keys asked for during it; without one each key is
// dispatched as its own batch at once (batch capacity 1, no timer). In a
// traced request each dispatch is a span "loader <name>" (batchSpan), parent
// of the batch's upstream calls. A fetch that panics fails its key's loads
// with an error and the key is fetched again by the next load (the
// dataloader's own recovery).
func newLoader[K comparable, V any, F fetcher[K, V]](l *Loaders, name string, f F, cache dataloader.Cache[K, V]) (*dataloader.Loader[K, V], dataloader.BatchFunc[K, V]) {
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
		v, err := f.fetch(l, ctx, k)
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
	return dl, batch
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
