package stack_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/redistest"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// replica is one facade process of a replicated deployment, as the program
// starts it, served on loopback.
type replica struct {
	st   *stack.Stack
	base string
}

// replicas starts n facades sharing one Redis, one secret and one upstream
// that enforces the real API's 10 requests per second per client.
func replicas(t *testing.T, n int, redisURL string, up *stack.Upstream) []*replica {
	t.Helper()
	return startReplicas(t, n, redisURL, up, func(cfg *stack.Config) {
		cfg.Budget = budget.Config{RPS: budget.DefaultRPS, Burst: budget.DefaultBurst}
		// Redis answers in microseconds, but a loaded CI machine can stall
		// an operation past the 100 ms default and degrade the replica to
		// its own state; these tests are about sharing, not about that.
		cfg.RedisOpTimeout = 5 * time.Second
	}, func() *slog.Logger { return slog.New(slog.DiscardHandler) })
}

// startReplicas starts n facades as the program would, sharing redisURL,
// one secret and up; edit, when set, adjusts each one's configuration, and
// logger gives each its logger.
func startReplicas(t *testing.T, n int, redisURL string, up *stack.Upstream, edit func(*stack.Config), logger func() *slog.Logger) []*replica {
	t.Helper()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	var out []*replica
	for range n {
		cfg := stack.DefaultConfig()
		cfg.Upstream, cfg.RedisURL, cfg.Secret, cfg.Replicas = up.URL, redisURL, secret, n
		cfg.Playground, cfg.UpstreamTrace = false, "on"
		cfg.MetricsAddr = "127.0.0.1:0" // /readyz's details
		if edit != nil {
			edit(&cfg)
		}
		st, base := testenv.Serve(t, cfg, logger())
		out = append(out, &replica{st: st, base: base})
	}
	return out
}

// limitedUpstream is the local REST service enforcing 10 requests/s per client.
func limitedUpstream(t *testing.T) *stack.Upstream {
	t.Helper()
	up, err := stack.StartUpstream(t.Context(), stack.UpstreamConfig{DemoScale: 1, RateLimit: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })
	return up
}

func (r *replica) client(auth, network string) *gqlclient.Client {
	h := gqlclient.Credentials(auth, network)
	h.Set(graph.TraceHeader, "1")
	return &gqlclient.Client{URL: r.base + "/graphql", Header: h}
}

// upstreamReport returns extensions.upstream's count and cache hits.
func upstreamReport(t *testing.T, r *gqlclient.Response) (count, hits int) {
	t.Helper()
	var rep struct{ Count, CacheHits int }
	if err := json.Unmarshal(r.Extensions["upstream"], &rep); err != nil {
		t.Fatalf("extensions.upstream: %v", err)
	}
	return rep.Count, rep.CacheHits
}

func mustQuery(t *testing.T, c *gqlclient.Client, req gqlclient.Request) *gqlclient.Response {
	t.Helper()
	r, err := c.Post(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Errors) > 0 {
		t.Fatalf("%.40q: %+v", req.Query, r.Errors)
	}
	return r
}

// TestReplicasShareBudgetCacheAndPersistedQueries: two replicas with one
// Redis, under concurrent dashboard load through both, grant one client at
// most 10 requests per second with no failure; what one replica fetched answers
// the other without an upstream call; a persisted query registered on one
// runs on the other.
func TestReplicasShareBudgetCacheAndPersistedQueries(t *testing.T) {
	rs := redistest.Start(t)
	up := limitedUpstream(t)
	reps := replicas(t, 2, rs.URL, up)
	grants := watchGrants(reps)
	m := up.Manifest
	bearer := "Bearer " + m.BearerToken
	dash := gqlclient.Request{Query: queries.Dashboard, Variables: map[string]any{"locationId": m.IDs["location"][0]}}

	var wg sync.WaitGroup
	var failed atomic.Int64
	for _, r := range reps {
		for range 3 {
			wg.Go(func() {
				for range 2 {
					resp, err := r.client(bearer, m.NetworkID).Post(context.Background(), dash, nil)
					if err != nil || len(resp.Errors) > 0 {
						failed.Add(1)
						t.Errorf("dashboard: %v %+v", err, resp)
					}
				}
			})
		}
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d dashboards failed", failed.Load())
	}
	grants.check(t, up)

	// A resource fetched through replica 1 answers replica 2 from Redis.
	q := gqlclient.Request{Query: `query($id: ID!) { resource(id: $id) { id title capacity } }`, Variables: map[string]any{"id": m.IDs["resource"][5]}}
	up.Server.Hooks().Reset()
	if count, hits := upstreamReport(t, mustQuery(t, reps[0].client(bearer, m.NetworkID), q)); count != 1 || hits != 0 {
		t.Fatalf("replica 1: %d calls, %d cache hits", count, hits)
	}
	if count, hits := upstreamReport(t, mustQuery(t, reps[1].client(bearer, m.NetworkID), q)); count != 0 || hits != 1 {
		t.Fatalf("replica 2: %d calls, %d cache hits; want the entry replica 1 fetched", count, hits)
	}
	if n := up.Server.Hooks().Total(); n != 1 {
		t.Errorf("the upstream served %d calls, want 1", n)
	}

	// A persisted query registered on replica 1 runs on replica 2 by hash.
	text := `query Persisted { __typename }`
	sum := sha256.Sum256([]byte(text))
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
	mustQuery(t, reps[0].client(bearer, m.NetworkID), gqlclient.Request{Query: text, Extensions: ext})
	r := mustQuery(t, reps[1].client(bearer, m.NetworkID), gqlclient.Request{Extensions: ext})
	if !strings.Contains(string(r.Data), "Query") {
		t.Errorf("replica 2 by hash: %s", r.Raw)
	}
}

