package cache

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/restclient"
)

func TestHitAfterPut(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		c := newCache(t, b.store)
		body := resBody("res-1", "Aurora")
		mustMiss(t, c, alpha, resRoute, resPath("res-1"))
		c.Put(t.Context(), alpha, resRoute, resPath("res-1"), body)
		mustHit(t, c, alpha, resRoute, resPath("res-1"), body)
		mustMiss(t, c, alpha, resRoute, resPath("res-2"))
		if s := c.Stats(); s != (Stats{Hits: 1, Misses: 2, Puts: 1}) {
			t.Errorf("Stats = %+v", s)
		}
		// A Put without a Get before it (cache reads skipped) is kept too.
		c.Put(t.Context(), alpha, resRoute, resPath("res-3"), resBody("res-3", "Borealis"))
		mustHit(t, c, alpha, resRoute, resPath("res-3"), resBody("res-3", "Borealis"))
		// A newer Put replaces the entry.
		c.Put(t.Context(), alpha, resRoute, resPath("res-1"), resBody("res-1", "Aurora II"))
		mustHit(t, c, alpha, resRoute, resPath("res-1"), resBody("res-1", "Aurora II"))
	})
}

func TestAnotherCredentialMisses(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		c := newCache(t, b.store)
		p := resPath("res-1")
		c.Put(t.Context(), alpha, resRoute, p, resBody("res-1", "alpha's view"))
		mustMiss(t, c, bravo, resRoute, p)   // same network, other token
		mustMiss(t, c, charlie, resRoute, p) // same token, other network
		c.Put(t.Context(), bravo, resRoute, p, resBody("res-1", "bravo's view"))
		mustHit(t, c, alpha, resRoute, p, resBody("res-1", "alpha's view"))
		mustHit(t, c, bravo, resRoute, p, resBody("res-1", "bravo's view"))

		// alpha's sealed value moved under bravo's key does not open for
		// bravo.
		dump := b.dump(t)
		ka, kb := c.keys.entryKey(alpha, resRoute, p), c.keys.entryKey(bravo, resRoute, p)
		if dump[ka] == nil || dump[kb] == nil {
			t.Fatalf("entries missing from the store: %d keys", len(dump))
		}
		if err := b.store.Set(t.Context(), kb, dump[ka], time.Minute); err != nil {
			t.Fatal(err)
		}
		mustMiss(t, c, bravo, resRoute, p)
	})
}

// TestMemoryTTLExpiry runs on a fake clock; Redis: TestRedisTTL.
func TestMemoryTTLExpiry(t *testing.T) {
	clk := &fakeClock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	m := NewMemoryStore(0)
	m.now = clk.Now
	c := newCache(t, m)
	p := resPath("res-1")
	c.Put(t.Context(), alpha, resRoute, p, resBody("res-1", "Aurora"))
	clk.Advance(30*time.Second - time.Millisecond)
	mustHit(t, c, alpha, resRoute, p, resBody("res-1", "Aurora"))
	clk.Advance(time.Millisecond)
	mustMiss(t, c, alpha, resRoute, p)
	// An entry whose tag version expired (tagTTL after the tag's first Put)
	// misses even within its own TTL.
	long := newCache(t, m, func(cfg *Config) { cfg.TTL = map[string]time.Duration{"GET " + resRoute: 2 * tagTTL} })
	p2 := resPath("res-2")
	long.Put(t.Context(), alpha, resRoute, p2, resBody("res-2", "Borealis"))
	clk.Advance(tagTTL - time.Millisecond)
	mustHit(t, long, alpha, resRoute, p2, resBody("res-2", "Borealis"))
	clk.Advance(time.Millisecond)
	mustMiss(t, long, alpha, resRoute, p2)
}

