package apq

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/testserver"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/workspacenet/facade/internal/redistest"
	"github.com/workspacenet/facade/internal/redisx"
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
	a, b := New(open(t, s.URL), 8), New(open(t, s.URL), 8)
	raw := s.Client()
	const q = "{ me { id name } }"
	h := hashOf(q)

	if _, ok := b.Get(t.Context(), h); ok {
		t.Fatal("found before it was added")
	}
	a.Add(t.Context(), h, q)
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
	long := "{ " + strings.Repeat("a ", MaxQueryBytes/2) + "}"
	a.Add(t.Context(), hashOf(long), long)
	if _, ok := a.Get(t.Context(), hashOf(long)); ok {
		t.Error("a query over MaxQueryBytes was stored")
	}
	// Keys that are not a SHA-256 stay local.
	a.Add(t.Context(), "not-a-hash", q)
	if _, ok := a.Get(t.Context(), "not-a-hash"); !ok {
		t.Error("not stored locally")
	}
	keys, err := raw.Keys(t.Context(), "*").Result()
	if err != nil || len(keys) != 1 || keys[0] != KeyPrefix+other {
		t.Errorf("Redis holds %v (%v), want only %s%s", keys, err, KeyPrefix, other)
	}
}

func TestWithoutRedis(t *testing.T) {
	s := redistest.StartOwn(t)
	rcA, rcB := open(t, s.URL), open(t, s.URL)
	a, b := New(rcA, 8), New(rcB, 8)
	s.Stop()
	const q = "{ offline }"
	h := hashOf(q)
	a.Add(t.Context(), h, q) // finds Redis gone
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
	a.Add(t.Context(), hashOf(q2), q2)
	if got, ok := b.Get(t.Context(), hashOf(q2)); !ok || got != q2 {
		t.Errorf("after Restart the other replica got %q, %v", got, ok)
	}
}

func TestLocalOnly(t *testing.T) {
	c := New(nil, 2)
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

// Through gqlgen: a query registered with one replica's handler runs on
// the other's from its hash alone.
func TestPersistedQueryAcrossHandlers(t *testing.T) {
	s := redistest.Start(t)
	handlerWith := func(c graphql.Cache[string]) http.Handler {
		h := testserver.New()
		h.AddTransport(transport.POST{})
		h.Use(extension.AutomaticPersistedQuery{Cache: c})
		return h
	}
	a, b := handlerWith(New(open(t, s.URL), 8)), handlerWith(New(open(t, s.URL), 8))
	const q = "{ name }"
	ext := fmt.Sprintf(`"extensions":{"persistedQuery":{"version":1,"sha256Hash":%q}}`, hashOf(q))
	post := func(h http.Handler, body string) string {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		return rec.Body.String()
	}
	if got := post(b, "{"+ext+"}"); !strings.Contains(got, "PersistedQueryNotFound") {
		t.Fatalf("unknown hash: %s", got)
	}
	if got := post(a, fmt.Sprintf(`{"query":%q,%s}`, q, ext)); got != `{"data":{"name":"test"}}` {
		t.Fatalf("registering: %s", got)
	}
	if got := post(b, "{"+ext+"}"); got != `{"data":{"name":"test"}}` {
		t.Errorf("the other replica from the hash: %s", got)
	}
}
