package main

// go run ./bench -live-query N: what a @live README dashboard costs
// (docs/live-data.md#live-queries): bytes of an update (patch) against the
// full result, REST calls of a re-run against a full run, and the heap one
// idle live query holds (N of them on one WebSocket).

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/stack"
)

// liveQueryRounds is the number of order changes measured.
const liveQueryRounds = 10

// lqClient is a graphql-transport-ws connection carrying live queries.
type lqClient struct {
	c    *websocket.Conn
	next chan lqResult
}

type lqResult struct {
	ID      string
	Payload json.RawMessage
}

func runLiveQuery(ctx context.Context, idle int) error {
	up, err := stack.StartUpstream(ctx, stack.UpstreamConfig{DemoScale: 1, TestEndpoints: true})
	if err != nil {
		return err
	}
	defer up.Close()
	cfg := stack.DefaultConfig()
	cfg.Upstream, cfg.Playground, cfg.MetricsAddr, cfg.UpstreamTrace = up.URL, false, "", "on"
	cfg.Live.Interval, cfg.Graph.LiveMaxPerConnection, cfg.Live.MaxPerCredential = time.Second, 0, 0
	st, err := stack.Start(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer st.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = st.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	m := up.Manifest
	auth := map[string]string{"Authorization": "Bearer " + m.BearerToken, "service-network-id": m.NetworkID, "X-Upstream-Trace": "1"}
	vars := map[string]any{"l": m.IDs["location"][0]}
	live := strings.Replace(queries.BenchDashboard, "query Dashboard($l: ID!) {", "query Dashboard($l: ID!) @live {", 1)

	c, err := dialLQ(ctx, base, auth)
	if err != nil {
		return err
	}
	defer c.c.CloseNow()
	fmt.Printf("## Live queries (go run ./bench -live-query %d)\n\n%d CPUs, %s; the README dashboard on the demo data, interval 1 s.\n\n", idle, runtime.NumCPU(), runtime.Version())
	if err := lqChanges(ctx, c, up, live, vars); err != nil {
		return err
	}
	return lqIdle(ctx, base, auth, live, vars, idle)
}

// lqChanges runs the live dashboard and changes one order's status
// liveQueryRounds times: the update's bytes and re-run calls, against the
// full result's bytes and a full run's calls.
func lqChanges(ctx context.Context, c *lqClient, up *stack.Upstream, live string, vars map[string]any) error {
	if err := c.subscribe(ctx, "d", live, vars); err != nil {
		return err
	}
	first := <-c.next
	var r struct {
		Data       json.RawMessage
		Extensions struct {
			Upstream struct{ Count int }
			Live     struct{ KeptBytes int }
		}
	}
	_ = json.Unmarshal(first.Payload, &r)
	var d struct {
		Location struct {
			Orders struct{ Nodes []struct{ ID, Status string } }
		}
	}
	if json.Unmarshal(r.Data, &d) != nil || len(d.Location.Orders.Nodes) == 0 {
		return fmt.Errorf("first result: %.200s", first.Payload)
	}
	order := d.Location.Orders.Nodes[0].ID
	statuses := []string{"canceled", "completed"}
	if d.Location.Orders.Nodes[0].Status == "CANCELED" {
		statuses[0], statuses[1] = statuses[1], statuses[0]
	}
	time.Sleep(2 * time.Second) // every source's baseline
	var sizes, reruns []int
	for i := range liveQueryRounds {
		status := statuses[i%2]
		resp, err := http.Post(up.URL+"/_test/orders/"+order+"/set", "application/json", strings.NewReader(`{"status":"`+status+`"}`))
		if err != nil {
			return err
		}
		resp.Body.Close()
		u := <-c.next
		var ur struct {
			Extensions struct{ Upstream struct{ Count int } }
		}
		_ = json.Unmarshal(u.Payload, &ur)
		var plain map[string]json.RawMessage
		_ = json.Unmarshal(u.Payload, &plain)
		delete(plain, "extensions") // the report, present only with X-Upstream-Trace
		b, _ := json.Marshal(plain)
		sizes, reruns = append(sizes, len(b)), append(reruns, ur.Extensions.Upstream.Count)
	}
	fmt.Printf("| Measure (one order's status changed, %d changes) | Median |\n|---|---|\n", liveQueryRounds)
	fmt.Printf("| bytes of an update: patch; full result (data) | %d; %d |\n", medianInt(sizes), len(r.Data)+len(`{"data":}`))
	fmt.Printf("| REST calls: a re-run; the first (full) run | %d; %d |\n", medianInt(reruns), r.Extensions.Upstream.Count)
	fmt.Printf("| bytes kept between runs (extensions.live.keptBytes) | %d |\n", r.Extensions.Live.KeptBytes)
	return nil
}

// lqIdle opens n idle live dashboards on one WebSocket and reports the
// heap each holds (the process's live heap after a GC, before and after).
func lqIdle(ctx context.Context, base string, auth map[string]string, live string, vars map[string]any, n int) error {
	if n <= 0 {
		return nil
	}
	c, err := dialLQ(ctx, base, auth)
	if err != nil {
		return err
	}
	defer c.c.CloseNow()
	before := heap()
	for i := range n {
		if err := c.subscribe(ctx, fmt.Sprint("i", i), live, vars); err != nil {
			return err
		}
		<-c.next
	}
	after := heap()
	fmt.Printf("| heap of one idle live dashboard (%d on one WebSocket; client in the same process) | %.1f KB |\n\n", n, float64(after-before)/float64(n)/1024)
	return nil
}

func heap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func medianInt(v []int) int {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func dialLQ(ctx context.Context, base string, auth map[string]string) (*lqClient, error) {
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(4 << 20)
	p, _ := json.Marshal(map[string]any{"type": "connection_init", "payload": auth})
	if err := c.Write(ctx, websocket.MessageText, p); err != nil {
		return nil, err
	}
	if _, _, err := c.Read(ctx); err != nil {
		return nil, err
	}
	l := &lqClient{c: c, next: make(chan lqResult, 16)}
	go func() {
		for {
			_, p, err := c.Read(context.Background())
			if err != nil {
				return
			}
			var m struct {
				ID, Type string
				Payload  json.RawMessage
			}
			if json.Unmarshal(p, &m) == nil && m.Type == "next" {
				l.next <- lqResult{ID: m.ID, Payload: m.Payload}
			} else if m.Type == "error" {
				fmt.Fprintf(os.Stderr, "live query %s: %s\n", m.ID, m.Payload)
			}
		}
	}()
	return l, nil
}

func (l *lqClient) subscribe(ctx context.Context, id, query string, vars map[string]any) error {
	p, _ := json.Marshal(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": query, "variables": vars}})
	return l.c.Write(ctx, websocket.MessageText, p)
}
