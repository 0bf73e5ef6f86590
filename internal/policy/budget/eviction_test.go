package budget

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/redistest"
)

// TestBudgetKeysSurviveMaxmemory fills a Redis with maxmemory 4 MB under
// the eviction policy docs/redis.md asks for (volatile-lru) with entries
// that, like the response cache's and the persisted queries', expire: Redis
// evicts those, never a budget log (it has no TTL), and the budget keeps
// pacing through Redis.
func TestBudgetKeysSurviveMaxmemory(t *testing.T) {
	s := redistest.StartWith(t, "--maxmemory", "4mb", "--maxmemory-policy", "volatile-lru", "--maxmemory-samples", "10")
	// One request per 10 s: each log lives 10 s after its one send, longer
	// than the test takes on a slow machine.
	b, rc, log := replica(t, s.URL, Config{RPS: 0.1, Burst: 1}, "new", 5*time.Second)
	raw := s.Client()
	const clients = 50
	for i := range clients {
		if _, err := b.Wait(t.Context(), fmt.Sprintf("c%d", i), Turn{}); err != nil {
			t.Fatal(err)
		}
	}
	// 12 MB of expiring entries, three times maxmemory.
	value := strings.Repeat("x", 4096)
	for i := range 3000 {
		if err := raw.Set(t.Context(), fmt.Sprintf("wnf:cache:%d", i), value, time.Hour).Err(); err != nil {
			t.Fatalf("SET %d: %v", i, err)
		}
	}
	info, _ := raw.Info(t.Context(), "stats").Result()
	if !strings.Contains(info, "evicted_keys:") || strings.Contains(info, "evicted_keys:0\r") {
		t.Fatalf("nothing evicted: the test did not fill Redis\n%s", info)
	}
	for i := range clients {
		if n, err := raw.Exists(t.Context(), Key(fmt.Sprintf("c%d", i))).Result(); err != nil || n != 1 {
			t.Fatalf("budget log of c%d evicted (%d, %v)", i, n, err)
		}
	}
	// Still shared: a slot comes from Redis.
	before := len(log.grants())
	if _, err := b.Wait(t.Context(), "new", Turn{}); err != nil {
		t.Fatal(err)
	}
	if len(log.grants()) != before+1 || !rc.Healthy() {
		t.Errorf("after eviction: %d grants from Redis (want %d), healthy %v", len(log.grants()), before+1, rc.Healthy())
	}
	if ttl, err := raw.PTTL(t.Context(), Key("c0")).Result(); err != nil || ttl != -1 {
		t.Errorf("budget log TTL %v (%v), want none", ttl, err)
	}
	// An idle client's log leaves Redis a window after its last send.
	fast, _, _ := replica(t, s.URL, Config{RPS: 10, Burst: 2}, "idle", 5*time.Second)
	if _, err := fast.Wait(t.Context(), "idle", Turn{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := raw.Exists(t.Context(), Key("idle")).Result()
		if err == nil && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("idle client's log still in Redis (%d, %v)", n, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
