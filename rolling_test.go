package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// runAsProgram, set in a child's environment, makes the test binary run the
// facade program itself (main), configured by the rest of the environment.
const runAsProgram = "FACADE_TEST_RUN_AS_PROGRAM"

func TestMain(m *testing.M) {
	if os.Getenv(runAsProgram) == "1" {
		os.Args = os.Args[:1]
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// process is the facade program running in a child process.
type process struct {
	cmd  *exec.Cmd
	done chan error
}

// startProcess runs the program with env added to this environment and
// waits for its listening line.
func startProcess(t *testing.T, env ...string) *process {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), append([]string{runAsProgram + "=1"}, env...)...)
	cmd.Stderr = io.Discard // its JSON log
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, done: make(chan error, 1)}
	listening := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		said := false
		for sc.Scan() {
			if !said && strings.Contains(sc.Text(), "listening on") {
				said = true
				listening <- true
			}
		}
		if !said {
			listening <- false
		}
		p.done <- cmd.Wait()
	}()
	select {
	case ok := <-listening:
		if !ok {
			t.Fatalf("the program exited before listening: %v", <-p.done)
		}
	case <-time.After(60 * time.Second): // hang guard
		_ = cmd.Process.Kill()
		t.Fatal("the program did not listen within 60 s")
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	return p
}

// terminate sends SIGTERM and waits for the program to exit, returning how
// long it took and its exit error.
func (p *process) terminate(t *testing.T) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		return time.Since(start), err
	case <-time.After(60 * time.Second): // hang guard
		t.Fatal("the program did not exit within 60 s of SIGTERM")
		return 0, nil
	}
}

// backend is one replica as the load balancer sees it.
type backend struct {
	url      *url.URL
	ready    atomic.Bool
	drains   atomic.Int64 // probes answered 503 {"status": "draining"}
	served   atomic.Int64 // requests it answered through the balancer
	closings atomic.Int64 // of them, answered with "Connection: close"
}

// balancer is a round-robin load balancer that, as a Kubernetes Service
// does with its endpoints, sends requests only to the backends whose
// readiness probe (GET /readyz, every 20 ms) last answered 200, and retries
// nothing: a backend that refuses a connection or drops a request fails
// that request (502).
type balancer struct {
	backends []*backend
	next     atomic.Uint64
	failed   atomic.Int64 // 502s: no backend ready or a backend's error
	proxy    *httputil.ReverseProxy
}

