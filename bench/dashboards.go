package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// The "concurrent dashboards" scenario (-dashboards): K dashboards of one
// credential started together, over the demo's locations in turn, each
// making its own calls (identical GETs in flight not shared), through one facade with its default budget and
// request deadline (30 s), against the local service enforcing the real
// API's 10 requests/s per client with 20 ms per request. The budget serves
// a client's requests in arrival order: each should finish within about
// K·C/RPS, and none fail.

// dashboardsRun measures K concurrent dashboards and prints one line.
func dashboardsRun(ctx context.Context, cfg Config, k int, w io.Writer) error {
	up, who, _, err := startUpstreamFor(ctx, cfg)
	if err != nil {
		return err
	}
	defer up.Close()
	if err := up.SetLatency(realLatency); err != nil {
		return err
	}
	if err := up.SetRateLimit(realRPS); err != nil {
		return err
	}
	// Identical GETs in flight are not shared between the dashboards here:
	// each makes its own 18 calls, as dashboards of different locations
	// would (the demo has three).
	fcfg := stack.DefaultConfig()
	fcfg.Upstream, fcfg.Playground, fcfg.CacheTTL = up.url, false, ""
	fcfg.Graph.Loaders = loaders.DefaultConfig()
	fcfg.ClientOptions = []restclient.Option{restclient.WithSharedGets(false)}
	st, err := stack.Start(ctx, fcfg, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = st.Serve(ln) }()
	f := &facade{url: "http://" + ln.Addr().String() + "/graphql"}
	locs := up.manifest.IDs["location"]
	c := newGQLClient(f.url, who)
	if err := up.ResetStats(); err != nil {
		return err
	}
	took := make([]time.Duration, k)
	failed := make([]string, k)
	var wg sync.WaitGroup
	for i := range k {
		wg.Go(func() {
			t0 := time.Now()
			r, err := c.Post(ctx, gqlclient.Request{Query: queries.Dashboard, Variables: map[string]any{"locationId": locs[i%len(locs)]}}, nil)
			took[i] = time.Since(t0)
			switch {
			case err != nil:
				failed[i] = err.Error()
			case len(r.Errors) > 0:
				failed[i] = r.Errors[0].Message
			}
		})
	}
	wg.Wait()
	us, err := up.Stats()
	if err != nil {
		return err
	}
	maxPS := 0
	for _, n := range us.PerSecond {
		maxPS = max(maxPS, n)
	}
	nFailed, firstErr := 0, ""
	for _, e := range failed {
		if e != "" {
			nFailed++
			if firstErr == "" {
				firstErr = e
			}
		}
	}
	sorted := slices.Clone(took)
	slices.Sort(sorted)
	pct := func(p float64) time.Duration { return percentile(sorted, p) }
	calls := us.Total
	fmt.Fprintf(w, "| %d | %d | %.1f s | %.1f s | %.1f s | %.1f s | %.1f s | %d | %d | %d | %s |\n",
		k, calls, float64(calls)/realRPS, pct(0.5).Seconds(), pct(0.95).Seconds(), pct(0.99).Seconds(), sorted[len(sorted)-1].Seconds(),
		nFailed, maxPS, us.RateLimited, firstErr)
	return nil
}