func TestUncachedNeverStored(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		c := newCache(t, b.store)
		ctx := t.Context()
		for _, put := range []struct{ why, route, path string }{
			{"route without TTL", visitRoute, "/visitors/visits/v1/v-1"},
			{"unknown route", "/nope/{id}", "/nope/1"},
			{"path not matching its route", resRoute, "/resources/v1/res-1/extra"},
			{"empty id", resRoute, "/resources/v1/"},
			{"list without a filter: no Invalidate reaches it", notesRoute, notesRoute + "?limit=25"},
		} {
			c.Put(ctx, alpha, put.route, put.path, []byte(`{"x":1}`))
			if _, ok := c.Get(ctx, alpha, put.route, put.path); ok {
				t.Errorf("%s: answered", put.why)
			}
		}
		c.Put(ctx, restclient.Credentials{NetworkID: alpha.NetworkID}, resRoute, resPath("res-1"), resBody("res-1", "anonymous"))
		if d := b.dump(t); len(d) != 0 {
			t.Errorf("store holds %d keys, want none", len(d))
		}
		if s := c.Stats(); s.Puts != 0 {
			t.Errorf("Stats = %+v", s)
		}
	})
}

func TestMaxBytes(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		c := newCache(t, b.store, func(cfg *Config) { cfg.MaxBytes = 100 })
		exact, over := bytes.Repeat([]byte("a"), 100), bytes.Repeat([]byte("b"), 101)
		c.Put(t.Context(), alpha, resRoute, resPath("exact"), exact)
		c.Put(t.Context(), alpha, resRoute, resPath("over"), over)
		mustHit(t, c, alpha, resRoute, resPath("exact"), exact)
		mustMiss(t, c, alpha, resRoute, resPath("over"))

		def := newCache(t, b.store) // MaxBytes 0: DefaultMaxBytes
		big := bytes.Repeat([]byte("c"), DefaultMaxBytes)
		def.Put(t.Context(), alpha, resRoute, resPath("big"), big)
		def.Put(t.Context(), alpha, resRoute, resPath("bigger"), append(big, 'c'))
		mustHit(t, def, alpha, resRoute, resPath("big"), big)
		mustMiss(t, def, alpha, resRoute, resPath("bigger"))
	})
}

func TestInvalidateReachesEveryIdentity(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		c := newCache(t, b.store)
		ctx := t.Context()
		inv1p1 := notesRoute + "?invoiceRef=inv-1&limit=25"
		inv1p2 := notesRoute + "?invoiceRef=inv-1&limit=25&nextPageToken=p2"
		inv2 := notesRoute + "?invoiceRef=inv-2&limit=25"
		loc := notesRoute + "?limit=25&locationRef=loc-1"
		for _, cr := range []restclient.Credentials{alpha, bravo} {
			for _, p := range []string{resPath("res-1"), resPath("res-2")} {
				c.Put(ctx, cr, resRoute, p, []byte(cr.NetworkID+p))
			}
			for _, p := range []string{inv1p1, inv1p2, inv2, loc} {
				c.Put(ctx, cr, notesRoute, p, []byte(cr.NetworkID+p))
			}
		}
		if err := c.Invalidate(ctx, resRoute, "id", "res-1"); err != nil {
			t.Fatal(err)
		}
		if err := c.Invalidate(ctx, notesRoute, "invoiceRef", "inv-1"); err != nil {
			t.Fatal(err)
		}
		for _, cr := range []restclient.Credentials{alpha, bravo} {
			mustMiss(t, c, cr, resRoute, resPath("res-1"))
			mustMiss(t, c, cr, notesRoute, inv1p1)
			mustMiss(t, c, cr, notesRoute, inv1p2)
			mustHit(t, c, cr, resRoute, resPath("res-2"), []byte(cr.NetworkID+resPath("res-2")))
			mustHit(t, c, cr, notesRoute, inv2, []byte(cr.NetworkID+inv2))
			mustHit(t, c, cr, notesRoute, loc, []byte(cr.NetworkID+loc))
		}
		// What is fetched afterwards is cached again.
		c.Put(ctx, alpha, resRoute, resPath("res-1"), []byte("fresh"))
		mustHit(t, c, alpha, resRoute, resPath("res-1"), []byte("fresh"))
		if s := c.Stats(); s.Invalidations != 2 || s.Errors != 0 {
			t.Errorf("Stats = %+v", s)
		}
	})
}

