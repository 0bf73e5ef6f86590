package stack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/redistest"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// TestWrongTypedRedisKeyAffectsOnlyItself: one credential's rate budget
// key holds a hash and its cache entry a list (someone wrote them by hand,
// or another program shares the database). That credential's next query
// is still answered (its budget paced in the process, its cache entry a
// miss, then rewritten), Redis is not marked unavailable, and another
// credential's query right after still paces through Redis.
func TestWrongTypedRedisKeyAffectsOnlyItself(t *testing.T) {
	rs := redistest.Start(t)
	var logs testenv.LogBuffer
	st, base := start(t, &logs, func(c *stack.Config) {
		// Long enough that a loaded machine never degrades Redis by timeout.
		c.RedisOpTimeout = 5 * time.Second
	}, "-metrics-addr=127.0.0.1:0", "-redis-url="+rs.URL, "-cache-ttl=resources=1h", "-demo-rate-limit=0")
	rdb := rs.Client()
	ctx := context.Background()
	m := st.Embedded.Manifest
	query := func(auth string) {
		t.Helper()
		c := &gqlclient.Client{URL: base + "/graphql", Header: gqlclient.Credentials(auth, m.NetworkID)}
		r, err := c.Post(ctx, gqlclient.Request{Query: `query($id: ID!) { resource(id: $id) { id title } }`,
			Variables: map[string]any{"id": m.IDs["resource"][0]}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Errors) > 0 || !strings.Contains(string(r.Data), m.IDs["resource"][0]) {
			t.Fatalf("query with %.12s...: %s", auth, r.Raw)
		}
	}
	keys := func(pattern string) []string {
		t.Helper()
		ks, err := rdb.Keys(ctx, pattern).Result()
		if err != nil {
			t.Fatal(err)
		}
		return ks
	}

	a, b := "Bearer "+m.BearerToken, "Bearer "+m.ReadonlyBearerToken
	query(a)
	budgetKeys, entries := keys("wnf:budget:*"), keys("wnf:cache:e:*")
	if len(budgetKeys) != 1 || len(entries) != 1 {
		t.Fatalf("after one query: budget keys %v, cache entries %v; want one of each", budgetKeys, entries)
	}
	if err := rdb.Del(ctx, budgetKeys[0], entries[0]).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, budgetKeys[0], "planted", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.RPush(ctx, entries[0], "planted").Err(); err != nil {
		t.Fatal(err)
	}

	st.Embedded.Server.Hooks().Reset()
	query(a)
	if n := st.Embedded.Server.Hooks().Total(); n != 1 {
		t.Errorf("the query over the wrong-typed entry made %d upstream calls, want 1 (a miss)", n)
	}
	if strings.Contains(logs.String(), "redis unavailable") {
		t.Errorf("a wrong-typed key marked Redis unavailable:\n%s", logs.String())
	}
	_, body := readyz(t, strings.TrimSuffix(st.MetricsURL, "/metrics")+"/readyz")
	if r, _ := body["redis"].(map[string]any); r["healthy"] != true {
		t.Errorf("/readyz after the wrong-typed keys: %v, want Redis healthy", body)
	}
	query(b)
	if got := keys("wnf:budget:*"); len(got) != 2 {
		t.Errorf("budget keys after the other credential's query: %v, want its own beside the planted one (paced through Redis)", got)
	}
	if typ, _ := rdb.Type(ctx, entries[0]).Result(); typ != "string" {
		t.Errorf("the wrong-typed cache entry is a %s, want it rewritten by the fetch that missed it", typ)
	}
}
