package cache

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/workspacenet/facade/internal/testsupport/redistest"
	"github.com/workspacenet/facade/restclient"
)

// generous bounds a call that must return on its own; it says nothing of
// speed (the store's op timeout is 100ms).
const generous = 10 * time.Second

func TestRedisTTL(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client()
	c := newCache(t, NewRedisStore(rdb, time.Second))
	p := resPath("res-1")
	c.Put(t.Context(), alpha, resRoute, p, resBody("res-1", "Aurora"))
	key := c.keys.entryKey(alpha, resRoute, p)
	if ttl, err := rdb.PTTL(t.Context(), key).Result(); err != nil || ttl <= 0 || ttl > 30*time.Second {
		t.Errorf("PTTL of the entry = %v, %v; want in (0, 30s]", ttl, err)
	}
	tk := c.keys.tagKey(resRoute, tag{"id", "res-1"})
	if ttl, err := rdb.PTTL(t.Context(), tk).Result(); err != nil || ttl <= 30*time.Second || ttl > tagTTL {
		t.Errorf("PTTL of the tag = %v, %v; want in (30s, %v]", ttl, err, tagTTL)
	}

	// A short TTL: the entry goes away on its own.
	short := newCache(t, NewRedisStore(rdb, time.Second), func(cfg *Config) {
		cfg.TTL = map[string]time.Duration{"GET " + resRoute: 50 * time.Millisecond}
	})
	short.Put(t.Context(), bravo, resRoute, p, resBody("res-1", "Aurora"))
	if short.Stats().Puts != 1 {
		t.Fatalf("Stats = %+v", short.Stats())
	}
	deadline := time.Now().Add(generous)
	for {
		if _, ok := short.Get(t.Context(), bravo, resRoute, p); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("entry with a 50ms TTL still answered after 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n, err := rdb.Exists(t.Context(), short.keys.entryKey(bravo, resRoute, p)).Result(); err != nil || n != 0 {
		t.Errorf("expired entry: EXISTS = %d, %v", n, err)
	}
}

// Losing a tag's version (eviction, flush) makes its entries miss.
func TestRedisLostTagIsAMiss(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client()
	c := newCache(t, NewRedisStore(rdb, time.Second))
	p := resPath("res-1")
	c.Put(t.Context(), alpha, resRoute, p, resBody("res-1", "Aurora"))
	mustHit(t, c, alpha, resRoute, p, resBody("res-1", "Aurora"))
	if n, err := rdb.Del(t.Context(), c.keys.tagKey(resRoute, tag{"id", "res-1"})).Result(); err != nil || n != 1 {
		t.Fatalf("DEL tag = %d, %v", n, err)
	}
	mustMiss(t, c, alpha, resRoute, p)
}

func TestRedisDumpRevealsNothing(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client()
	c := newCache(t, NewRedisStore(rdb, time.Second))
	ctx := t.Context()
	secrets := []string{
		// credentials, whole and in parts
		alpha.Authorization, bravo.Authorization, "tok-ALPHA-91c2e7", "tok-BRAVO-44d0a1", alpha.NetworkID,
		alpha.Identity(), bravo.Identity(),
		// ids in paths and queries, routes
		"res-7d41", "inv-5be0", "loc-c3a9", "/resources/v1", "credit_notes",
		// field values of the bodies
		"Orion Boardroom", "refund for the broken projector", "EUR", "4218.55",
	}
	noteBody := []byte(`{"creditNotes":[{"id":"cn-1","invoiceRef":"inv-5be0","reason":"refund for the broken projector","currency":"EUR","total":4218.55}]}`)
	for _, cr := range []restclient.Credentials{alpha, bravo} {
		c.Put(ctx, cr, resRoute, resPath("res-7d41"), resBody("res-7d41", "Orion Boardroom"))
		c.Put(ctx, cr, notesRoute, notesRoute+"?invoiceRef=inv-5be0&limit=25", noteBody)
		c.Put(ctx, cr, notesRoute, notesRoute+"?limit=25&locationRef=loc-c3a9", noteBody)
	}
	if err := c.Invalidate(ctx, notesRoute, "locationRef", "loc-c3a9"); err != nil {
		t.Fatal(err)
	}
	dump := redisDump(t, rdb)
	entries, tags := keysWithPrefix(dump, entryPrefix), keysWithPrefix(dump, tagPrefix)
	if len(entries) != 6 || len(tags) != 3 || len(dump) != 9 {
		t.Fatalf("dump: %d entries, %d tags, %d keys; want 6, 3, 9", len(entries), len(tags), len(dump))
	}
	for k, v := range dump {
		for _, s := range secrets {
			if strings.Contains(k, s) || bytes.Contains(v, []byte(s)) {
				t.Errorf("key %s or its value contains %q", k, s)
			}
		}
	}
}

// With the server stopped every call returns, as a miss or nothing done, and
// the cache works again once it is back.
func TestRedisDown(t *testing.T) {
	srv := redistest.StartOwn(t)
	rdb := srv.Client()
	c := newCache(t, NewRedisStore(rdb, 100*time.Millisecond))
	p := resPath("res-1")
	c.Put(t.Context(), alpha, resRoute, p, resBody("res-1", "Aurora"))
	mustHit(t, c, alpha, resRoute, p, resBody("res-1", "Aurora"))
	srv.Stop()

	returns(t, "Get", func() {
		if _, ok := c.Get(t.Context(), alpha, resRoute, p); ok {
			t.Error("Get answered with the server stopped")
		}
	})
	returns(t, "Put", func() { c.Put(t.Context(), alpha, resRoute, resPath("res-2"), []byte("x")) })
	returns(t, "Invalidate", func() {
		if err := c.Invalidate(t.Context(), resRoute, "id", "res-1"); err != nil {
			t.Errorf("Invalidate: %v", err)
		}
	})
	if s := c.Stats(); s.Errors < 3 || s.Puts != 1 || s.Invalidations != 0 {
		t.Errorf("Stats = %+v", s)
	}

	srv.Restart()
	deadline := time.Now().Add(generous)
	for {
		c.Put(t.Context(), alpha, resRoute, p, resBody("res-1", "again"))
		if b, ok := c.Get(t.Context(), alpha, resRoute, p); ok && string(b) == string(resBody("res-1", "again")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no hit 10s after the server restarted")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A server that accepts but does not answer (paused clients) bounds every
// call by the op timeout, even with a client that would wait a minute.
func TestRedisHung(t *testing.T) {
	srv := redistest.StartOwn(t)
	opt, err := redis.ParseURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	opt.ReadTimeout, opt.WriteTimeout, opt.ContextTimeoutEnabled = time.Minute, time.Minute, false
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	c := newCache(t, NewRedisStore(rdb, 100*time.Millisecond))
	p := resPath("res-1")
	c.Put(t.Context(), alpha, resRoute, p, resBody("res-1", "Aurora"))
	mustHit(t, c, alpha, resRoute, p, resBody("res-1", "Aurora"))

	// Paused for longer than the test waits; the server is killed at cleanup.
	if err := srv.Client().Do(t.Context(), "CLIENT", "PAUSE", 120_000, "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	returns(t, "Get", func() {
		if _, ok := c.Get(t.Context(), alpha, resRoute, p); ok {
			t.Error("Get answered from a paused server")
		}
	})
	returns(t, "Put", func() { c.Put(t.Context(), alpha, resRoute, resPath("res-2"), []byte("x")) })
	returns(t, "Invalidate", func() { c.Invalidate(t.Context(), resRoute, "id", "res-1") })
	if s := c.Stats(); s.Errors < 3 || s.Puts != 1 {
		t.Errorf("Stats = %+v", s)
	}
}

// returns fails t unless f returns within generous.
func returns(t *testing.T, name string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(generous):
		t.Fatalf("%s did not return within %v", name, generous)
	}
}
