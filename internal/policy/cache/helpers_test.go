package cache

import (
	"context"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/workspacenet/facade/internal/testsupport/redistest"
	"github.com/workspacenet/facade/restclient"
)

var testSecret = []byte("test-secret-0123456789abcdef-0123456789")

// Three callers: bravo shares alpha's network, charlie alpha's Authorization.
var (
	alpha   = restclient.Credentials{Authorization: "Bearer tok-ALPHA-91c2e7", NetworkID: "0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"}
	bravo   = restclient.Credentials{Authorization: "Bearer tok-BRAVO-44d0a1", NetworkID: "0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"}
	charlie = restclient.Credentials{Authorization: "Bearer tok-ALPHA-91c2e7", NetworkID: "9a8b7c6d-5e4f-4a3b-9c2d-1e0f2a3b4c5d"}
)

var (
	resRoute   = restclient.OpGetResource.Route
	notesRoute = restclient.OpListCreditNotes.Route
	visitRoute = restclient.OpGetVisit.Route
)

func resPath(id string) string { return "/resources/v1/" + id }

func resBody(id, name string) []byte {
	return []byte(`{"resource":{"id":"` + id + `","name":"` + name + `","capacity":12}}`)
}

// testTTLs caches resources and credit notes, not visits.
func testTTLs() map[string]time.Duration {
	return map[string]time.Duration{"GET " + resRoute: 30 * time.Second, "GET " + notesRoute: 30 * time.Second}
}

// backend is a Store under test and ways to look at it.
type backend struct {
	store Store
	// replica returns another Store on the same data (what another
	// facade process sharing the store sees).
	replica func() Store
	// dump returns every key and raw value held.
	dump func(t *testing.T) map[string][]byte
}

// eachBackend runs f with a MemoryStore and with a RedisStore on a real
// Redis server.
func eachBackend(t *testing.T, f func(t *testing.T, b *backend)) {
	t.Run("memory", func(t *testing.T) {
		m := NewMemoryStore(8 << 20)
		f(t, &backend{
			store:   m,
			replica: func() Store { return m },
			dump:    func(*testing.T) map[string][]byte { return memDump(m) },
		})
	})
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		rdb := srv.Client()
		f(t, &backend{
			store:   NewRedisStore(rdb, time.Second),
			replica: func() Store { return NewRedisStore(srv.Client(), time.Second) },
			dump:    func(t *testing.T) map[string][]byte { return redisDump(t, rdb) },
		})
	})
}

func newCache(t *testing.T, s Store, edit ...func(*Config)) *Cache {
	t.Helper()
	cfg := Config{Secret: testSecret, TTL: testTTLs(), Store: s}
	for _, e := range edit {
		e(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func memDump(m *MemoryStore) map[string][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string][]byte{}
	for k, el := range m.items {
		out[k] = el.Value.(*memEntry).value
	}
	return out
}

// redisDump reads every key of the server's database with SCAN and GET.
func redisDump(t *testing.T, rdb *redis.Client) map[string][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := map[string][]byte{}
	it := rdb.Scan(ctx, 0, "*", 100).Iterator()
	for it.Next(ctx) {
		v, err := rdb.Get(ctx, it.Val()).Bytes()
		if err != nil {
			t.Fatalf("GET %s: %v", it.Val(), err)
		}
		out[it.Val()] = v
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// get is c.Get with a test context.
func get(t *testing.T, c *Cache, cr restclient.Credentials, route, path string) (string, bool) {
	t.Helper()
	b, ok := c.Get(t.Context(), cr, route, path)
	return string(b), ok
}

// mustHit fails t unless c answers want.
func mustHit(t *testing.T, c *Cache, cr restclient.Credentials, route, path string, want []byte) {
	t.Helper()
	got, ok := get(t, c, cr, route, path)
	if !ok || got != string(want) {
		t.Fatalf("Get %s as %v = %q (%d bytes), %v; want %q (%d bytes)", path, cr, short(got), len(got), ok, short(string(want)), len(want))
	}
}

// mustMiss fails t if c answers.
func mustMiss(t *testing.T, c *Cache, cr restclient.Credentials, route, path string) {
	t.Helper()
	if got, ok := get(t, c, cr, route, path); ok {
		t.Fatalf("Get %s as %v = %q (%d bytes); want a miss", path, cr, short(got), len(got))
	}
}

// short abbreviates s for messages.
func short(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

func keysWithPrefix(m map[string][]byte, prefix string) []string {
	var out []string
	for k := range maps.Keys(m) {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}
