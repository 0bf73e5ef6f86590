package loaders

import (
	"context"
	"fmt"

	"github.com/graph-gophers/dataloader/v7"
)

// cell is the result of one key fetched by loadHere, kept in the loader's
// cache as the key's thunk: loads of the key that come while it is fetched
// wait for it, later ones read it.
type cell[V any] struct {
	done chan struct{} // closed once v and err are set
	v    V
	err  error
}

// get is the cell's thunk.
func (c *cell[V]) get() (V, error) {
	<-c.done
	return c.v, c.err
}

// loadHere is Load without a batch window, on the caller's goroutine: key k,
// missing from the loader's cache, gets a result cell there (so that
// concurrent loads of k wait for this fetch, as they would for Load's), and
// the loader's batch function runs with k alone (the same span, semaphore,
// priority and recovery as a batch of Load's; no batcher or sleeper
// goroutine, no channel per load). A batch function that panics fails the
// loads of k and k is forgotten, as Load does.
func loadHere[K comparable, V any](ctx context.Context, s *slot, dl *dataloader.Loader[K, V], cache *dataloader.InMemoryCache[K, V], k K) (V, error) {
	s.mu.Lock()
	if t, ok := cache.Get(ctx, k); ok {
		s.mu.Unlock()
		return t()
	}
	c := &cell[V]{done: make(chan struct{})}
	cache.Set(ctx, k, c.get)
	s.mu.Unlock()
	res, panicked := runBatch(ctx, s.batch.(dataloader.BatchFunc[K, V]), k)
	if panicked {
		dl.Clear(ctx, k)
	}
	c.v, c.err = res.Data, res.Error
	close(c.done)
	return c.v, c.err
}

// runBatch runs batch with key k alone and returns its result; a panic
// (outside the fetch, which recovers its own) is a failed result, as the
// dataloader's batcher makes it.
func runBatch[K comparable, V any](ctx context.Context, batch dataloader.BatchFunc[K, V], k K) (res *dataloader.Result[V], panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			res, panicked = &dataloader.Result[V]{Error: fmt.Errorf("Panic received in batch function: %v", r)}, true
		}
	}()
	out := batch(ctx, []K{k})
	if len(out) != 1 || out[0] == nil {
		return &dataloader.Result[V]{Error: fmt.Errorf("loader: the batch function answered %d results for 1 key", len(out))}, false
	}
	return out[0], false
}
