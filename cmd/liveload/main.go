// Command liveload measures the memory of one facade replica driven to its
// live bounds, under the environment of the Kubernetes manifest
// (deploy/k8s/facade.yaml: GOMEMLIMIT, PRODUCTION, the LIVE_* bounds), and
// compares its peak RSS with the manifest's memory limit. It runs the
// facade program (built from this module, or -facade) as a child process
// against an upstream of its own that accepts any credentials and answers
// every order list with 100 orders, then, phase by phase, holding each:
//
//  1. open: LIVE_MAX_CONNECTIONS WebSockets but one (at the bound a new
//     upgrade is refused before it opens), acknowledged, spread over as few
//     credentials as LIVE_MAX_CONNECTIONS_PER_CREDENTIAL allows;
//  2. subscriptions: LIVE_MAX_SUBSCRIPTIONS over those connections, each of
//     another location's orders, so each has a poller of its own whose
//     baseline is a page of 100 orders;
//  3. opening: LIVE_MAX_CONNECTIONS more WebSockets that never send
//     connection_init (the pool of connections whose credentials are not
//     proven, from as many addresses as LIVE_MAX_INIT_PER_ADDRESS needs);
//  4. buffers: every order changing at every poll while no client reads:
//     each subscriber's queue holds LIVE_BUFFER orders and its socket is
//     full.
//
// It prints one JSON object: the figures of each phase (VmRSS and VmHWM of
// the child, in bytes), the cost of one item of each (the phase's growth of
// RSS divided by its count), the limit and whether the peak stayed under
// it. -scale divides every bound (the manifest's values, given to the
// child) to run the same thing smaller: graph's CI test runs it so.
//
//	go run ./cmd/liveload                    # the manifest's bounds
//	go run ./cmd/liveload -scale 5           # a fifth of each
//	go run ./cmd/liveload -set LIVE_MAX_SUBSCRIPTIONS=2000   # another value
//
// The child's -trusted-proxies names the loopback (so that the opening
// sockets come from many addresses), and its connection_init wait is an
// hour (so that they stay while measured); neither changes what a
// connection holds. Its pacing is the manifest's: the baselines fill at
// each credential's 10 polls a second.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver"
)

// Result is what liveload prints.
type Result struct {
	Manifest string            `json:"manifest"`
	Env      map[string]string `json:"env"`   // the child's, from the manifest (after -scale and -set)
	Limit    int64             `json:"limit"` // the container's memory limit, bytes
	Phases   []Phase           `json:"phases"`
	PeakRSS  int64             `json:"peakRSS"` // VmHWM at the end
	Fits     bool              `json:"fits"`    // PeakRSS < Limit
}

// Phase is the child's memory once a phase holds Count items: its RSS and
// peak RSS (VmRSS, VmHWM), and its live memory (the heap marked live by the
// garbage collector's last cycle, and the goroutine stacks, from its
// GODEBUG=gctrace=1 lines: what GOMEMLIMIT cannot reclaim).
type Phase struct {
	Name        string `json:"name"`
	Count       int    `json:"count"`
	RSS         int64  `json:"rss"`
	HWM         int64  `json:"hwm"`
	Live        int64  `json:"live"`
	LivePerItem int64  `json:"livePerItem"` // growth of Live over the previous phase, per item
}

func main() {
	manifest := flag.String("manifest", "deploy/k8s/facade.yaml", "the Deployment whose container's environment and memory limit apply")
	facade := flag.String("facade", "", "the facade program; empty builds this module's into a temporary directory")
	scale := flag.Int("scale", 1, "divide every live bound by this")
	hold := flag.Duration("hold", 0, "keep the child at its bounds this long after the last phase (to profile it)")
	var sets multiFlag
	flag.Var(&sets, "set", "NAME=value added to (or replacing in) the child's environment; repeatable")
	flag.Parse()
	if runtime.GOOS != "linux" {
		log.Fatal("liveload reads /proc/PID/status")
	}
	res, err := run(*manifest, *facade, *scale, *hold, sets)
	if err != nil {
		log.Fatal(err)
	}
	out, _ := json.MarshalIndent(res, "", "  ")
	fmt.Println(string(out))
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// run measures the facade's memory through the phases of load.phases
// against the bounds of the Deployment manifest (divided by scale, the
// environment changed by sets), the child built from this module unless
// facade names its binary, and holds the last phase for hold.
func run(manifest, facade string, scale int, hold time.Duration, sets []string) (*Result, error) {
	env, limit, b, err := childEnv(manifest, scale, sets)
	if err != nil {
		return nil, err
	}
	up, err := newUpstream()
	if err != nil {
		return nil, err
	}
	defer up.srv.Close()
	env["UPSTREAM_URL"] = up.srv.URL
	if facade == "" {
		dir, err := os.MkdirTemp("", "liveload")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		facade = filepath.Join(dir, "facade")
		if out, err := exec.Command("go", "build", "-o", facade, "github.com/workspacenet/facade").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build: %v\n%s", err, out)
		}
	}
	child, base, err := startFacade(facade, env)
	if err != nil {
		return nil, err
	}
	defer child.stop()
	l := &load{child: child, base: base, up: up, b: b, res: &Result{Manifest: manifest, Env: env, Limit: limit}}
	defer func() {
		for _, c := range l.conns {
			c.CloseNow()
		}
	}()
	if err := l.phases(context.Background()); err != nil {
		return nil, err
	}
	_, l.res.PeakRSS = procMemory(child.pid)
	time.Sleep(hold)
	l.res.Fits = l.res.PeakRSS < limit
	return l.res, nil
}

