package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/childproc"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/restserver"
	"github.com/workspacenet/facade/restserver/hooks"
	"github.com/workspacenet/facade/stack"
)

// childEnv, when set to a demo scale, makes the bench binary (or the test
// binary, see TestMain) serve the upstream REST service instead of running the
// suite: the parent re-executes itself with it so that the facade's CPU and
// allocations, measured in the parent, exclude the REST service's.
const childEnv = "FACADE_BENCH_UPSTREAM"

// childHello is the one line a child writes to stdout once it listens.
type childHello struct {
	URL      string                   `json:"url"`
	Manifest *restserver.DemoManifest `json:"manifest"`
}

// maybeServeUpstream runs the child mode when childEnv is set and reports
// whether it did. The child serves until its stdin closes (the parent exited
// or closed the pipe), so it never outlives the bench.
func maybeServeUpstream() bool {
	v := os.Getenv(childEnv)
	if v == "" {
		return false
	}
	scale, err := strconv.Atoi(v)
	if err != nil || scale < 1 {
		fmt.Fprintf(os.Stderr, "bench upstream: bad %s=%q\n", childEnv, v)
		os.Exit(2)
	}
	ctx := childproc.ParentGone()
	up, err := startUpstreamInProcess(scale)
	if err == nil {
		err = childproc.Announce(childHello{URL: up.url, Manifest: up.manifest})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench upstream:", err)
		os.Exit(1)
	}
	<-ctx.Done()
	_ = up.Close()
	return true
}

// upstream is a running local REST service, controlled over loopback HTTP:
// GET/DELETE /_stats (per-route counters) and PUT /_bench/latency?d=20ms.
type upstream struct {
	url      string
	manifest *restserver.DemoManifest
	hc       *http.Client
	pid      int // child process id; 0 when in-process
	close    func() error
}

// Close stops the service.
func (u *upstream) Close() error { return u.close() }

// benchControl adds the bench's controls in front of the REST service's
// handler: PUT /_bench/latency?d= (every route), PUT /_bench/ratelimit?n=
// (requests per second per client, 0 = off), and PUT /_bench/timings?on=
// (true/false) with GET /_bench/timings (hooks.Timings: each request's
// injected sleep and handler time since the last DELETE /_stats).
func benchControl(h *hooks.Hooks) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("/", next)
		mux.HandleFunc("PUT /_bench/latency", func(w http.ResponseWriter, r *http.Request) {
			d, err := time.ParseDuration(r.URL.Query().Get("d"))
			if err != nil || d < 0 {
				http.Error(w, "bad d", http.StatusBadRequest)
				return
			}
			h.ClearLatencies()
			h.SetLatency(hooks.AllRoutes, hooks.Latency{Fixed: d})
			w.WriteHeader(http.StatusNoContent)
		})
		mux.HandleFunc("PUT /_bench/ratelimit", func(w http.ResponseWriter, r *http.Request) {
			n, err := strconv.Atoi(r.URL.Query().Get("n"))
			if err != nil || n < 0 {
				http.Error(w, "bad n", http.StatusBadRequest)
				return
			}
			h.SetRateLimit(hooks.RateLimit{PerSecond: n})
			w.WriteHeader(http.StatusNoContent)
		})
		mux.HandleFunc("PUT /_bench/timings", func(w http.ResponseWriter, r *http.Request) {
			on, err := strconv.ParseBool(r.URL.Query().Get("on"))
			if err != nil {
				http.Error(w, "bad on", http.StatusBadRequest)
				return
			}
			h.RecordTimings(on)
			w.WriteHeader(http.StatusNoContent)
		})
		mux.HandleFunc("GET /_bench/timings", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(h.Timings())
		})
		return mux
	}
}

// startUpstreamFor starts the upstream cfg asks for (a child process or this
// one) and finds the suite's fixtures in its demo data with who, the demo
// Bearer credentials. The caller closes the upstream.
func startUpstreamFor(ctx context.Context, cfg Config) (up *upstream, who http.Header, fx *fixtures, err error) {
	start := startUpstreamInProcess
	if cfg.Child {
		start = startUpstreamChild
	}
	if up, err = start(cfg.Scale); err != nil {
		return nil, nil, nil, fmt.Errorf("upstream: %w", err)
	}
	who = gqlclient.Credentials("Bearer "+up.manifest.BearerToken, up.manifest.NetworkID)
	if fx, err = findFixtures(ctx, up, who); err != nil {
		up.Close()
		return nil, nil, nil, err
	}
	return up, who, fx, nil
}

// startUpstreamInProcess serves the REST service (in-memory SQLite, demo data
// at scale) on a loopback listener of this process, as stack does.
func startUpstreamInProcess(scale int) (*upstream, error) {
	h := hooks.New()
	// The bench reads and resets the counters over HTTP (/_stats).
	up, err := stack.StartUpstream(context.Background(), stack.UpstreamConfig{DemoScale: scale, Hooks: h, Middleware: benchControl(h),
		TestEndpoints: true})
	if err != nil {
		return nil, err
	}
	return &upstream{url: up.URL, manifest: up.Manifest, hc: newLoopbackClient(), close: up.Close}, nil
}

// startUpstreamChild re-executes this binary in upstream mode and waits (at
// most 2 minutes: demo data generation) for it to listen.
func startUpstreamChild(scale int) (*upstream, error) {
	var h childHello
	c, err := childproc.StartSelf(&h, 2*time.Minute, nil, childEnv+"="+strconv.Itoa(scale))
	if err != nil {
		return nil, err
	}
	return &upstream{url: h.URL, manifest: h.Manifest, hc: newLoopbackClient(), pid: c.Pid, close: c.Stop}, nil
}

func newLoopbackClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 128, MaxIdleConns: 128}}
}

// SetLatency sets the injected latency of every route.
func (u *upstream) SetLatency(d time.Duration) error {
	return u.put("/_bench/latency?d="+d.String(), "set latency")
}

// SetRateLimit sets the upstream's per-client rate limit (0 = off).
func (u *upstream) SetRateLimit(n int) error {
	return u.put("/_bench/ratelimit?n="+strconv.Itoa(n), "set rate limit")
}

// RecordTimings turns the upstream's timing log on or off.
func (u *upstream) RecordTimings(on bool) error {
	return u.put("/_bench/timings?on="+strconv.FormatBool(on), "record timings")
}

// put sends PUT path (one of the bench handler's settings), which answers
// 204; what names the setting in the error.
func (u *upstream) put(path, what string) error {
	req, _ := http.NewRequest(http.MethodPut, u.url+path, nil)
	resp, err := u.hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("%s: %s", what, resp.Status)
	}
	return nil
}

// Timings returns the upstream's timing log since the last ResetStats.
func (u *upstream) Timings() ([]hooks.Timing, error) {
	var ts []hooks.Timing
	resp, err := u.hc.Get(u.url + "/_bench/timings")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("timings: %s", resp.Status)
	}
	return ts, json.NewDecoder(resp.Body).Decode(&ts)
}

// Stats returns the per-route counters since the last ResetStats.
func (u *upstream) Stats() (hooks.Stats, error) {
	var s hooks.Stats
	resp, err := u.hc.Get(u.url + "/_stats")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("stats: %s", resp.Status)
	}
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

// ResetStats zeroes the counters.
func (u *upstream) ResetStats() error {
	req, _ := http.NewRequest(http.MethodDelete, u.url+"/_stats", nil)
	resp, err := u.hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("reset stats: %s", resp.Status)
	}
	return nil
}
