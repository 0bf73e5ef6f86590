package redisx

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/workspacenet/facade/internal/testsupport/redistest"
)

// busyOps runs n goroutines of m SETs each through c at once: far more at a
// time than the connections c holds, so its pool asks for new ones.
func busyOps(t *testing.T, c *Client, n, m int) (failed int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for range m {
				if err := c.Do(context.Background(), set); err != nil {
					t.Logf("op: %v", err)
					mu.Lock()
					failed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return failed
}

// TestMaxClientsNeverDegrades: a Redis at its maxclients (every further
// connection accepted and closed with "max number of clients reached"),
// while the client holds one connection: 32 goroutines of operations at
// once all succeed, over the one connection, and the client stays healthy
// (no degraded line, one line saying Redis refuses new connections).
func TestMaxClientsNeverDegrades(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := redistest.StartWith(t, "--maxclients", "16")
	var logs logBuffer
	c, err := Open(s.URL, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Do(t.Context(), set); err != nil {
		t.Fatal(err)
	}
	s.Fill()

	if failed := busyOps(t, c, 32, 50); failed != 0 {
		t.Errorf("%d of 1600 operations failed", failed)
	}
	if !c.Healthy() {
		t.Errorf("degraded: %+v", c.Status())
	}
	if n := logs.count("redis unavailable"); n != 0 {
		t.Errorf("degraded %d times:\n%s", n, logs.String())
	}
	if n := logs.count("level=WARN", "maxclients"); n != 1 {
		t.Errorf("%d lines about maxclients, want 1 (the refusals happened, logged once):\n%s", n, logs.String())
	}
}

// TestOpenWithRedisFullDoesNotFlap: a client opened while Redis refuses
// every new connection is degraded (it holds none); once one connection
// is free it is healthy again, and stays healthy under operations many
// at a time that Redis would need more connections for: one transition
// each way, no flapping.
func TestOpenWithRedisFullDoesNotFlap(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := redistest.StartWith(t, "--maxclients", "16")
	held := s.Fill()
	var logs logBuffer
	c, err := Open(s.URL, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Healthy() {
		t.Fatal("healthy without any connection")
	}
	if err := c.Do(t.Context(), set); err != ErrUnavailable {
		t.Fatalf("degraded op: %v", err)
	}
	held[0].Close() // one place: the prober's PING takes it
	waitFor(t, "healthy once a connection is accepted", c.Healthy)

	if failed := busyOps(t, c, 32, 50); failed != 0 {
		t.Errorf("%d of 1600 operations failed", failed)
	}
	if !c.Healthy() {
		t.Errorf("degraded again: %+v", c.Status())
	}
	w, i := logs.count("level=WARN", "redis unavailable"), logs.count("level=INFO", "available again")
	if w != 1 || i != 1 {
		t.Errorf("%d degraded and %d recovered lines, want 1 each:\n%s", w, i, logs.String())
	}
}

// TestNewConnectionFailuresAreTold: what the dialer's connections report:
// a refusal at maxclients is one (nothing sent on it ran), a broken
// established connection is not.
func TestNewConnectionFailuresAreTold(t *testing.T) {
	s := redistest.StartWith(t, "--maxclients", "16")
	c, err := Open(s.URL, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s.Fill()
	// A client of its own, with the dialer, holding no connection.
	o := &redis.UniversalOptions{Addrs: []string{s.Addr()}, DialTimeout: time.Second}
	o.Dialer = c.dialer(o)
	r := redis.NewClient(o.Simple())
	defer r.Close()
	err = r.Ping(t.Context()).Err()
	if !isMaxClients(err) || !isTimeout(err) {
		t.Fatalf("PING on a full Redis: %v (%T), want a maxclients refusal", err, err)
	}
	if isMaxClients(redis.ErrClosed) || isMaxClients(net.ErrClosed) {
		t.Fatal("a closed connection taken for a refusal")
	}
}