// bounds are the child's bounds of live connections and subscriptions.
type bounds struct {
	maxConns, perCredConns, perAddr, maxSubs, perCredSubs, perConn int
}

// childEnv returns the child's environment (the manifest's, changed by
// sets, its bounds divided by scale), its memory limit, and its bounds.
func childEnv(manifest string, scale int, sets []string) (map[string]string, int64, bounds, error) {
	env, limit, err := readManifest(manifest)
	if err != nil {
		return nil, 0, bounds{}, err
	}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return nil, 0, bounds{}, fmt.Errorf("-set %q: want NAME=value", s)
		}
		env[k] = v
	}
	bound := func(name string, def int) int {
		n := def
		if v, ok := env[name]; ok {
			n, _ = strconv.Atoi(v)
		}
		n = max(n/max(scale, 1), 1)
		env[name] = strconv.Itoa(n)
		return n
	}
	var b bounds
	b.maxConns = bound("LIVE_MAX_CONNECTIONS", 10000)
	b.perCredConns = bound("LIVE_MAX_CONNECTIONS_PER_CREDENTIAL", 100)
	b.perAddr = bound("LIVE_MAX_INIT_PER_ADDRESS", 16)
	b.maxSubs = bound("LIVE_MAX_SUBSCRIPTIONS", 20000)
	bound("LIVE_MAX_QUEUED", 20000)
	b.perCredSubs = bound("LIVE_MAX_PER_CREDENTIAL", 100)
	b.perConn = bound("LIVE_MAX_PER_CONNECTION", 50)
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	env["ADDR"] = "127.0.0.1:0"
	env["METRICS_ADDR"] = "127.0.0.1:0"
	env["FACADE_SECRET"] = hex.EncodeToString(secret)
	env["TRUSTED_PROXIES"] = "127.0.0.1/32"
	env["LIVE_INIT_TIMEOUT"] = "1h" // the opening sockets are held while measured
	env["LOG_LEVEL"] = "error"
	delete(env, "REDIS_URL") // the manifest's is a secret; the response cache is not used here
	return env, limit, b, nil
}

// load is one run against the child: its connections and the phases
// measured.
type load struct {
	child *child
	base  string
	up    *upstream
	b     bounds
	res   *Result
	conns []*websocket.Conn
	open  []*liveClient
	subs  int
}

// measure records the phase name with count items (connections,
// subscriptions).
func (l *load) measure(name string, count int) {
	res, child := l.res, l.child
	live, ok := child.gc.after(2, 3*time.Second) // two cycles that began after the phase
	if !ok {
		// A quiet phase: garbage of its own (1 MiB request bodies)
		// makes the child collect.
		nudge(l.base, child)
		live, _ = child.gc.after(1, 3*time.Second)
	}
	rss, hwm := procMemory(child.pid)
	p := Phase{Name: name, Count: count, RSS: rss, HWM: hwm, Live: live}
	if n := len(res.Phases); n > 0 && count > 0 {
		p.LivePerItem = (live - res.Phases[n-1].Live) / int64(count)
	}
	res.Phases = append(res.Phases, p)
	log.Printf("%s: %d, live %.1f MiB (%.1f KiB each), VmRSS %.1f MiB, VmHWM %.1f MiB", name, count,
		float64(live)/(1<<20), float64(p.LivePerItem)/(1<<10), float64(rss)/(1<<20), float64(hwm)/(1<<20))
}

