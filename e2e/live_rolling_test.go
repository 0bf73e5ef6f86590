package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"

	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/redistest"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// TestLiveClientsReconnectThroughARollingRestart: two replicas sharing
// Redis, behind a balancer that routes by readiness as a Kubernetes
// Service does, each restarted in turn as the program does on SIGTERM
// (Drain, then Shutdown once the balancer has seen it draining, then a new
// replica on its address). The npm graphql-ws and graphql-sse clients,
// subscribed through the balancer with their default retry policies, are
// each cut at least once (the WebSocket with 1012 "service restart", the
// SSE stream without `complete`), never see an error or a completion, and
// after each restart receive the next change, from whichever replica they
// reconnected to.
func TestLiveClientsReconnectThroughARollingRestart(t *testing.T) {
	node := requireNode(t)
	t.Setenv("NODE_OPTIONS", "--experimental-websocket") // Node 20: WebSocket behind a flag
	redis := redistest.Start(t)
	up, err := stack.StartUpstream(t.Context(), stack.UpstreamConfig{DemoScale: 1, TestEndpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	m := up.Manifest
	loc := m.IDs["location"][0]

	replicas := []*replica{{addr: freeLoopback(t)}, {addr: freeLoopback(t)}}
	start := func(r *replica) {
		t.Helper()
		cfg := stack.DefaultConfig()
		cfg.Upstream, cfg.RedisURL, cfg.Secret, cfg.MetricsAddr, cfg.Replicas = up.URL, redis.URL, secret, "", 2
		cfg.Live.Interval, cfg.Live.AllowFastPolls = 100*time.Millisecond, true
		st, err := stack.Start(context.Background(), cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", r.addr)
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = st.Serve(ln) }()
		r.st.Store(st)
	}
	for _, r := range replicas {
		start(r)
	}
	t.Cleanup(func() {
		for _, r := range replicas {
			_ = r.st.Load().Close()
		}
	})
	lb := newReadyBalancer(t, replicas)

	// The clients, and what they report.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "live_rolling.mjs", lb.URL+"/graphql", "Bearer "+m.BearerToken, m.NetworkID, loc)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []clientReport
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var r clientReport
			if json.Unmarshal(sc.Bytes(), &r) == nil {
				mu.Lock()
				seen = append(seen, r)
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
		if t.Failed() {
			mu.Lock()
			t.Logf("the clients reported: %+v\nstderr: %s", seen, stderr.String())
			mu.Unlock()
		}
	})
	reports := func() []clientReport {
		mu.Lock()
		defer mu.Unlock()
		return append([]clientReport(nil), seen...)
	}
	subscriptions := func() int {
		n := 0
		for _, r := range replicas {
			n += r.st.Load().Live.Stats().Subscriptions
		}
		return n
	}

	// Each client receives a change made from now on: new orders until
	// both have one of them.
	nextChange := func(when string) {
		t.Helper()
		from := len(reports())
		var made []string
		testenv.WaitFor(t, "both clients receiving a change "+when, func() bool {
			got := map[string]bool{}
			for _, r := range reports()[from:] {
				for _, id := range made {
					if r.Kind == "event" && r.Event == "CREATED" && r.ID == id {
						got[r.Client] = true
					}
				}
			}
			if got["ws"] && got["sse"] {
				return true
			}
			if len(made) == 0 || time.Since(lb.lastChange) > 200*time.Millisecond {
				made = append(made, copyOrder(t, up.URL, firstOrderID(t, up.URL, m.BearerToken, m.NetworkID, loc)))
				lb.lastChange = time.Now()
			}
			return false
		})
	}
	testenv.WaitFor(t, "two subscriptions", func() bool { return subscriptions() == 2 })
	nextChange("before the restarts")

	for i, r := range replicas {
		old := r.st.Load()
		held := old.Live.Stats().Subscriptions
		old.Drain() // SIGTERM: /readyz says draining
		testenv.WaitFor(t, "the balancer seeing the replica draining", func() bool { return !lb.ready(i) })
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := old.Shutdown(sctx); err != nil && err != http.ErrServerClosed {
			t.Errorf("replica %d shutdown: %v", i, err)
		}
		scancel()
		start(r)
		testenv.WaitFor(t, "the restarted replica ready", func() bool { return lb.ready(i) })
		testenv.WaitFor(t, "two subscriptions again", func() bool { return subscriptions() == 2 })
		t.Logf("replica %d restarted with %d of the subscriptions", i, held)
		nextChange(fmt.Sprintf("after replica %d restarted", i))
	}

	var wsClosed, sseReconnected int
	for _, r := range reports() {
		switch {
		case r.Kind == "error" || r.Kind == "complete":
			t.Errorf("%s: %s %s, want the subscription to go on", r.Client, r.Kind, r.Error)
		case r.Kind == "event" && r.Event != "CREATED":
			t.Errorf("%s: event %+v", r.Client, r)
		case r.Client == "ws" && r.Kind == "closed":
			if r.Code != 1012 || r.Reason != "service restart: connect again" {
				t.Errorf("ws closed %d %q, want 1012", r.Code, r.Reason)
			}
			wsClosed++
		case r.Client == "sse" && r.Kind == "connecting" && r.Reconnecting:
			sseReconnected++
		}
	}
	if wsClosed == 0 || sseReconnected == 0 {
		t.Errorf("the WebSocket was closed %d times, the SSE stream reconnected %d times: each client's replica restarted at least once", wsClosed, sseReconnected)
	}
}

// clientReport is one line of live_rolling.mjs.
type clientReport struct {
	Client, Kind, Event, ID, Reason, Error string
	Code                                   int
	Reconnecting                           bool
}

// replica is one facade replica on a fixed address; st is replaced when
// it restarts.
type replica struct {
	addr string
	st   atomic.Pointer[stack.Stack]
}

// readyBalancer routes each request (WebSocket upgrades included) to the
// next replica whose /readyz last answered 200, probed every 20 ms, as a
// Service routes to the ready endpoints.
type readyBalancer struct {
	URL        string
	readiness  []atomic.Bool
	next       atomic.Uint64
	lastChange time.Time // nextChange's pacing
}

func newReadyBalancer(t *testing.T, replicas []*replica) *readyBalancer {
	b := &readyBalancer{readiness: make([]atomic.Bool, len(replicas))}
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		n := uint64(len(replicas))
		start := b.next.Add(1)
		for i := range n {
			if j := (start + i) % n; b.readiness[j].Load() {
				pr.SetURL(&url.URL{Scheme: "http", Host: replicas[j].addr})
				return
			}
		}
		pr.SetURL(&url.URL{Scheme: "http", Host: replicas[start%n].addr})
	}, ErrorLog: log.New(io.Discard, "", 0)} // a cut stream is the test's point
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: proxy}
	go func() { _ = srv.Serve(ln) }()
	b.URL = "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i, r := range replicas {
		wg.Go(func() {
			hc := &http.Client{Timeout: 2 * time.Second}
			for ctx.Err() == nil {
				resp, err := hc.Get("http://" + r.addr + "/readyz")
				ok := err == nil && resp.StatusCode == http.StatusOK
				if err == nil {
					resp.Body.Close()
				}
				b.readiness[i].Store(ok)
				select {
				case <-ctx.Done():
				case <-time.After(20 * time.Millisecond):
				}
			}
		})
	}
	t.Cleanup(func() { cancel(); wg.Wait(); srv.Close() })
	testenv.WaitFor(t, "the replicas ready", func() bool {
		for i := range replicas {
			if !b.ready(i) {
				return false
			}
		}
		return true
	})
	return b
}

func (b *readyBalancer) ready(i int) bool { return b.readiness[i].Load() }

// freeLoopback returns a loopback address with a port free now.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// firstOrderID returns the id of the newest order of location loc.
func firstOrderID(t *testing.T, upstream, token, network, loc string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, upstream+"/shop/orders/v1?limit=1&locationRef="+loc, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("service-network-id", network)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct{ Orders []struct{ ID string } }
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || len(page.Orders) == 0 {
		t.Fatalf("orders of %s: %v", loc, err)
	}
	return page.Orders[0].ID
}

// copyOrder makes a new order like id on the local REST service (a test
// endpoint) and returns its id.
func copyOrder(t *testing.T, upstream, id string) string {
	t.Helper()
	resp, err := http.Post(upstream+"/_test/orders/"+id+"/copy", "application/json", bytes.NewReader([]byte(`{"status":"new"}`)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.ID == "" {
		t.Fatalf("copy of order %s: HTTP %d %v", id, resp.StatusCode, err)
	}
	return out.ID
}
