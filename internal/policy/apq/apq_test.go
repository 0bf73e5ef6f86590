package apq

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/policy/redisx"
	"github.com/workspacenet/facade/internal/testsupport/redistest"
)

func hashOf(q string) string {
	sum := sha256.Sum256([]byte(q))
	return hex.EncodeToString(sum[:])
}

func open(t *testing.T, url string) *redisx.Client {
	t.Helper()
	rc, err := redisx.Open(url, redisx.Options{Logger: slog.New(slog.DiscardHandler), OpTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	return rc
}

func TestSharedBetweenReplicas(t *testing.T) {
	s := redistest.Start(t)
	a, b := New(open(t, s.URL), testConfig()), New(open(t, s.URL), testConfig())
	raw := s.Client()
	const q = "{ me { id name } }"
	h := hashOf(q)

	if _, ok := b.Get(t.Context(), h); ok {
		t.Fatal("found before it was added")
	}
	a.Add(t.Context(), h, q)
	if _, ok := b.Get(t.Context(), h); ok {
		t.Fatal("Add shared the query: only Share does")
	}
	if !a.Share(t.Context(), h, q, "client-1") {
		t.Fatal("not shared")
	}
	if got, ok := b.Get(t.Context(), h); !ok || got != q {
		t.Fatalf("the other replica got %q, %v", got, ok)
	}
	ttl, err := raw.PTTL(t.Context(), KeyPrefix+h).Result()
	if err != nil || ttl < TTL-time.Minute || ttl > TTL {
		t.Errorf("key %s%s lives %v (%v), want %v", KeyPrefix, h, ttl, err, TTL)
	}
	// b keeps what it read: found without Redis's copy.
	if err := raw.Del(t.Context(), KeyPrefix+h).Err(); err != nil {
		t.Fatal(err)
	}
	if got, ok := b.Get(t.Context(), h); !ok || got != q {
		t.Errorf("not kept locally: %q, %v", got, ok)
	}

	// A value in Redis that does not hash to its key is not served.
	other := hashOf("{ other }")
	if err := raw.Set(t.Context(), KeyPrefix+other, "{ me { password } }", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if got, ok := b.Get(t.Context(), other); ok {
		t.Errorf("served %q for a hash it does not have", got)
	}
	// Too long: not stored at all.
	long := "{ " + strings.Repeat("a ", testConfig().MaxQueryBytes/2) + "}"
	a.Add(t.Context(), hashOf(long), long)
	if _, ok := a.Get(t.Context(), hashOf(long)); ok || a.Share(t.Context(), hashOf(long), long, "client-1") {
		t.Error("a query over MaxQueryBytes was stored")
	}
	// Keys that are not a SHA-256 stay local.
	a.Add(t.Context(), "not-a-hash", q)
	if _, ok := a.Get(t.Context(), "not-a-hash"); !ok || a.Share(t.Context(), "not-a-hash", q, "client-1") {
		t.Error("not stored locally, or shared")
	}
	keys, err := raw.Keys(t.Context(), KeyPrefix+"*").Result()
	if err != nil || len(keys) != 1 || keys[0] != KeyPrefix+other {
		t.Errorf("Redis holds %v (%v), want only %s%s", keys, err, KeyPrefix, other)
	}
}

func TestWithoutRedis(t *testing.T) {
	s := redistest.StartOwn(t)
	rcA, rcB := open(t, s.URL), open(t, s.URL)
	a, b := New(rcA, testConfig()), New(rcB, testConfig())
	s.Stop()
	const q = "{ offline }"
	h := hashOf(q)
	a.Add(t.Context(), h, q)
	a.Share(t.Context(), h, q, "client-1") // finds Redis gone
	if got, ok := a.Get(t.Context(), h); !ok || got != q {
		t.Fatalf("with Redis stopped: %q, %v", got, ok)
	}
	if _, ok := b.Get(t.Context(), h); ok {
		t.Fatal("the other replica found a query Redis never had")
	}
	if rcA.Healthy() || rcB.Healthy() {
		t.Fatal("Redis is stopped but the clients are healthy")
	}

	s.Restart()
	for _, rc := range []*redisx.Client{rcA, rcB} {
		deadline := time.Now().Add(10 * time.Second)
		for !rc.Healthy() {
			if time.Now().After(deadline) {
				t.Fatalf("not healthy 10s after Restart: %+v", rc.Status())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	const q2 = "{ online }"
	a.Share(t.Context(), hashOf(q2), q2, "client-1")
	if got, ok := b.Get(t.Context(), hashOf(q2)); !ok || got != q2 {
		t.Errorf("after Restart the other replica got %q, %v", got, ok)
	}
}

func TestLocalOnly(t *testing.T) {
	cfg := testConfig()
	cfg.Entries = 2
	c := New(nil, cfg)
	for i := range 3 {
		q := fmt.Sprintf("{ q%d }", i)
		c.Add(t.Context(), hashOf(q), q)
	}
	if _, ok := c.Get(t.Context(), hashOf("{ q0 }")); ok {
		t.Error("the LRU kept more than its size")
	}
	if got, ok := c.Get(t.Context(), hashOf("{ q2 }")); !ok || got != "{ q2 }" {
		t.Errorf("got %q, %v", got, ok)
	}
}

func testConfig() Config {
	cfg := DefaultConfig()
	cfg.MaxQueryBytes = 4 << 10
	return cfg
}

// The local LRU holds at most Config.Bytes, however many queries come.
func TestLocalBoundInBytes(t *testing.T) {
	cfg := testConfig()
	cfg.Entries, cfg.Bytes = 0, 64<<10
	c := New(nil, cfg)
	for i := range 200 {
		q := fmt.Sprintf("{ q%d } # %s", i, strings.Repeat("x", 4000))
		c.Add(t.Context(), hashOf(q), q)
		if c.LocalBytes() > cfg.Bytes {
			t.Fatalf("after %d queries the LRU holds %d bytes, bound %d", i+1, c.LocalBytes(), cfg.Bytes)
		}
	}
}

// Registrations past a client's budget, or past all clients' budget, stay
// local; an existing key is not charged again.
func TestShareBudgets(t *testing.T) {
	s := redistest.Start(t)
	cfg := testConfig()
	cfg.ClientBytes, cfg.TotalBytes = 3*(1000+250+KeyOverhead), 5*(1000+250+KeyOverhead)
	a := New(open(t, s.URL), cfg)
	query := func(i int) string {
		q := fmt.Sprintf("{ q%d } #", i)
		return q + strings.Repeat("x", 1000-len(q))
	}
	shared := func(client string, from, to int) (n int) {
		for i := from; i < to; i++ {
			if a.Share(t.Context(), hashOf(query(i)), query(i), client) {
				n++
			}
		}
		return n
	}
	if n := shared("client-1", 0, 10); n != 3 {
		t.Errorf("client-1 shared %d of 10, want its budget's 3", n)
	}
	if !a.Share(t.Context(), hashOf(query(0)), query(0), "client-1") {
		t.Error("a query already shared is reported not shared")
	}
	if n := shared("client-2", 10, 20); n != 2 {
		t.Errorf("client-2 shared %d of 10, want the 2 left of the total", n)
	}
	if n := shared("client-3", 20, 30); n != 0 {
		t.Errorf("client-3 shared %d past the total", n)
	}
	keys, err := s.Client().Keys(t.Context(), KeyPrefix+"*").Result()
	if err != nil || len(keys) != 5 {
		t.Errorf("Redis holds %d queries (%v), want 5", len(keys), err)
	}
}
