package stack_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/policy/apq"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/redistest"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// TestPersistedQueryFloodsLeaveRedisWithinItsBound floods a replica with
// APQ registrations of 64 KiB documents: anonymous ones, ones with made-up
// Bearer tokens, and then those of four clients the upstream accepts, each
// registering twice its -apq-redis-client-bytes, against -apq-redis-bytes
// of 3 MiB. Redis gets nothing from the first two; one client's
// registrations fill at most its own budget; all of them at most the global
// one (twice it if the test crosses a window's end), and Redis's
// used_memory grows by no more than that.
func TestPersistedQueryFloodsLeaveRedisWithinItsBound(t *testing.T) {
	rs := redistest.Start(t)
	up := limitedUpstream(t)
	m := up.Manifest
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	cfg := stack.DefaultConfig()
	cfg.Upstream, cfg.RedisURL, cfg.Secret = up.URL, rs.URL, secret
	cfg.Playground, cfg.MetricsAddr, cfg.RedisOpTimeout = false, "", 5*time.Second
	const total = 3 << 20
	cfg.APQRedisBytes = total
	_, base := testenv.Serve(t, cfg, slog.New(slog.DiscardHandler))
	rc := rs.Client()
	ctx := context.Background()
	usedMemory := func() int64 {
		info, err := rc.InfoMap(ctx, "memory").Result()
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseInt(info["Memory"]["used_memory"], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	stored := func() (n int, bytes int64) {
		keys, err := rc.Keys(ctx, apq.KeyPrefix+"*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			l, err := rc.StrLen(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			bytes += l + l/4 + apq.KeyOverhead
		}
		return len(keys), bytes
	}
	used0 := usedMemory()

	seq := 0
	register := func(auth, network string, n int) {
		t.Helper()
		c := &gqlclient.Client{URL: base + "/graphql", Header: gqlclient.Credentials(auth, network)}
		for range n {
			seq++
			q := fmt.Sprintf("query P%d { __typename }\n#", seq)
			q += strings.Repeat("x", 64<<10-len(q))
			sum := sha256.Sum256([]byte(q))
			ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
			if r, err := c.Post(ctx, gqlclient.Request{Query: q, Extensions: ext}, nil); err != nil || len(r.Errors) > 0 {
				t.Fatalf("registration: %v %s", err, r.Raw)
			}
		}
	}

	register("", "", 100)
	for i := range 10 {
		register("Bearer made-up-"+strconv.Itoa(i), m.NetworkID, 10)
	}
	if n, _ := stored(); n != 0 {
		t.Fatalf("anonymous and made-up credentials stored %d queries in Redis", n)
	}

	clients := []struct{ auth, network, resource string }{
		{"Bearer " + m.BearerToken, m.NetworkID, m.IDs["resource"][0]},
		{"Bearer " + m.ReadonlyBearerToken, m.NetworkID, m.IDs["resource"][0]},
		{m.BasicAuth, m.NetworkID, m.IDs["resource"][0]},
		{"Bearer " + m.OtherNetworks[0].BearerToken, m.OtherNetworks[0].NetworkID, m.OtherNetworks[0].IDs["resource"][0]},
	}
	perClient := 2 * apq.DefaultClientBytes / (64 << 10)
	for i, c := range clients {
		// A query the upstream answers: the credentials are proven.
		mustQuery(t, &gqlclient.Client{URL: base + "/graphql", Header: gqlclient.Credentials(c.auth, c.network)},
			gqlclient.Request{Query: `query($id: ID!) { resource(id: $id) { id } }`, Variables: map[string]any{"id": c.resource}})
		register(c.auth, c.network, perClient)
		n, b := stored()
		t.Logf("after client %d: %d queries in Redis, %d bytes counted", i+1, n, b)
		if i == 0 && (n == 0 || b > apq.DefaultClientBytes) {
			t.Errorf("one client stored %d queries, %d bytes counted: want some, at most -apq-redis-client-bytes (%d)", n, b, apq.DefaultClientBytes)
		}
	}
	n, b := stored()
	grown := usedMemory() - used0
	t.Logf("Redis: %d queries, %d bytes counted, used_memory +%d", n, b, grown)
	// A key registered in the last window may still live: twice
	// -apq-redis-bytes is the bound (used_memory also counts Redis's client
	// buffers).
	if b > 2*total || grown > 2*total {
		t.Errorf("APQ took %d bytes counted, used_memory +%d: over twice -apq-redis-bytes (%d)", b, grown, total)
	}
	if b <= apq.DefaultClientBytes {
		t.Errorf("%d bytes counted: the other clients stored nothing", b)
	}
	for _, k := range must(rc.Keys(ctx, apq.KeyPrefix+"*").Result()) {
		if ttl := must(rc.TTL(ctx, k).Result()); ttl > apq.TTL {
			t.Fatalf("%s lives %v", k, ttl)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
