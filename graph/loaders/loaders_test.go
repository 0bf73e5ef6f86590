package loaders

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/workspacenet/facade/restclient"
)

// bothPaths runs test with the default configuration (a missing key
// fetched on the loading goroutine) and with its oracle, every missing key
// through the dataloader's Load (Config.ThroughLoad).
func bothPaths(t *testing.T, test func(t *testing.T, cfg Config)) {
	for _, through := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.ThroughLoad = through
		t.Run(map[bool]string{false: "here", true: "through Load"}[through], func(t *testing.T) { test(t, cfg) })
	}
}

// TestLoaderFetchesEachKeyOnce: without a batch window, concurrent loads of
// one key make one fetch and all get its result; a primed key is not
// fetched, and priming a loaded key keeps what was loaded.
func TestLoaderFetchesEachKeyOnce(t *testing.T) { bothPaths(t, testFetchesEachKeyOnce) }

func testFetchesEachKeyOnce(t *testing.T, cfg Config) {
	var fetches atomic.Int32
	started, release := make(chan struct{}), make(chan struct{})
	res := &restclient.Resource{ID: "r1"}
	z := testLoader(New(nil, cfg), func(_ *Loaders, _ context.Context, id string) (*restclient.Resource, error) {
		if fetches.Add(1) == 1 {
			close(started)
		}
		<-release
		return res, nil
	})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if v, err := z.load(t.Context(), "r1"); v != res || err != nil {
				t.Errorf("load = %v, %v", v, err)
			}
		})
	}
	<-started
	close(release)
	wg.Wait()
	primed := &restclient.Resource{ID: "r2"}
	z.prime(t.Context(), "r2", primed)
	z.prime(t.Context(), "r1", primed) // loaded: kept
	if v, _ := z.load(t.Context(), "r2"); v != primed {
		t.Errorf("primed key: %v", v)
	}
	if v, _ := z.load(t.Context(), "r1"); v != res {
		t.Errorf("prime replaced a loaded key: %v", v)
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("%d fetches, want 1", n)
	}
}

// tloader is a loader of its own slot in l, named "test", fetching with
// fetch.
type tloader struct {
	l     *Loaders
	s     *slot
	fetch fetchFunc
}

// fetchFunc is a fetcher of resources by id.
type fetchFunc func(l *Loaders, ctx context.Context, id string) (*restclient.Resource, error)

func (f fetchFunc) fetch(l *Loaders, ctx context.Context, id string) (*restclient.Resource, error) {
	return f(l, ctx, id)
}

func testLoader(l *Loaders, fetch fetchFunc) *tloader {
	return &tloader{l, new(slot), fetch}
}

func (z *tloader) init() {
	z.s.once.Do(func() { initSlot[string, *restclient.Resource](z.s, z.l, "test", z.fetch) })
}

func (z *tloader) load(ctx context.Context, k string) (*restclient.Resource, error) {
	z.init()
	return load[string, *restclient.Resource](ctx, z.l, z.s, k)
}

func (z *tloader) prime(ctx context.Context, k string, v *restclient.Resource) {
	z.init()
	dl, _ := loaderIn[string, *restclient.Resource](z.s)
	dl.Prime(ctx, k, v)
}

// TestLoaderPanic: a fetch that panics fails the loads of its key with an
// error (the process goes on), and the key is fetched again by the next load.
func TestLoaderPanic(t *testing.T) { bothPaths(t, testPanic) }

func testPanic(t *testing.T, cfg Config) {
	started, release := make(chan struct{}), make(chan struct{})
	var fetches atomic.Int32
	z := testLoader(New(nil, cfg), func(_ *Loaders, _ context.Context, id string) (*restclient.Resource, error) {
		if fetches.Add(1) == 1 {
			close(started)
			<-release
			panic("boom")
		}
		return &restclient.Resource{ID: id}, nil
	})
	type result struct {
		v   *restclient.Resource
		err error
	}
	first := make(chan result)
	go func() {
		v, err := z.load(t.Context(), "r1")
		first <- result{v, err}
	}()
	<-started
	waiter := make(chan result)
	go func() {
		v, err := z.load(t.Context(), "r1")
		waiter <- result{v, err}
	}()
	close(release)
	if r := <-first; r.v != nil || r.err == nil || !strings.Contains(r.err.Error(), "loader test: panic: boom") {
		t.Fatalf("panicking load = %v, %v", r.v, r.err)
	}
	// The waiter either joined the panicking fetch (its error) or came after
	// it (a fresh fetch).
	if r := <-waiter; (r.err == nil) == (r.v == nil) || (r.err != nil && !strings.Contains(r.err.Error(), "loader test: panic: boom")) {
		t.Fatalf("waiter = %v, %v", r.v, r.err)
	}
	if v, err := z.load(t.Context(), "r1"); err != nil || v.ID != "r1" {
		t.Fatalf("load after the panic = %v, %v", v, err)
	}
}