// phases measures the child started, then with its connections open, its
// subscriptions, its pool of opening sockets full, and its buffers full.
func (l *load) phases(ctx context.Context) error {
	l.measure("started", 0)
	ws := "ws" + strings.TrimPrefix(l.base, "http") + "/graphql"
	if err := l.openConns(ctx, ws); err != nil {
		return err
	}
	l.measure("open", len(l.open))
	if err := l.subscribe(ctx); err != nil {
		return err
	}
	l.measure("subscriptions", l.subs)
	// 3. The pool of opening sockets, full: perAddr from each address.
	b := l.b
	for i := range b.maxConns {
		h := http.Header{"X-Forwarded-For": {fmt.Sprintf("10.%d.%d.1", i/b.perAddr/256%256, i/b.perAddr%256)}}
		c, err := dial(ctx, ws, h)
		if err != nil {
			return fmt.Errorf("opening socket %d: %w", i, err)
		}
		l.conns = append(l.conns, c)
	}
	l.measure("opening", b.maxConns)

	// 4. Every order changes at every poll; the clients stop reading.
	for _, lc := range l.open {
		lc.stopReading()
	}
	l.up.churn.Store(true)
	l.up.resetPolls()
	// Three polls of every order changed: each queue has its 100 orders
	// (the first poll's left the socket full), or its subscription has
	// ended (SUBSCRIBER_TOO_SLOW: past LIVE_BUFFER, or behind while the
	// replica holds LIVE_MAX_QUEUED) and its poller stopped.
	l.up.waitChurn(l.subs, 3, 10*time.Second, 10*time.Minute)
	l.measure("buffers", l.subs)
	return nil
}

// openConns opens the connections, perCredConns per credential, each
// credential proven by one upstream call: one fewer than the bound, since
// at the bound a new upgrade is refused before it opens.
func (l *load) openConns(ctx context.Context, ws string) error {
	b := l.b
	creds := max((b.maxConns+b.perCredConns-1)/b.perCredConns, (b.maxSubs+b.perCredSubs-1)/b.perCredSubs)
	l.open = make([]*liveClient, 0, b.maxConns)
	for i := range max(b.maxConns-1, 1) {
		cred := fmt.Sprintf("Bearer liveload-%d", i%creds)
		c, err := dial(ctx, ws, http.Header{"X-Forwarded-For": {"192.168.0.1"}})
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		l.conns = append(l.conns, c)
		lc := &liveClient{conn: c, cred: cred}
		if err := lc.init(ctx); err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		l.open = append(l.open, lc)
	}
	return nil
}

// subscribe makes the subscriptions: each of its own location's orders,
// within the bounds per connection and per credential; then waits until
// every poller has its baseline.
func (l *load) subscribe(ctx context.Context) error {
	b := l.b
	perCred := map[string]int{}
	for round := 0; l.subs < b.maxSubs && round < b.perConn; round++ {
		for _, lc := range l.open {
			if l.subs == b.maxSubs {
				break
			}
			if perCred[lc.cred] == b.perCredSubs {
				continue
			}
			perCred[lc.cred]++
			if err := lc.subscribe(ctx, newUUID()); err != nil {
				return err
			}
			l.subs++
		}
	}
	// Every poller has its baseline once each location was polled twice.
	if err := l.up.waitPolls(l.subs, 2, 1, 10*time.Minute); err != nil {
		return err
	}
	for _, lc := range l.open {
		lc.drain(ctx) // nothing is queued for them yet
	}
	return nil
}

// readManifest returns the facade container's environment (its literal
// values) and memory limit from a Deployment manifest: the lines
// "- name: X" each followed by "value: Y", and "memory: 256Mi" under
// "limits:".
func readManifest(path string) (map[string]string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	env := map[string]string{}
	var limit int64
	name, inLimits := "", false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(strings.SplitN(sc.Text(), " #", 2)[0])
		switch {
		case strings.HasPrefix(line, "- name: "):
			name = strings.TrimPrefix(line, "- name: ")
		case strings.HasPrefix(line, "value: ") && name != "":
			env[name] = strings.Trim(strings.TrimPrefix(line, "value: "), `"`)
			name = ""
		case line == "limits:":
			inLimits = true
		case inLimits && strings.HasPrefix(line, "memory: "):
			limit, err = quantity(strings.TrimPrefix(line, "memory: "))
			if err != nil {
				return nil, 0, err
			}
			inLimits = false
		}
	}
	if limit == 0 || env["GOMEMLIMIT"] == "" {
		return nil, 0, fmt.Errorf("%s: no memory limit or GOMEMLIMIT found", path)
	}
	return env, limit, sc.Err()
}

// quantity reads a Kubernetes memory quantity in Mi or Gi.
func quantity(s string) (int64, error) {
	for suffix, mult := range map[string]int64{"Mi": 1 << 20, "Gi": 1 << 30} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			return v * mult, err
		}
	}
	return 0, fmt.Errorf("memory quantity %q: want Mi or Gi", s)
}

