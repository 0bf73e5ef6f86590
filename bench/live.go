package main

// The live data benchmark (go run ./bench -live): the targets of
// docs/live-data.md, measured on loopback with a real Redis (redis-server on
// the PATH, started on a free port) and the local REST service in this
// process, the facades too, but the idle subscribers' facade: a process of
// its own, whose RSS is measured.

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/workspacenet/facade/internal/testsupport/childproc"
	"github.com/workspacenet/facade/restserver"
	"github.com/workspacenet/facade/stack"
)

type liveBench struct {
	interval time.Duration
	up       *stack.Upstream
	bearer   string
	network  string
	location string
	order    string
	redisURL string
}

// runLive runs the live data benchmark and prints its markdown section.
func runLive(ctx context.Context, interval time.Duration, subscribers, credentials, idle, rounds int) error {
	redisURL, stopRedis, err := startRedis()
	if err != nil {
		return err
	}
	defer stopRedis()
	up, err := stack.StartUpstream(ctx, stack.UpstreamConfig{DemoScale: 1, TestEndpoints: true, RateLimit: 10})
	if err != nil {
		return err
	}
	defer up.Close()
	m := up.Manifest
	b := &liveBench{interval: interval, up: up, bearer: "Bearer " + m.BearerToken, network: m.NetworkID, location: m.IDs["location"][0], redisURL: redisURL}
	b.order = m.IDs["order"][0]
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	var bases []string
	var sts []*stack.Stack
	for range 2 {
		st, base, err := b.replica(ctx, secret)
		if err != nil {
			return err
		}
		defer st.Close()
		bases = append(bases, base)
		sts = append(sts, st)
	}
	w := os.Stdout
	fmt.Fprintf(w, "## Live data (go run ./bench -live, %s)\n\n", time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(w, "Interval %v; the local REST service enforcing 10 requests/s per client; two replicas on one Redis; %d CPUs, %s.\n\n", interval, runtime.NumCPU(), runtime.Version())
	if err := b.sharedRows(ctx, w, bases, sts, subscribers, rounds); err != nil {
		return err
	}
	// Many credentials, one source each.
	if credentials > 0 {
		perInterval, maxPerSecond, err := b.credentials(ctx, bases[0], credentials, rounds)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "| %d credentials, one source each: polls per interval; most requests of one client in any second | %.1f; %d | %d; at most 10 |\n", credentials, perInterval, maxPerSecond, credentials)
	}
	// Interactive latency with 5 active sources of the same credential.
	none, five, err := b.interactive(ctx, bases[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "| interactive query (orders(first: 5) of a location) p50, without / with 5 active sources of its credential | %v / %v (%+.0f%%) | within 10%% |\n", none.Round(10*time.Microsecond), five.Round(10*time.Microsecond), 100*(float64(five)/float64(none)-1))
	if idle > 0 {
		if err := b.idleRow(ctx, w, idle); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	return nil
}

// sharedRows measures subscribers of one source, one credential, over the
// replicas (at bases): the polls per interval and the event latency, then
// closes them and waits for their subscriptions to end.
func (b *liveBench) sharedRows(ctx context.Context, w io.Writer, bases []string, sts []*stack.Stack, subscribers, rounds int) error {
	conns, n, lat, err := b.shared(ctx, bases, subscribers, rounds)
	if err != nil {
		return err
	}
	polls := float64(n)
	fmt.Fprintf(w, "| Measure | Result | Target |\n|---|---|---|\n")
	fmt.Fprintf(w, "| %d subscribers of one source, one credential, 2 replicas: upstream polls per interval | %.2f (%d intervals) | 1 |\n", subscribers, polls/float64(rounds), rounds)
	slices.Sort(lat)
	p50, p99 := percentile(lat, 0.5), percentile(lat, 0.99)
	fmt.Fprintf(w, "| event latency after a change (%d events), p50 / p99 | %v / %v | %v / %v |\n", len(lat), p50.Round(time.Millisecond), p99.Round(time.Millisecond), b.interval/2+100*time.Millisecond, b.interval+200*time.Millisecond)
	for _, c := range conns {
		c.CloseNow()
	}
	waitFor(func() bool { return sts[0].Live.Stats().Subscriptions+sts[1].Live.Stats().Subscriptions == 0 })
	return nil
}

// idleRow measures idle subscribers of one source on one replica, a
// process of its own: its RSS before and with them.
func (b *liveBench) idleRow(ctx context.Context, w io.Writer, idle int) error {
	var hello struct{ URL string }
	child, err := childproc.StartSelf(&hello, time.Minute, nil, liveFacadeEnv+"="+b.up.URL)
	if err != nil {
		return err
	}
	defer child.Stop()
	rss0 := rssOf(child.Pid)
	conns, err := b.idle(ctx, hello.URL, idle)
	if err != nil {
		return err
	}
	time.Sleep(2 * b.interval)
	rss1 := rssOf(child.Pid)
	fmt.Fprintf(w, "| %d idle WebSocket subscribers of one source on one replica: RSS of the facade process | %.0f MB (%.0f MB before; %.1f KB per subscriber) | under 600 MB |\n", idle, float64(rss1)/1e6, float64(rss0)/1e6, float64(rss1-rss0)/float64(idle)/1e3)
	for _, c := range conns {
		c.CloseNow()
	}
	return nil
}

func (b *liveBench) replica(ctx context.Context, secret []byte) (*stack.Stack, string, error) {
	cfg := stack.DefaultConfig()
	cfg.Upstream, cfg.RedisURL, cfg.Secret, cfg.Replicas = b.up.URL, b.redisURL, secret, 2
	cfg.Playground, cfg.MetricsAddr, cfg.RedisOpTimeout = false, "", 2*time.Second
	cfg.Live.Interval = b.interval
	cfg.Live.MaxTotal, cfg.Live.MaxPerCredential, cfg.Graph.LiveMaxConnections = 0, 0, 0
	cfg.Graph.LiveMaxConnectionsPerCredential, cfg.Graph.LiveMaxInitPerAddress, cfg.Live.MaxQueued = 0, 0, 0
	cfg.Graph.LiveKeepAlive = 0
	st, err := stack.Start(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	go func() { _ = st.Serve(ln) }()
	return st, "http://" + ln.Addr().String(), nil
}

const liveQuery = `subscription($loc: ID!) { orderEvents(locationId: $loc) { kind node { id status } } }`

// subscribe opens a graphql-transport-ws connection with one orderEvents
// subscription; each CREATED event's order id goes to seen.
func (b *liveBench) subscribe(ctx context.Context, base, auth string, seen func(id string)) (*websocket.Conn, error) {
	return b.subscribeWith(ctx, base, auth, liveQuery, seen)
}

func (b *liveBench) subscribeQuery(ctx context.Context, base, query string) (*websocket.Conn, error) {
	return b.subscribeWith(ctx, base, b.bearer, query, nil)
}

func (b *liveBench) subscribeWith(ctx context.Context, base, auth, query string, seen func(id string)) (*websocket.Conn, error) {
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	send := func(v any) error {
		p, _ := json.Marshal(v)
		return c.Write(ctx, websocket.MessageText, p)
	}
	if err := send(map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": auth, "service-network-id": b.network}}); err != nil {
		return nil, err
	}
	if _, _, err := c.Read(ctx); err != nil { // connection_ack
		return nil, err
	}
	if err := send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": query, "variables": map[string]string{"loc": b.location}}}); err != nil {
		return nil, err
	}
	go func() {
		for {
			_, p, err := c.Read(context.Background())
			if err != nil {
				return
			}
			if seen == nil {
				continue
			}
			var m struct {
				Type    string
				Payload struct {
					Data struct {
						OrderEvents struct {
							Kind string
							Node struct{ ID string }
						}
					}
				}
			}
			if json.Unmarshal(p, &m) == nil && m.Type == "next" && m.Payload.Data.OrderEvents.Kind == "CREATED" {
				seen(m.Payload.Data.OrderEvents.Node.ID)
			}
		}
	}()
	return c, nil
}

// shared: n subscribers over the replicas; every interval one new order at
// a random moment; the latency of each subscriber's event of it.
func (b *liveBench) shared(ctx context.Context, bases []string, n, rounds int) ([]*websocket.Conn, int64, []time.Duration, error) {
	var mu sync.Mutex
	made := map[string]time.Time{}
	var lat []time.Duration
	seen := func(id string) {
		now := time.Now()
		mu.Lock()
		if t, ok := made[id]; ok {
			lat = append(lat, now.Sub(t))
		}
		mu.Unlock()
	}
	var conns []*websocket.Conn
	for i := range n {
		c, err := b.subscribe(ctx, bases[i%len(bases)], b.bearer, seen)
		if err != nil {
			return nil, 0, nil, err
		}
		conns = append(conns, c)
	}
	time.Sleep(2 * b.interval) // every subscription in, the baseline polled
	b.up.Server.Hooks().Reset()
	start := time.Now()
	for r := range rounds {
		at := start.Add(time.Duration(r)*b.interval + randDuration(b.interval))
		time.Sleep(time.Until(at))
		mu.Lock()
		id, err := b.copyOrder()
		if err != nil {
			mu.Unlock()
			return nil, 0, nil, err
		}
		made[id] = time.Now()
		mu.Unlock()
	}
	time.Sleep(time.Until(start.Add(time.Duration(rounds) * b.interval)))
	polls := b.up.Server.Hooks().Counts()["GET /shop/orders/v1"]
	time.Sleep(2 * b.interval) // the last events
	mu.Lock()
	defer mu.Unlock()
	return conns, polls, slices.Clone(lat), nil
}

// credentials: n credentials of one network (tokens of its owner), one
// subscriber each, to one location's orders: n pollers.
func (b *liveBench) credentials(ctx context.Context, base string, n, rounds int) (float64, int, error) {
	m := b.up.Manifest
	var conns []*websocket.Conn
	defer func() {
		for _, c := range conns {
			c.CloseNow()
		}
	}()
	for range n {
		tok, err := b.up.Server.IssueToken(ctx, m.NetworkID, m.IDs["membership"][0], restserver.AllScopes(), time.Now().Add(time.Hour))
		if err != nil {
			return 0, 0, err
		}
		c, err := b.subscribe(ctx, base, "Bearer "+tok, nil)
		if err != nil {
			return 0, 0, err
		}
		conns = append(conns, c)
	}
	time.Sleep(3 * b.interval) // every baseline polled
	h := b.up.Server.Hooks()
	h.Reset()
	time.Sleep(time.Duration(rounds) * b.interval)
	polls := h.Counts()["GET /shop/orders/v1"]
	most := 0
	for _, v := range h.MaxPerSecond() {
		most = max(most, v)
	}
	return float64(polls) / float64(rounds), most, nil
}

// interactive: the p50 of 60 sequential (2.5 per second) orders(first: 5) queries of the
// demo credential, without then with 5 sources of its own being polled.
func (b *liveBench) interactive(ctx context.Context, base string) (none, five time.Duration, err error) {
	measure := func() (time.Duration, error) {
		var d []time.Duration
		body := `{"query":"query($l: ID!) { location(id: $l) { orders(first: 5) { nodes { id status } } } }","variables":{"l":"` + b.location + `"}}`
		for range 60 {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", b.bearer)
			req.Header.Set("service-network-id", b.network)
			t := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return 0, err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			d = append(d, time.Since(t))
			time.Sleep(400 * time.Millisecond) // 2.5/s: with the 5 sources' polls, within the client's 10/s
		}
		slices.Sort(d)
		return percentile(d, 0.5), nil
	}
	if none, err = measure(); err != nil {
		return 0, 0, err
	}
	var conns []*websocket.Conn
	defer func() {
		for _, c := range conns {
			c.CloseNow()
		}
	}()
	queries := []string{"NEW", "IN_PROGRESS", "COMPLETED", "CANCELED", ""}
	for _, status := range queries {
		q := liveQuery
		if status != "" {
			q = strings.Replace(q, "(locationId: $loc)", "(locationId: $loc, status: "+status+")", 1)
		}
		c, err := b.subscribeQuery(ctx, base, q)
		if err != nil {
			return 0, 0, err
		}
		conns = append(conns, c)
	}
	time.Sleep(2 * b.interval)
	five, err = measure()
	return none, five, err
}

// idle opens n subscribers of one source on one replica that read
// nothing, 16 at a time.
func (b *liveBench) idle(ctx context.Context, base string, n int) ([]*websocket.Conn, error) {
	var (
		mu    sync.Mutex
		conns []*websocket.Conn
		first error
		wg    sync.WaitGroup
	)
	next := make(chan struct{})
	for range 16 {
		wg.Go(func() {
			for range next {
				c, err := b.subscribe(ctx, base, b.bearer, nil)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				if c != nil {
					conns = append(conns, c)
				}
				mu.Unlock()
			}
		})
	}
	for range n {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	return conns, first
}

// liveFacadeEnv makes this binary the facade of the idle measurement: the
// upstream's URL, one replica, the live defaults but no bounds (one client
// opens every connection, from one address), the program's GC settings
// (stack.SetGC).
const liveFacadeEnv = "BENCH_LIVE_FACADE"

func maybeServeLiveFacade() bool {
	url := os.Getenv(liveFacadeEnv)
	if url == "" {
		return false
	}
	ctx := childproc.ParentGone()
	stack.SetGC(os.Getenv) // the program's pacing, as its own main sets it
	cfg := stack.DefaultConfig()
	cfg.Upstream, cfg.Playground, cfg.MetricsAddr = url, false, ""
	cfg.Live.MaxTotal, cfg.Live.MaxPerCredential, cfg.Graph.LiveMaxConnections = 0, 0, 0
	cfg.Graph.LiveMaxPerConnection, cfg.Graph.LiveMaxConnectionsPerCredential, cfg.Graph.LiveMaxInitPerAddress, cfg.Live.MaxQueued = 0, 0, 0, 0
	st, err := stack.Start(ctx, cfg, slog.New(slog.DiscardHandler))
	if err == nil {
		var ln net.Listener
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err == nil {
			go func() { _ = st.Serve(ln) }()
			err = childproc.Announce(struct{ URL string }{"http://" + ln.Addr().String()})
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench live facade:", err)
		os.Exit(1)
	}
	<-ctx.Done()
	_ = st.Close()
	return true
}

func (b *liveBench) copyOrder() (string, error) {
	resp, err := http.Post(b.up.URL+"/_test/orders/"+b.order+"/copy", "application/json", strings.NewReader(`{"status":"new"}`))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct{ ID string }
	return out.ID, json.NewDecoder(resp.Body).Decode(&out)
}

func randDuration(d time.Duration) time.Duration {
	var b [8]byte
	_, _ = rand.Read(b[:])
	var n uint64
	for _, x := range b {
		n = n<<8 | uint64(x)
	}
	return time.Duration(n % uint64(d))
}

// rssOf is the resident set size of process pid.
// rssOf is the resident memory of process pid in bytes (0 if unknown).
func rssOf(pid int) int64 {
	m, _ := readProcMem(strconv.Itoa(pid))
	return m.RSS * 1024
}

// startRedis starts redis-server on a free loopback port.
func startRedis() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("redis-server: %w", err)
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "redis://" + addr, stop, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	return "", nil, fmt.Errorf("redis-server did not start")
}

func waitFor(cond func() bool) {
	for range 3000 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
