package live

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/workspacenet/facade/internal/policy/redisx"
	"github.com/workspacenet/facade/internal/testsupport/redistest"
)

// logLines is a slog destination the tests read.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logLines) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

// replica is one replica's Hub on a Redis, its Redis client and its log.
type replica struct {
	hub  *Hub
	sh   *Shared
	rc   *redisx.Client
	logs *logLines
}

// replicaOn starts a replica's Hub on the Redis at url (one secret for all),
// polling every interval.
func replicaOn(t *testing.T, url string, interval time.Duration) *replica {
	t.Helper()
	logs := &logLines{}
	// A generous operation timeout: a loaded machine stalling Redis's
	// answers is not what these tests are about.
	rc, err := redisx.Open(url, redisx.Options{OpTimeout: 5 * time.Second, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	sh := NewShared(rc, []byte("a secret of the replicas, 32 b.."))
	h := New(Config{Interval: interval, AllowFastPolls: true, Shared: sh})
	t.Cleanup(func() { h.Close(); _ = rc.Close() })
	return &replica{hub: h, sh: sh, rc: rc, logs: logs}
}

// constant is a source whose polls always see the same item.
func constant(key string) Source {
	items := []Item{item("x", "new", 1)}
	return Source{Key: key, Route: "/constant", Decode: decodeThings, Fetch: func(context.Context) ([]Item, error) { return items, nil }}
}

// subscribeMany subscribes n sources keyed prefix0..prefix(n-1) on r.
func subscribeMany(t *testing.T, r *replica, prefix string, n int) {
	t.Helper()
	for i := range n {
		if _, err := r.hub.Subscribe(t.Context(), alice, constant(prefix+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
}

// confirmed counts the channels Redis confirmed on r's PubSub connection.
func (r *replica) confirmed() int {
	b := r.sh.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for name, c := range b.channels {
		// The sources' channels: not the identities' poke channels.
		if c.confirmed && !strings.HasPrefix(name, pokeChannelPrefix) {
			n++
		}
	}
	return n
}

// pokeConfirmed reports whether Redis confirmed an identity's poke channel
// on r's PubSub connection.
func (r *replica) pokeConfirmed() bool {
	b := r.sh.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	for name, c := range b.channels {
		if c.confirmed && strings.HasPrefix(name, pokeChannelPrefix) {
			return true
		}
	}
	return false
}

// redisClients returns, from CLIENT LIST, the connections named name: how
// many, and the channels each subscribes.
func redisClients(t *testing.T, rs *redistest.Server, name string) (conns int, subs []int) {
	t.Helper()
	list, err := rs.Client().ClientList(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(list), "\n") {
		fields := map[string]string{}
		for f := range strings.FieldsSeq(line) {
			k, v, _ := strings.Cut(f, "=")
			fields[k] = v
		}
		if fields["name"] != name {
			continue
		}
		conns++
		if n, _ := strconv.Atoi(fields["sub"]); n > 0 {
			subs = append(subs, n)
		}
	}
	return conns, subs
}

// TestOneRedisConnectionForEveryPoller: a replica with 10 pollers, then
// 1,000 (each its own source, so its own channel; one identity, so one
// poke channel), holds at most its pool (pool_size 4 in the URL) and one
// PubSub connection, which subscribes every channel: the replica's Redis connections do not grow with its pollers.
func TestOneRedisConnectionForEveryPoller(t *testing.T) {
	rs := redistest.Start(t)
	const pool = 4
	r := replicaOn(t, rs.URL+"?client_name=wnf-live-test&pool_size="+strconv.Itoa(pool), time.Second)
	g0 := runtime.NumGoroutine()
	for _, n := range []int{10, 1000} {
		subscribeMany(t, r, fmt.Sprintf("/constant?%d-", n), n-r.hub.Stats().Pollers)
		waitFor(t, fmt.Sprintf("%d channels subscribed", n), func() bool { return r.confirmed() == n })
		waitFor(t, fmt.Sprintf("%d pollers ready", n), func() bool { return r.hub.Stats().Ready == n })
		conns, subs := redisClients(t, rs, "wnf-live-test")
		t.Logf("%d pollers: %d Redis connections, channels per PubSub connection %v, %d goroutines more", n, conns, subs, runtime.NumGoroutine()-g0)
		// Their n sources' channels and their one identity's poke channel.
		if len(subs) != 1 || subs[0] != n+1 {
			t.Errorf("%d pollers: PubSub connections subscribing %v channels, want one connection with %d", n, subs, n+1)
		}
		if conns > pool+1 {
			t.Errorf("%d pollers: %d Redis connections, want at most the pool (%d) and one PubSub", n, conns, pool)
		}
	}
	if n := r.logs.count("redis unavailable"); n != 0 {
		t.Errorf("Redis degraded %d times", n)
	}
}

// TestRedisAtMaxclientsDoesNotFlap: two replicas share a source on a Redis
// with maxclients 64; the test takes every connection Redis has left, then
// each replica starts 500 more pollers and 32 Redis operations at a time
// (far more than the connections each holds, so both ask Redis for new
// ones, and Redis refuses them). Neither replica degrades, both stay
// healthy, and a change of the shared source still reaches both
// subscribers, the holder's poll through the PubSub connection.
func TestRedisAtMaxclientsDoesNotFlap(t *testing.T) {
	rs := redistest.StartWith(t, "--maxclients", "64")
	reps := []*replica{replicaOn(t, rs.URL, time.Second), replicaOn(t, rs.URL, time.Second)}
	src := newHeldSource(item("a", "new", 1))
	var subs []*Subscription
	for i, r := range reps {
		s, err := r.hub.Subscribe(t.Context(), alice, src.source(i))
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	for _, r := range reps {
		waitFor(t, "the shared source's channel subscribed", func() bool { return r.confirmed() == 1 })
	}
	waitFor(t, "a first poll", func() bool { return reps[0].hub.Stats().Polls["/things"]+reps[1].hub.Stats().Polls["/things"] > 0 })

	admin := rs.Client() // connected before the fill, used by one goroutine
	rejected := func() int {
		info, err := admin.Info(t.Context(), "stats").Result()
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "rejected_connections:"); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		t.Fatal("no rejected_connections in INFO stats")
		return 0
	}
	before := rejected()
	rs.Fill()
	before++ // Fill's last connection

	var wg sync.WaitGroup
	for i, r := range reps {
		wg.Go(func() { subscribeMany(t, r, fmt.Sprintf("/constant?%d-", i), 500) })
		for range 32 {
			wg.Go(func() {
				for range 20 {
					_ = r.rc.Do(context.Background(), func(ctx context.Context, rdb redis.UniversalClient) error {
						return rdb.Set(ctx, "wnf:test:busy", "1", time.Minute).Err()
					})
				}
			})
		}
	}
	wg.Wait()
	for _, r := range reps {
		waitFor(t, "501 channels subscribed", func() bool { return r.confirmed() == 501 })
		// Its own 500, and the shared source on the holder only.
		waitFor(t, "500 pollers ready", func() bool { return r.hub.Stats().Ready >= 500 })
	}
	src.set([]Item{item("b", "new", 2), item("a", "new", 1)}, nil)
	for i, s := range subs {
		if e, err := next(t, s); err != nil || e.Kind != Created || e.ID != "b" {
			t.Fatalf("replica %d: %+v %v, want CREATED b", i, e, err)
		}
	}
	if n := rejected(); n <= before {
		t.Fatalf("Redis refused no replica's connection (%d rejected): the test did not reach maxclients", n)
	} else {
		t.Logf("Redis refused %d connections of the replicas", n-before)
	}
	for i, r := range reps {
		if n := r.logs.count("redis unavailable"); n != 0 || !r.rc.Healthy() {
			t.Errorf("replica %d: degraded %d times, healthy now %v", i, n, r.rc.Healthy())
		}
	}
}

// TestListenerThatCannotHearPollsAlone: two replicas share a source, each
// as its own Redis user. The follower's user loses the right to its
// channels (an ACL change: Redis drops its PubSub connection, and refuses
// the SUBSCRIBE on the next): the follower does not hear the holder, so it
// polls alone, and its subscriber still gets the change; the holder stays
// healthy. The right given back, the follower hears the channel again
// (asked again after the refusal), and the next change reaches both.
func TestListenerThatCannotHearPollsAlone(t *testing.T) {
	rs := redistest.Start(t)
	admin := rs.Client()
	ctx := t.Context()
	var reps []*replica
	for i := range 2 {
		user := fmt.Sprintf("wnf-test-%d", i)
		if err := admin.Do(ctx, "ACL", "SETUSER", user, "on", ">pw", "~*", "&*", "+@all").Err(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = admin.Do(context.Background(), "ACL", "DELUSER", user).Err() })
		reps = append(reps, replicaOn(t, "redis://"+user+":pw@"+rs.Addr()+"/0", 50*time.Millisecond))
	}
	src := newHeldSource(item("a", "new", 1))
	var subs []*Subscription
	for i, r := range reps {
		s, err := r.hub.Subscribe(ctx, alice, src.source(i))
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	polls := func(i int) int64 { return reps[i].hub.Stats().Polls["/things"] }
	waitFor(t, "a first poll", func() bool { return polls(0)+polls(1) > 0 })
	follower := 1
	if polls(1) > 0 {
		follower = 0
	}
	if polls(follower) != 0 {
		t.Fatalf("both replicas polled: %d and %d", polls(0), polls(1))
	}

	if err := admin.Do(ctx, "ACL", "SETUSER", fmt.Sprintf("wnf-test-%d", follower), "resetchannels").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the follower's channel unconfirmed", func() bool { return reps[follower].confirmed() == 0 })
	waitFor(t, "the follower polling alone", func() bool { return polls(follower) > 0 })
	src.set([]Item{item("b", "new", 2), item("a", "new", 1)}, nil)
	for i, s := range subs {
		if e, err := next(t, s); err != nil || e.Kind != Created || e.ID != "b" {
			t.Fatalf("replica %d without its channel: %+v %v, want CREATED b", i, e, err)
		}
	}

	if err := admin.Do(ctx, "ACL", "SETUSER", fmt.Sprintf("wnf-test-%d", follower), "allchannels").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the follower's channel confirmed again", func() bool { return reps[follower].confirmed() == 1 })
	src.set([]Item{item("c", "new", 3), item("b", "new", 2), item("a", "new", 1)}, nil)
	for i, s := range subs {
		if e, err := next(t, s); err != nil || e.Kind != Created || e.ID != "c" {
			t.Fatalf("replica %d hearing again: %+v %v, want CREATED c", i, e, err)
		}
	}
	for i, r := range reps {
		if n := r.logs.count("redis unavailable"); n != 0 {
			t.Errorf("replica %d degraded %d times", i, n)
		}
	}
}