// child is the facade process.
type child struct {
	pid  int
	stop func()
	gc   gcTrace
}

// gcTrace follows the child's gctrace lines ("gc N @...: ..., A->B->C MB,
// D MB goal, E MB stacks, ...").
type gcTrace struct {
	mu   sync.Mutex
	n    int   // cycles seen
	live int64 // C + E of the last, bytes
}

var gcLine = regexp.MustCompile(`^gc \d+ @.* (\d+)->(\d+)->(\d+) MB, \d+ MB goal, (\d+) MB stacks`)

func (g *gcTrace) line(s string) bool {
	m := gcLine.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	heap, _ := strconv.ParseInt(m[3], 10, 64)
	stacks, _ := strconv.ParseInt(m[4], 10, 64)
	g.mu.Lock()
	g.n++
	g.live = (heap + stacks) << 20
	g.mu.Unlock()
	return true
}

// after waits for k more cycles (at most within) and returns the live
// memory of the last, and whether k cycles came.
func (g *gcTrace) after(k int, within time.Duration) (int64, bool) {
	g.mu.Lock()
	want := g.n + k
	g.mu.Unlock()
	deadline := time.Now().Add(within)
	for {
		g.mu.Lock()
		n, live := g.n, g.live
		g.mu.Unlock()
		if n >= want {
			return live, true
		}
		if time.Now().After(deadline) {
			return live, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startFacade runs the program with exactly env (and PATH) and waits for
// its listening line.
func startFacade(bin string, env map[string]string) (*child, string, error) {
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "GODEBUG=gctrace=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	errs, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	c := &child{pid: cmd.Process.Pid}
	go func() {
		sc := bufio.NewScanner(errs)
		for sc.Scan() {
			if !c.gc.line(sc.Text()) {
				fmt.Fprintln(os.Stderr, sc.Text())
			}
		}
	}()
	c.stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
	}
	listening := regexp.MustCompile(`listening on (http://\S+)`)
	base := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				base <- m[1]
			}
		}
	}()
	select {
	case b := <-base:
		return c, b, nil
	case <-time.After(time.Minute):
		c.stop()
		return nil, "", errors.New("the facade did not start within a minute")
	}
}

// nudge sends the child 1 MiB requests, as garbage, until it starts a
// garbage collection cycle (at most 200).
func nudge(base string, c *child) {
	c.gc.mu.Lock()
	n := c.gc.n
	c.gc.mu.Unlock()
	body := []byte(`{"query":"{ __typename }","variables":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}`)
	for range 200 {
		resp, err := http.Post(base+"/graphql", "application/json", bytes.NewReader(body))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		c.gc.mu.Lock()
		done := c.gc.n > n
		c.gc.mu.Unlock()
		if done {
			return
		}
	}
}

// dial opens a graphql-transport-ws WebSocket whose receive buffer is
// small (4 KiB), so that a client that stops reading blocks the server's
// writes soon.
func dial(ctx context.Context, url string, h http.Header) (*websocket.Conn, error) {
	d := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return errors.Join(err, serr)
	}}
	hc := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: hc, HTTPHeader: h, Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(-1)
	return c, nil
}

// liveClient is one acknowledged connection and its subscriptions.
type liveClient struct {
	conn *websocket.Conn
	cred string
	n    int

	stop atomic.Bool
}

func (c *liveClient) write(ctx context.Context, v any) error {
	b, _ := json.Marshal(v)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return c.conn.Write(ctx, websocket.MessageText, b)
}