// TestReplicasNeverShareEntriesAcrossCredentials: the same query by two
// credentials of one network, and by another network, each makes its own
// upstream call whatever replica answers; and Redis holds no tenant data in
// clear text.
func TestReplicasNeverShareEntriesAcrossCredentials(t *testing.T) {
	rs := redistest.Start(t)
	up := limitedUpstream(t)
	reps := replicas(t, 2, rs.URL, up)
	m := up.Manifest
	other := m.OtherNetworks[0]
	callers := []struct {
		name, auth, network, resource string
	}{
		{"bearer", "Bearer " + m.BearerToken, m.NetworkID, m.IDs["resource"][0]},
		{"basic, same network", m.BasicAuth, m.NetworkID, m.IDs["resource"][0]},
		{"read-only bearer, same network", "Bearer " + m.ReadonlyBearerToken, m.NetworkID, m.IDs["resource"][0]},
		{"other network", "Bearer " + other.BearerToken, other.NetworkID, other.IDs["resource"][0]},
	}
	var titles []string
	for _, c := range callers {
		q := gqlclient.Request{Query: `query($id: ID!) { resource(id: $id) { id title capacity } }`, Variables: map[string]any{"id": c.resource}}
		before := up.Server.Hooks().Total()
		r := mustQuery(t, reps[0].client(c.auth, c.network), q)
		if got := up.Server.Hooks().Total() - before; got != 1 {
			t.Errorf("%s through replica 1: %d upstream calls, want its own 1", c.name, got)
		}
		// The same caller through replica 2: answered from its own entry.
		before = up.Server.Hooks().Total()
		mustQuery(t, reps[1].client(c.auth, c.network), q)
		if got := up.Server.Hooks().Total() - before; got != 0 {
			t.Errorf("%s through replica 2: %d upstream calls, want its entry", c.name, got)
		}
		var d struct{ Resource struct{ Title string } }
		_ = json.Unmarshal(r.Data, &d)
		titles = append(titles, d.Resource.Title)
	}

	// Scan every value Redis holds.
	rc := rs.Client()
	ctx := context.Background()
	keys, err := rc.Keys(ctx, "*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("redis keys: %v (%d)", err, len(keys))
	}
	secrets := append(titles, m.BearerToken, other.BearerToken, m.ReadonlyBearerToken, strings.TrimPrefix(m.BasicAuth, "Basic "),
		m.IDs["resource"][0], other.IDs["resource"][0], m.NetworkID, other.NetworkID)
	for _, k := range keys {
		v, err := rc.Get(ctx, k).Result()
		if err != nil {
			continue // not a string (none today)
		}
		for _, s := range secrets {
			if s != "" && (strings.Contains(v, s) || strings.Contains(k, s)) {
				t.Errorf("redis key %q or its value holds %q in clear text", k, s)
			}
		}
	}
}

// TestRedisKilledMidLoad: Redis dies while two replicas serve, and comes
// back: no request fails, /readyz on the metrics port says Redis is
// degraded while it is down, and the replicas use it again within seconds
// of its return.
func TestRedisKilledMidLoad(t *testing.T) {
	rs := redistest.StartOwn(t)
	up := limitedUpstream(t)
	reps := replicas(t, 2, rs.URL, up)
	m := up.Manifest
	bearer := "Bearer " + m.BearerToken

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var served, failed atomic.Int64
	for i, r := range reps {
		wg.Go(func() {
			c := r.client(bearer, m.NetworkID)
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				q := gqlclient.Request{Query: `query($id: ID!) { resource(id: $id) { id title capacity } }`,
					Variables: map[string]any{"id": m.IDs["resource"][(i+n)%len(m.IDs["resource"])]}}
				resp, err := c.Post(context.Background(), q, nil)
				if err != nil || len(resp.Errors) > 0 {
					failed.Add(1)
					t.Errorf("request during the outage: %v %+v", err, resp)
					continue
				}
				served.Add(1)
			}
		})
	}
	waitServed := func(what string, n int64) {
		t.Helper()
		target := served.Load() + n
		testenv.WaitFor(t, what, func() bool { return served.Load() >= target })
	}
	waitServed("requests before the outage", 10)
	rs.Stop()
	testenv.WaitFor(t, "a replica to report Redis degraded in /readyz", func() bool { return readyRedis(t, reps[0]) == "degraded" })
	waitServed("requests during the outage", 10)
	rs.Restart()
	back := time.Now()
	testenv.WaitFor(t, "both replicas to use Redis again", func() bool {
		return readyRedis(t, reps[0]) == "healthy" && readyRedis(t, reps[1]) == "healthy"
	})
	t.Logf("both replicas used Redis again %v after it restarted", time.Since(back).Round(time.Millisecond))
	waitServed("requests after the outage", 10)
	close(stop)
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d of %d requests failed", failed.Load(), served.Load()+failed.Load())
	}
	t.Logf("%d requests served, none failed", served.Load())
}

// readyRedis returns "healthy" or "degraded" from the details of r's
// /readyz on its metrics port.
func readyRedis(t *testing.T, r *replica) string {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(r.st.MetricsURL, "/metrics") + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var body struct {
		Status   string
		Redis    struct{ Healthy bool }
		Degraded []string
	}
	if err := json.Unmarshal(b, &body); err != nil || resp.StatusCode != 200 || body.Status != "ready" {
		t.Fatalf("/readyz %d %s", resp.StatusCode, b)
	}
	if !body.Redis.Healthy && fmt.Sprint(body.Degraded) == "[redis]" {
		return "degraded"
	}
	return "healthy"
}
