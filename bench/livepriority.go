package main

// The interactive-first measurement (go run ./bench -live-priority N): a
// query for an object that one of its client's subscriptions polls against
// a query for an object nothing polls, while N sources of that client poll
// through two replicas on one Redis (the local REST service enforcing 10
// requests/s per client, the response cache off so that every query goes
// upstream, the program's minimum interval of 1 s: with N above 10 the
// polls alone would take the whole budget, so they queue).

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/workspacenet/facade/internal/policy/live"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// runLivePriority measures rounds queries of each kind, alternating kinds
// and replicas, with sources polled, and prints a markdown table.
func runLivePriority(ctx context.Context, sources, rounds int) error {
	redisURL, stopRedis, err := startRedis()
	if err != nil {
		return err
	}
	defer stopRedis()
	up, err := stack.StartUpstream(ctx, stack.UpstreamConfig{DemoScale: 1, RateLimit: 10})
	if err != nil {
		return err
	}
	defer up.Close()
	m := up.Manifest
	creds := restclient.Credentials{Authorization: "Bearer " + m.BearerToken, NetworkID: m.NetworkID}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	var sts []*stack.Stack
	var bases []string
	for range 2 {
		cfg := stack.DefaultConfig()
		cfg.Upstream, cfg.RedisURL, cfg.Secret, cfg.Replicas = up.URL, redisURL, secret, 2
		cfg.Playground, cfg.MetricsAddr, cfg.CacheTTL = false, "", ""
		cfg.Live.Interval = live.MinInterval
		cfg.Live.MaxTotal, cfg.Live.MaxPerCredential = 0, 0
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
		sts, bases = append(sts, st), append(bases, "http://"+ln.Addr().String())
	}
	// The polled object, then as many other sources as asked for, each
	// subscribed on both replicas (one of them polls it).
	resources := m.IDs["resource"]
	polled, unpolled := resources[0], resources[1]
	var srcs []func(*restclient.Client) live.Source
	srcs = append(srcs, func(c *restclient.Client) live.Source { return live.Resource(c, polled) })
	for _, id := range resources[2:] {
		srcs = append(srcs, func(c *restclient.Client) live.Source { return live.Resource(c, id) })
	}
	for _, id := range m.IDs["product"] {
		srcs = append(srcs, func(c *restclient.Client) live.Source { return live.Product(c, id) })
	}
	for _, id := range m.IDs["event"] {
		srcs = append(srcs, func(c *restclient.Client) live.Source { return live.EventSource(c, id) })
	}
	srcs = srcs[:min(len(srcs), sources)]
	for _, src := range srcs {
		for _, st := range sts {
			if _, err := st.Live.Subscribe(ctx, creds, src(st.Client)); err != nil {
				return err
			}
		}
	}
	time.Sleep(3 * live.MinInterval) // the polls queue

	query := func(base, id string) (time.Duration, error) {
		body := `{"query":"query($id: ID!) { resource(id: $id) { id title } }","variables":{"id":"` + id + `"}}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", creds.Authorization)
		req.Header.Set("service-network-id", creds.NetworkID)
		t := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || strings.Contains(string(b), `"errors"`) {
			return 0, fmt.Errorf("query of %s: %d %s", id, resp.StatusCode, b)
		}
		return time.Since(t), nil
	}
	var withPoll, without []time.Duration
	for i := range rounds {
		base := bases[i%2]
		d, err := query(base, polled)
		if err != nil {
			return err
		}
		withPoll = append(withPoll, d)
		if d, err = query(base, unpolled); err != nil {
			return err
		}
		without = append(without, d)
		time.Sleep(300 * time.Millisecond)
	}
	slices.Sort(withPoll)
	slices.Sort(without)
	w := os.Stdout
	fmt.Fprintf(w, "## Interactive first (go run ./bench -live-priority %d, %s)\n\n", sources, time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(w, "%d sources of one client polled every %v through two replicas on one Redis, the local REST service enforcing 10 requests/s per client, the response cache off; %d queries of each kind, alternating replicas; %d CPUs, %s.\n\n", len(srcs), live.MinInterval, rounds, runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(w, "| query `resource(id)` | p50 | p99 | max |\n|---|---|---|---|\n")
	for _, r := range []struct {
		name string
		d    []time.Duration
	}{{"of the object a subscription polls", withPoll}, {"of an object nothing polls", without}} {
		fmt.Fprintf(w, "| %s | %v | %v | %v |\n", r.name, percentile(r.d, 0.5).Round(time.Millisecond), percentile(r.d, 0.99).Round(time.Millisecond), r.d[len(r.d)-1].Round(time.Millisecond))
	}
	fmt.Fprintln(w)
	return nil
}