func (c *liveClient) init(ctx context.Context) error {
	if err := c.write(ctx, map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": c.cred, "service-network-id": "fc37738e-179d-443d-bd55-efaaaae9e4ec"}}); err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, b, err := c.conn.Read(rctx)
	if err != nil || !strings.Contains(string(b), "connection_ack") {
		return fmt.Errorf("connection_init: %s %v", b, err)
	}
	return nil
}

// orderFields is an order's fields that need no upstream call: each event
// is about 1 KB.
const orderFields = `id locationRef membershipRef number comment createDate deleteDate quantity status product { id title } option { id title }`

// comment makes each order as large as a real one with a note (its
// version, first, changes it at every poll once churn is set).
var comment = strings.Repeat("a customer's note about the order ", 12)

func (c *liveClient) subscribe(ctx context.Context, location string) error {
	c.n++
	return c.write(ctx, map[string]any{"id": strconv.Itoa(c.n), "type": "subscribe", "payload": map[string]any{
		"query":     `subscription($loc: ID!) { orderEvents(locationId: $loc) { kind at pollIntervalMs node { ` + orderFields + ` } } }`,
		"variables": map[string]any{"loc": location}}})
}

// drain reads what the connection receives, on a goroutine, until
// stopReading (then the message being waited for is the last read: a Read
// whose context ends closes the connection).
func (c *liveClient) drain(ctx context.Context) {
	go func() {
		for !c.stop.Load() {
			if _, _, err := c.conn.Read(ctx); err != nil {
				return
			}
		}
	}()
}

func (c *liveClient) stopReading() { c.stop.Store(true) }

// procMemory returns VmRSS and VmHWM of pid, in bytes.
func procMemory(pid int) (rss, hwm int64) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for line := range strings.SplitSeq(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch name {
		case "VmRSS":
			rss = kb << 10
		case "VmHWM":
			hwm = kb << 10
		}
	}
	return rss, hwm
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// upstream answers every order list with 100 orders of the location asked
// for (the local REST service's first order as their template), each
// changed at every poll once churn is set; a resource is 404 (the live
// connections' proof of credentials); any credentials are accepted.
type upstream struct {
	srv      *httptest.Server
	template map[string]any
	churn    atomic.Bool
	version  atomic.Int64

	mu    sync.Mutex
	polls map[string]int // by location
}

func newUpstream() (*upstream, error) {
	ctx := context.Background()
	rs, err := restserver.New(ctx, restserver.Config{DBPath: ":memory:", DemoScale: 1})
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	m, err := rs.Manifest()
	if err != nil {
		return nil, err
	}
	local := httptest.NewServer(rs.Handler())
	defer local.Close()
	req, _ := http.NewRequest(http.MethodGet, local.URL+restclient.OpListOrders.Route+"?limit=1&locationRef="+m.IDs["location"][0], nil)
	req.Header.Set("Authorization", "Bearer "+m.BearerToken)
	req.Header.Set("service-network-id", m.NetworkID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var page struct{ Orders []map[string]any }
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || len(page.Orders) == 0 {
		return nil, fmt.Errorf("the local REST service's orders: %v", err)
	}
	u := &upstream{template: page.Orders[0], polls: map[string]int{}}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	return u, nil
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path != restclient.OpListOrders.Route {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"message":"not found","type":"not_found"}`)
		return
	}
	loc := r.URL.Query().Get("locationRef")
	u.mu.Lock()
	u.polls[loc]++
	u.mu.Unlock()
	version := int64(0)
	if u.churn.Load() {
		version = u.version.Add(1)
	}
	orders := make([]map[string]any, 100)
	for i := range orders {
		o := make(map[string]any, len(u.template))
		for k, v := range u.template {
			o[k] = v
		}
		o["id"] = fmt.Sprintf("%s%04d", loc[:len(loc)-4], i)
		o["number"] = i + 1
		o["locationRef"] = loc
		o["comment"] = fmt.Sprintf("version %d: %s", version, comment)
		orders[i] = o
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"orders": orders})
}

// waitChurn waits until n locations were polled times each in all, or no
// location was polled for quiet (their pollers stopped), or within.
func (u *upstream) waitChurn(n, times int, quiet, within time.Duration) {
	deadline := time.Now().Add(within)
	last, lastChange := -1, time.Now()
	for time.Now().Before(deadline) {
		u.mu.Lock()
		total := 0
		for _, p := range u.polls {
			total += p
		}
		u.mu.Unlock()
		if total >= n*times {
			return
		}
		if total != last {
			last, lastChange = total, time.Now()
		} else if time.Since(lastChange) > quiet {
			log.Printf("no poll for %v after %d: the slow subscriptions ended", quiet, total)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// resetPolls forgets the polls counted so far.
func (u *upstream) resetPolls() {
	u.mu.Lock()
	clear(u.polls)
	u.mu.Unlock()
}

// waitPolls waits until a share of n locations were each polled at least
// times.
func (u *upstream) waitPolls(n, times int, share float64, within time.Duration) error {
	deadline := time.Now().Add(within)
	next := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		u.mu.Lock()
		done, total := 0, 0
		for _, p := range u.polls {
			total += p
			if p >= times {
				done++
			}
		}
		u.mu.Unlock()
		if float64(done) >= share*float64(n) {
			return nil
		}
		if time.Now().After(next) {
			log.Printf("waiting: %d of %d locations polled %d times; %d polls", done, n, times, total)
			next = time.Now().Add(10 * time.Second)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("fewer than %.0f%% of %d locations were each polled %d times within %v", share*100, n, times, within)
}