func newBalancer(t *testing.T, urls ...string) *balancer {
	b := &balancer{}
	for _, u := range urls {
		pu, _ := url.Parse(u)
		b.backends = append(b.backends, &backend{url: pu})
	}
	b.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(b.pick().url)
		},
		ModifyResponse: func(resp *http.Response) error {
			for _, be := range b.backends {
				if be.url.Host == resp.Request.URL.Host {
					be.served.Add(1)
					if resp.Close || strings.EqualFold(resp.Header.Get("Connection"), "close") {
						be.closings.Add(1)
					}
				}
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			b.failed.Add(1)
			t.Logf("balancer: %s: %v", r.URL.Host, err)
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, be := range b.backends {
		wg.Go(func() { be.probe(ctx) })
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return b
}

// pick returns the next ready backend (the first one when none is).
func (b *balancer) pick() *backend {
	n := uint64(len(b.backends))
	start := b.next.Add(1)
	for i := range n {
		if be := b.backends[(start+i)%n]; be.ready.Load() {
			return be
		}
	}
	return b.backends[0]
}

func (be *backend) probe(ctx context.Context) {
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
		resp, err := hc.Get(be.url.String() + "/readyz")
		if err != nil {
			be.ready.Store(false)
			continue
		}
		var body struct{ Status string }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		be.ready.Store(resp.StatusCode == http.StatusOK)
		if body.Status == "draining" {
			be.drains.Add(1)
		}
	}
}

// freeAddr returns a loopback address with a port free now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestRollingRestartUnderLoadFailsNoRequest runs two facade processes (the
// program, as deployed: SHUTDOWN_DELAY as in deploy/k8s, one secret, upstream
// mode) behind a round-robin balancer that routes by readiness and retries
// nothing, puts them under continuous load (cached and uncached queries,
// a dashboard, four upstream clients), and restarts each in turn with
// SIGTERM, as a rolling update does. No request may fail; each replica must
// have been seen draining and must serve again after its restart.
func TestRollingRestartUnderLoadFailsNoRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	up, err := stack.StartUpstream(t.Context(), stack.UpstreamConfig{DemoScale: 1, RateLimit: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	addrs := []string{freeAddr(t), freeAddr(t)}
	env := func(addr string) []string {
		return []string{"ADDR=" + addr, "UPSTREAM_URL=" + up.URL, "FACADE_SECRET=" + hex.EncodeToString(secret),
			"REPLICAS=2", "SHUTDOWN_DELAY=2s", "PRODUCTION=true", "REDIS_URL=", "METRICS_ADDR=", "LOG_LEVEL=warn"}
	}
	procs := make([]*process, len(addrs))
	for i, a := range addrs {
		procs[i] = startProcess(t, env(a)...)
	}
	lb := newBalancer(t, "http://"+addrs[0], "http://"+addrs[1])
	front := testServer(t, lb.proxy)
	testenv.WaitFor(t, "both replicas ready at the balancer", func() bool {
		return lb.backends[0].ready.Load() && lb.backends[1].ready.Load()
	})

	m := up.Manifest
	other := m.OtherNetworks[0]
	type worker struct {
		auth, network string
		query         func(n int) gqlclient.Request
	}
	resource := func(ids []string) func(int) gqlclient.Request {
		return func(n int) gqlclient.Request {
			return gqlclient.Request{Query: `query($id: ID!) { resource(id: $id) { id title capacity } }`,
				Variables: map[string]any{"id": ids[n%5]}}
		}
	}
	workers := []worker{
		{"Bearer " + m.ReadonlyBearerToken, m.NetworkID, resource(m.IDs["resource"])},
		{m.BasicAuth, m.NetworkID, func(n int) gqlclient.Request { // uncached: orders
			return gqlclient.Request{Query: `query($l: ID!) { location(id: $l) { orders(first: 3) { nodes { number status } } } }`,
				Variables: map[string]any{"l": m.IDs["location"][n%len(m.IDs["location"])]}}
		}},
		{"Bearer " + m.BearerToken, m.NetworkID, func(int) gqlclient.Request {
			return gqlclient.Request{Query: queries.Dashboard, Variables: map[string]any{"locationId": m.IDs["location"][0]}}
		}},
		{"Bearer " + other.BearerToken, other.NetworkID, resource(other.IDs["resource"])},
	}
	// Keep-alive connections to the balancer, as a browser or an app has.
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	stop := make(chan struct{})
	var served, failed atomic.Int64
	var wg sync.WaitGroup
	for _, w := range workers {
		c := &gqlclient.Client{URL: front + "/graphql", HTTP: hc, Header: gqlclient.Credentials(w.auth, w.network)}
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				r, err := c.Post(context.Background(), w.query(n), nil)
				if err != nil || r.Status != http.StatusOK || len(r.Errors) > 0 || string(r.Data) == "null" {
					failed.Add(1)
					if r != nil {
						err = fmt.Errorf("%v: %d %.300s", err, r.Status, r.Raw)
					}
					t.Errorf("request through the balancer: %v", err)
					continue
				}
				served.Add(1)
			}
		})
	}
	waitServed := func(what string, be *backend, n int64) {
		t.Helper()
		target := be.served.Load() + n
		testenv.WaitFor(t, what, func() bool { return be.served.Load() >= target })
	}
	waitServed("replica 1 to serve under load", lb.backends[0], 10)
	waitServed("replica 2 to serve under load", lb.backends[1], 10)

	for i, be := range lb.backends {
		took, err := procs[i].terminate(t)
		if err != nil {
			t.Errorf("replica %d exited with %v after SIGTERM", i+1, err)
		}
		t.Logf("replica %d: SIGTERM to exit %v (SHUTDOWN_DELAY 2s, then in-flight requests); %d probes saw it draining, %d responses closed their connection",
			i+1, took.Round(time.Millisecond), be.drains.Load(), be.closings.Load())
		if be.drains.Load() == 0 {
			t.Errorf("replica %d: no readiness probe saw it draining", i+1)
		}
		procs[i] = startProcess(t, env(addrs[i])...)
		testenv.WaitFor(t, fmt.Sprintf("replica %d ready again", i+1), be.ready.Load)
		waitServed(fmt.Sprintf("replica %d to serve again", i+1), be, 10)
	}
	close(stop)
	wg.Wait()
	t.Logf("%d requests served through the rolling restart, %d failed; upstream: most requests of a client in one second %v",
		served.Load(), failed.Load(), up.Server.Hooks().MaxPerSecond())
	if failed.Load() != 0 || lb.failed.Load() != 0 {
		t.Fatalf("%d of %d requests failed (%d at the balancer)", failed.Load(), served.Load()+failed.Load(), lb.failed.Load())
	}
}

// testServer serves h on a loopback port for the test's duration.
func testServer(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + ln.Addr().String()
}
