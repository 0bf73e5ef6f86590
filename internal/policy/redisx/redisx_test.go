package redisx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/workspacenet/facade/internal/testsupport/redistest"
)

// logBuffer is a slog destination safe for the prober's goroutine.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// count returns the lines holding every one of parts.
func (b *logBuffer) count(parts ...string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for line := range strings.SplitSeq(b.buf.String(), "\n") {
		all := line != ""
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// commandCounter counts the commands that reach the network, but the
// prober's PINGs.
type commandCounter struct{ n atomic.Int64 }

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "ping" {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// waitFor polls cond every 10ms for at most 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: still not %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func set(ctx context.Context, r redis.UniversalClient) error {
	return r.Set(ctx, "redisx:k", "v", time.Minute).Err()
}

func TestDegradesAndRecovers(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := redistest.StartOwn(t)
	var logs logBuffer
	c, err := Open(s.URL, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cmds := &commandCounter{}
	c.Redis().AddHook(cmds)

	if err := c.Do(t.Context(), set); err != nil {
		t.Fatal(err)
	}
	var got string
	err = c.Do(t.Context(), func(ctx context.Context, r redis.UniversalClient) (err error) {
		got, err = r.Get(ctx, "redisx:k").Result()
		return err
	})
	if err != nil || got != "v" {
		t.Fatalf("GET: %q, %v", got, err)
	}
	// A missing key is an answer, not a failure.
	if err := c.Do(t.Context(), func(ctx context.Context, r redis.UniversalClient) error {
		return r.Get(ctx, "redisx:missing").Err()
	}); err != redis.Nil || !c.Healthy() {
		t.Fatalf("missing key: %v, healthy %v", err, c.Healthy())
	}

	for round := 1; round <= 2; round++ {
		s.Stop()
		// The ops racing at the failure degrade it once.
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if err := c.Do(t.Context(), set); !errors.Is(err, ErrUnavailable) {
					t.Errorf("op on a stopped server: %v", err)
				}
			})
		}
		wg.Wait()
		if c.Healthy() {
			t.Fatal("still healthy after failed operations")
		}
		st := c.Status()
		if st.Healthy || st.LastError == "" || st.Since.IsZero() {
			t.Errorf("status %+v", st)
		}
		// Degraded: refused at once, nothing sent.
		before := cmds.n.Load()
		called := 0
		for range 100 {
			err := c.Do(t.Context(), func(ctx context.Context, r redis.UniversalClient) error { called++; return set(ctx, r) })
			if err != ErrUnavailable {
				t.Fatalf("degraded op: %v", err)
			}
		}
		if n := cmds.n.Load() - before; n != 0 || called != 0 {
			t.Errorf("degraded ops sent %d commands and ran %d operations", n, called)
		}

		s.Restart()
		waitFor(t, "healthy after Restart", c.Healthy)
		if err := c.Do(t.Context(), set); err != nil {
			t.Fatalf("after recovery: %v", err)
		}
		if st := c.Status(); !st.Healthy || st.LastError != "" {
			t.Errorf("status after recovery %+v", st)
		}
		if w, i := logs.count("level=WARN", "degraded"), logs.count("level=INFO", "available again"); w != round || i != round {
			t.Fatalf("round %d: %d WARN and %d INFO lines, want %d each:\n%s", round, w, i, round, logs.String())
		}
	}
	if strings.Count(logs.String(), "\n") != 4 {
		t.Errorf("other lines logged:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), s.URL[len("redis://"):]) {
		t.Errorf("the log does not name the server:\n%s", logs.String())
	}
}

func TestCallerCancellationIsNotAFailure(t *testing.T) {
	s := redistest.Start(t)
	c, err := Open(s.URL, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Do(ctx, set); !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
		t.Errorf("err %v", err)
	}
	if !c.Healthy() {
		t.Error("a cancelled caller degraded Redis")
	}
}

// TestKeyErrorsAreNotFailures: a command refused for what its key holds (a
// hash read as a string, a string that is not a number, a script failing on
// such a value) fails that command only: Redis stays healthy. A command
// Redis does not know still degrades it.
func TestKeyErrorsAreNotFailures(t *testing.T) {
	s := redistest.Start(t)
	c, err := Open(s.URL, Options{Logger: slog.New(slog.DiscardHandler), OpTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rdb := s.Client()
	if err := rdb.HSet(t.Context(), "wnf:test:hash", "f", "v").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(t.Context(), "wnf:test:word", "garbage", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for name, op := range map[string]func(context.Context, redis.UniversalClient) error{
		"GET of a hash":  func(ctx context.Context, r redis.UniversalClient) error { return r.Get(ctx, "wnf:test:hash").Err() },
		"INCR of a word": func(ctx context.Context, r redis.UniversalClient) error { return r.Incr(ctx, "wnf:test:word").Err() },
		"script on hash": func(ctx context.Context, r redis.UniversalClient) error {
			return r.Eval(ctx, `return redis.call("GET", KEYS[1])`, []string{"wnf:test:hash"}).Err()
		},
		"script on words": func(ctx context.Context, r redis.UniversalClient) error {
			return r.Eval(ctx, `return math.max(tonumber(redis.call("GET", KEYS[1])), 1)`, []string{"wnf:test:word"}).Err()
		},
	} {
		err := c.Do(t.Context(), op)
		if err == nil || errors.Is(err, ErrUnavailable) || !IsKeyError(err) {
			t.Errorf("%s: err %v, want the key error as is", name, err)
		}
		if !c.Healthy() {
			t.Fatalf("%s degraded Redis", name)
		}
	}
	err = c.Do(t.Context(), func(ctx context.Context, r redis.UniversalClient) error { return r.Do(ctx, "NOSUCHCOMMAND").Err() })
	if !errors.Is(err, ErrUnavailable) || c.Healthy() || IsKeyError(err) {
		t.Errorf("unknown command: err %v, healthy %v; want Redis degraded", err, c.Healthy())
	}
}

func TestHungRedisTimesOut(t *testing.T) {
	s := redistest.StartOwn(t)
	c, err := Open(s.URL, Options{Logger: slog.New(slog.DiscardHandler), OpTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// CLIENT PAUSE holds every client's commands: Redis hangs for 3s.
	raw := redis.NewClient(&redis.Options{Addr: strings.TrimSuffix(strings.TrimPrefix(s.URL, "redis://"), "/0"), ReadTimeout: 30 * time.Second})
	defer raw.Close()
	if err := raw.Do(t.Context(), "CLIENT", "PAUSE", 3000, "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	pauseOver := make(chan struct{})
	go func() { raw.Ping(context.Background()); close(pauseOver) }()

	// One slow answer is not an outage: TimeoutsToDegrade in a row are.
	for i := 1; i <= TimeoutsToDegrade; i++ {
		err = c.Do(t.Context(), set)
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("op on a hung server: %v", err)
		}
		if i < TimeoutsToDegrade && !c.Healthy() {
			t.Fatalf("degraded after %d timed-out ops, want %d", i, TimeoutsToDegrade)
		}
	}
	select {
	case <-pauseOver:
		t.Error("the ops waited for the hung server to answer")
	default:
	}
	if c.Healthy() {
		t.Errorf("%d timed-out ops did not degrade Redis", TimeoutsToDegrade)
	}
	<-pauseOver
	waitFor(t, "healthy once the pause is over", c.Healthy)
}

func TestOpenWithRedisDownIsDegraded(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := redistest.StartOwn(t)
	s.Stop()
	var logs logBuffer
	c, err := Open("redis://:s3cretpw@"+strings.TrimPrefix(s.URL, "redis://"), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("an unreachable Redis failed Open: %v", err)
	}
	if c.Healthy() || logs.count("level=WARN") != 1 {
		t.Errorf("healthy %v, log:\n%s", c.Healthy(), logs.String())
	}
	if strings.Contains(logs.String(), "s3cretpw") || strings.Contains(c.String(), "s3cretpw") || strings.Contains(c.Status().LastError, "s3cretpw") {
		t.Errorf("the password leaked: %s / %s", logs.String(), c.String())
	}
	if err := c.Do(t.Context(), set); err != ErrUnavailable {
		t.Errorf("err %v", err)
	}
	// Close stops the prober (goleak checks) and later ops are refused.
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	if err := c.Do(t.Context(), set); err != ErrUnavailable {
		t.Errorf("after Close: %v", err)
	}
}

func TestParseURL(t *testing.T) {
	type want struct {
		addrs    []string
		db       int
		master   string
		cluster  bool
		user     string
		password string
		sentinel string // SentinelPassword
		tls      bool
		desc     string
	}
	for _, tc := range []struct {
		url  string
		want want
	}{
		{"redis://localhost:6380/2", want{addrs: []string{"localhost:6380"}, db: 2, desc: "redis://localhost:6380/2"}},
		{"redis://localhost", want{addrs: []string{"localhost:6379"}, desc: "redis://localhost:6379/0"}},
		{"redis://u:p%40ss@10.0.0.1:6379/0?client_name=facade", want{addrs: []string{"10.0.0.1:6379"}, user: "u", password: "p@ss", desc: "redis://10.0.0.1:6379/0"}},
		{"rediss://:pw@cache.example:6380", want{addrs: []string{"cache.example:6380"}, password: "pw", tls: true, desc: "rediss://cache.example:6380/0"}},
		{"redis://[::1]:6379/1", want{addrs: []string{"[::1]:6379"}, db: 1, desc: "redis://[::1]:6379/1"}},
		{"redis://h1:7000,h2:7001,h3", want{addrs: []string{"h1:7000", "h2:7001", "h3:6379"}, cluster: true, desc: "redis-cluster://h1:7000,h2:7001,h3:6379"}},
		{"rediss://:pw@h1:7000,[::1]:7001/", want{addrs: []string{"h1:7000", "[::1]:7001"}, cluster: true, password: "pw", tls: true, desc: "rediss-cluster://h1:7000,[::1]:7001"}},
		{"redis://h1:7000?addr=h2:7001", want{addrs: []string{"h1:7000", "h2:7001"}, cluster: true, desc: "redis-cluster://h1:7000,h2:7001"}},
		{"redis-cluster://cfg.example:6379", want{addrs: []string{"cfg.example:6379"}, cluster: true, desc: "redis-cluster://cfg.example:6379"}},
		{"redis-sentinel://s1:26379,s2/mymaster?db=3", want{addrs: []string{"s1:26379", "s2:26379"}, db: 3, master: "mymaster", desc: "redis-sentinel://s1:26379,s2:26379/mymaster/3"}},
		{"rediss-sentinel://u:mpw@s1/m?sentinel_password=spw", want{addrs: []string{"s1:26379"}, master: "m", user: "u", password: "mpw", sentinel: "spw", tls: true, desc: "rediss-sentinel://s1:26379/m/0"}},
	} {
		t.Run(tc.url, func(t *testing.T) {
			uo, desc, err := parseURL(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			got := want{addrs: uo.Addrs, db: uo.DB, master: uo.MasterName, cluster: uo.IsClusterMode, user: uo.Username,
				password: uo.Password, sentinel: uo.SentinelPassword, tls: uo.TLSConfig != nil, desc: desc}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	for _, bad := range []string{
		"",
		"localhost:6379",
		"http://localhost:6379",
		"redis://",
		"redis://:pw@host:notaport/0",
		"redis://host/notadb",
		"redis://host?unknown_option=1",
		"redis://h1,,h2",
		"redis://h1:7000,h2:7001/3",
		"redis-sentinel://s1:26379",
		"redis-sentinel://s1:26379/a/b",
		"redis-replica://host",
		"redis://:pw@h1:1%zz/0",
		"redis://:pw@host/%zz",
	} {
		if _, _, err := parseURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		} else if strings.Contains(err.Error(), "pw@") {
			t.Errorf("%q: the error quotes the password: %v", bad, err)
		}
	}
}

// TestOpenBuildsEachKind checks the client each URL kind builds, against
// addresses that refuse connections.
func TestOpenBuildsEachKind(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	for url, kind := range map[string]string{
		"redis://" + addr:                        "*redis.Client",
		"redis-cluster://" + addr:                "*redis.ClusterClient",
		"redis-sentinel://" + addr + "/mymaster": "*redis.Client",
	} {
		c, err := Open(url, Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		if got := fmt.Sprintf("%T", c.Redis()); got != kind || c.Healthy() {
			t.Errorf("%s: %s, healthy %v; want %s, degraded", url, got, c.Healthy(), kind)
		}
		c.Close()
	}
}

// TestClusterMasterDownDegradesOnlyItsKeys: in a real Cluster (3 masters
// and their replicas), a master killed degrades the keys of its slots
// only: keys of the other masters are served throughout, and once its
// replica is promoted its keys are served again without waiting for
// go-redis's periodic reload of the slots.
func TestClusterMasterDownDegradesOnlyItsKeys(t *testing.T) {
	cl := redistest.StartCluster(t)
	var logs logBuffer
	c, err := Open(cl.URL, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), OpTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A key on each master.
	keyOf := map[string]string{}
	for i := 0; len(keyOf) < 3 && i < 1000; i++ {
		k := fmt.Sprintf("wnf:test:{%d}", i)
		if addr := c.nodeOf(t.Context(), k); addr != anyNode && keyOf[addr] == "" {
			keyOf[addr] = k
		}
	}
	victim := cl.Masters[0].Addr()
	dead, alive := keyOf[victim], ""
	for addr, k := range keyOf {
		if addr != victim {
			alive = k
		}
	}
	if dead == "" || alive == "" {
		t.Fatalf("keys per master: %v", keyOf)
	}
	setKey := func(k string) error {
		return c.DoKey(t.Context(), k, func(ctx context.Context, r redis.UniversalClient) error {
			return r.Set(ctx, k, "v", time.Minute).Err()
		})
	}
	for _, k := range []string{dead, alive} {
		if err := setKey(k); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}

	cl.Masters[0].Stop()
	waitFor(t, "the dead master's keys degraded", func() bool { _ = setKey(dead); return !c.HealthyKey(dead) })
	if err := setKey(alive); err != nil || !c.HealthyKey(alive) {
		t.Errorf("a key of a live master while another is down: %v, healthy %v", err, c.HealthyKey(alive))
	}
	if st := c.Status(); st.Healthy || len(st.Degraded) != 1 || st.Degraded[0] != victim {
		t.Errorf("status %+v, want the dead master alone degraded", st)
	}
	cl.WaitHealthy(t)
	healthy := time.Now()
	waitFor(t, "the dead master's keys served by its promoted replica", func() bool { return setKey(dead) == nil })
	t.Logf("the killed master's keys served again %v after the cluster was healthy", time.Since(healthy).Round(time.Millisecond))
	if err := setKey(alive); err != nil {
		t.Error(err)
	}
}