func TestInvalidateReachesReplicas(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		one, two := newCache(t, b.store), newCache(t, b.replica())
		ctx := t.Context()
		p := resPath("res-1")
		one.Put(ctx, alpha, resRoute, p, resBody("res-1", "Aurora"))
		two.Put(ctx, bravo, resRoute, p, resBody("res-1", "Aurora"))
		mustHit(t, two, alpha, resRoute, p, resBody("res-1", "Aurora"))
		mustHit(t, one, bravo, resRoute, p, resBody("res-1", "Aurora"))
		if err := two.Invalidate(ctx, resRoute, "id", "res-1"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []*Cache{one, two} {
			mustMiss(t, c, alpha, resRoute, p)
			mustMiss(t, c, bravo, resRoute, p)
		}
		// A replica with another secret shares nothing.
		other := newCache(t, b.replica(), func(cfg *Config) { cfg.Secret = []byte(strings.Repeat("x", MinSecretLen)) })
		one.Put(ctx, alpha, resRoute, p, resBody("res-1", "Aurora"))
		mustHit(t, two, alpha, resRoute, p, resBody("res-1", "Aurora"))
		mustMiss(t, other, alpha, resRoute, p)
	})
}

// A body fetched before an invalidation is stale even when its Put comes
// after it: the entry carries the versions its Get saw.
func TestInvalidationDuringFetch(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		c := newCache(t, b.store)
		ctx := t.Context()
		for _, p := range []string{resPath("new-tag"), resPath("old-tag")} {
			if p == resPath("old-tag") { // its tag has a version before the Get
				c.Put(ctx, bravo, resRoute, p, []byte("bravo"))
				mustHit(t, c, bravo, resRoute, p, []byte("bravo"))
			}
			mustMiss(t, c, alpha, resRoute, p) // the fetch starts
			if err := c.Invalidate(ctx, resRoute, "id", strings.TrimPrefix(p, "/resources/v1/")); err != nil {
				t.Fatal(err)
			}
			c.Put(ctx, alpha, resRoute, p, []byte("fetched before the change"))
			mustMiss(t, c, alpha, resRoute, p)
			// The next fetch is cached.
			c.Put(ctx, alpha, resRoute, p, []byte("after"))
			mustHit(t, c, alpha, resRoute, p, []byte("after"))
		}
	})
}

func TestInvalidateArguments(t *testing.T) {
	c := newCache(t, NewMemoryStore(0))
	ctx := t.Context()
	for _, ok := range []struct{ route, param string }{
		{resRoute, "id"},
		{visitRoute, "id"}, // not cached here, maybe by another replica
		{restclient.OpGetProduct.Route, "productId"},
		{restclient.OpListInvoiceItems.Route, "id"},
		{restclient.OpListComments.Route, "id"},
		{notesRoute, "invoiceRef"},
		{notesRoute, "locationRef"},
		{restclient.OpListProducts.Route, "locationRef"},
		{restclient.OpListRedemptions.Route, "promocodeRef"},
	} {
		if err := c.Invalidate(ctx, ok.route, ok.param, "v"); err != nil {
			t.Errorf("Invalidate(%s, %s): %v", ok.route, ok.param, err)
		}
	}
	for _, bad := range []struct{ route, param, want string }{
		{"/resources/v1/{ID}", "id", "known: /billing"},
		{resRoute, "resourceId", `known: id`},
		{notesRoute, "id", "known: invoiceRef, locationRef"},
		{restclient.OpListProducts.Route, "productId", "known: locationRef"},
	} {
		err := c.Invalidate(ctx, bad.route, bad.param, "v")
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Invalidate(%s, %s) = %v; want an error with %q", bad.route, bad.param, err, bad.want)
		}
	}
	if s := c.Stats(); s.Invalidations != 9 {
		t.Errorf("Stats = %+v", s)
	}
}
