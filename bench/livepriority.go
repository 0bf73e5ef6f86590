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
	sts, bases, err := startPriorityReplicas(ctx, up.URL, redisURL)
	for _, st := range sts {
		defer st.Close()
	}
	if err != nil {
		return err
	}
	resources := m.IDs["resource"]
	polled, unpolled := resources[0], resources[1]
	srcs := prioritySources(m.IDs, sources)
	for _, src := range srcs {
		for _, st := range sts {
			if _, err := st.Live.Subscribe(ctx, creds, src(st.Client)); err != nil {
				return err
			}
		}
	}
	time.Sleep(3 * live.MinInterval) // the polls queue
	var withPoll, without []time.Duration
	for i := range rounds {
		base := bases[i%2]
		d, err := timedResourceQuery(ctx, base, creds, polled)
		if err != nil {
			return err
		}
		withPoll = append(withPoll, d)
		if d, err = timedResourceQuery(ctx, base, creds, unpolled); err != nil {
			return err
		}
		without = append(without, d)
		time.Sleep(300 * time.Millisecond)
	}
	printPriority(os.Stdout, sources, len(srcs), rounds, withPoll, without)
	return nil
}

// startPriorityReplicas starts two replicas of the facade on upstreamURL
// sharing Redis at redisURL (one secret), each serving on a loopback port
// (bases); the replicas started are returned even with an error.
func startPriorityReplicas(ctx context.Context, upstreamURL, redisURL string) (sts []*stack.Stack, bases []string, err error) {
	return startReplicasAt(ctx, upstreamURL, redisURL, live.MinInterval)
}

// startReplicasAt is startPriorityReplicas polling every interval.
func startReplicasAt(ctx context.Context, upstreamURL, redisURL string, interval time.Duration) (sts []*stack.Stack, bases []string, err error) {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	for range 2 {
		cfg := stack.DefaultConfig()
		cfg.Upstream, cfg.RedisURL, cfg.Secret, cfg.Replicas = upstreamURL, redisURL, secret, 2
		cfg.Playground, cfg.MetricsAddr, cfg.CacheTTL = false, "", ""
		cfg.Live.Interval = interval
		cfg.Live.MaxTotal, cfg.Live.MaxPerCredential = 0, 0
		st, err := stack.Start(ctx, cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			return sts, bases, err
		}
		sts = append(sts, st)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return sts, bases, err
		}
		go func() { _ = st.Serve(ln) }()
		bases = append(bases, "http://"+ln.Addr().String())
	}
	return sts, bases, nil
}

// prioritySources are the polled object (the first resource), then as many
// other sources as asked for (resources, products, events), up to n in all.
func prioritySources(ids map[string][]string, n int) []func(*restclient.Client) live.Source {
	resources := ids["resource"]
	polled := resources[0]
	var srcs []func(*restclient.Client) live.Source
	srcs = append(srcs, func(c *restclient.Client) live.Source { return live.Resource(c, polled) })
	for _, id := range resources[2:] {
		srcs = append(srcs, func(c *restclient.Client) live.Source { return live.Resource(c, id) })
	}
	for _, id := range ids["product"] {
		srcs = append(srcs, func(c *restclient.Client) live.Source { return live.Product(c, id) })
	}
	for _, id := range ids["event"] {
		srcs = append(srcs, func(c *restclient.Client) live.Source { return live.EventSource(c, id) })
	}
	return srcs[:min(len(srcs), n)]
}

// timedResourceQuery asks the facade at base for resource id as creds, and
// returns how long the answer took (an answer with errors is an error).
func timedResourceQuery(ctx context.Context, base string, creds restclient.Credentials, id string) (time.Duration, error) {
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

// printPriority writes the measurement's table: the queries of the polled
// object (withPoll) and of the unpolled one (without), with n sources
// polled (sources asked for).
func printPriority(w io.Writer, sources, n, rounds int, withPoll, without []time.Duration) {
	slices.Sort(withPoll)
	slices.Sort(without)
	fmt.Fprintf(w, "## Interactive first (go run ./bench -live-priority %d, %s)\n\n", sources, time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(w, "%d sources of one client polled every %v through two replicas on one Redis, the local REST service enforcing 10 requests/s per client, the response cache off; %d queries of each kind, alternating replicas; %d CPUs, %s.\n\n", n, live.MinInterval, rounds, runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(w, "| query `resource(id)` | p50 | p99 | max |\n|---|---|---|---|\n")
	for _, r := range []struct {
		name string
		d    []time.Duration
	}{{"of the object a subscription polls", withPoll}, {"of an object nothing polls", without}} {
		fmt.Fprintf(w, "| %s | %v | %v | %v |\n", r.name, percentile(r.d, 0.5).Round(time.Millisecond), percentile(r.d, 0.99).Round(time.Millisecond), r.d[len(r.d)-1].Round(time.Millisecond))
	}
	fmt.Fprintln(w)
}
