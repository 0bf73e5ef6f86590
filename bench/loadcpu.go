package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/internal/gctune"
	"github.com/workspacenet/facade/internal/gqlclient"
)

// The "under load" measurement: the facade alone in a process of its own,
// driven by this one over loopback HTTP, its CPU time per request read from
// /proc. Unlike the cost table (sequential executions through the handler,
// in the bench's process), it includes the facade's HTTP server and the
// runtime's behaviour with many requests in flight: the setting in which the
// facade is compared with other gateways.

// facadeEnv, when set to an upstream URL, makes the bench binary serve the
// facade (as startFacade does, batched, with the GC pacing of
// facadeGCEnv) instead of running the suite.
const (
	facadeEnv   = "FACADE_BENCH_FACADE"
	facadeGCEnv = "FACADE_BENCH_GC_THRESHOLD_MIB"
	// facadeProfileEnv names the CPU profile the facade child writes over
	// its whole life (-load-cpuprofile).
	facadeProfileEnv = "FACADE_BENCH_CPUPROFILE"
)

// facadeHello is the one line a facade child writes once it listens.
type facadeHello struct {
	URL string `json:"url"`
}

// maybeServeFacade runs the facade child mode when facadeEnv is set and
// reports whether it did.
func maybeServeFacade() bool {
	upstreamURL := os.Getenv(facadeEnv)
	if upstreamURL == "" {
		return false
	}
	threshold, err := strconv.Atoi(os.Getenv(facadeGCEnv))
	if err != nil {
		threshold = gctune.DefaultThresholdMiB
	}
	gctune.Start(threshold, os.Getenv)
	ctx := untilStdinCloses()
	f, err := startFacade(upstreamURL, modeBatched, loaders.DefaultConfig())
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench facade:", err)
		os.Exit(1)
	}
	if name := os.Getenv(facadeProfileEnv); name != "" {
		pf, err := os.Create(name)
		if err == nil {
			err = pprof.StartCPUProfile(pf)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench facade: profile:", err)
			os.Exit(1)
		}
		defer pf.Close()
		defer pprof.StopCPUProfile()
	}
	b, _ := json.Marshal(facadeHello{URL: f.url})
	fmt.Println(string(b))
	<-ctx.Done()
	f.close()
	return true
}

// LoadResult is the under-load measurement: its runs, and the peak RSS
// (VmHWM) of each facade process over all of them.
type LoadResult struct {
	Runs      []LoadCPURun     `json:"runs"`
	PeakRSSKB map[string]int64 `json:"peakRssKB"` // by facade
}

// LoadCPURun is one query against one facade under a closed-loop load.
type LoadCPURun struct {
	Facade      string  `json:"facade"` // "this build", or the program binary given by -load-compare
	Query       string  `json:"query"`
	Tokens      string  `json:"tokens"` // "one" (every request the same credentials) or "per request"
	Conc        int     `json:"conc"`
	LatencyMs   float64 `json:"latencyMs"`
	N           int64   `json:"n"`
	Errors      int64   `json:"errors"`
	FirstErr    string  `json:"firstErr,omitempty"`
	QPS         float64 `json:"qps"`
	CPUMsPerReq float64 `json:"cpuMsPerRequest"`
}

// LoadCPU configures the measurement.
type LoadCPU struct {
	Dur     time.Duration // per run; 0 skips the measurement
	Conc    int
	Latency time.Duration // injected upstream latency
	Tokens  int           // credentials minted for the "per request" runs
	Compare []string      // facade program binaries measured beside this build
	Profile string        // CPU profile of this build's facade process over all runs; "" for none
}

// loadQueries are the suite's queries measured under load (not the
// mutation: thousands of bookings per second would fill the calendar).
var loadQueries = []string{"resource", "orders", "dashboard", "feed", "invoice", "thread"}

// runLoadCPU measures each of queries (those of loadQueries) on each
// facade, alternating facades per query so that drift in the machine's load
// spreads evenly.
func runLoadCPU(ctx context.Context, cfg Config, up *upstream, who http.Header, queries []*benchQuery) (*LoadResult, error) {
	lc := cfg.Load
	if err := up.SetLatency(lc.Latency); err != nil {
		return nil, err
	}
	defer up.SetLatency(0)
	tokens, err := mintTokens(ctx, up, lc.Tokens)
	if err != nil {
		return nil, fmt.Errorf("minting tokens: %w", err)
	}
	type facadeProc struct {
		name string
		url  string
		pid  int
		stop func() error
	}
	var procs []facadeProc
	defer func() {
		for _, p := range procs {
			_ = p.stop()
		}
	}()
	var h facadeHello
	c, err := startChild(&h, facadeEnv+"="+up.url, facadeGCEnv+"="+strconv.Itoa(cfg.GCThresholdMiB), facadeProfileEnv+"="+lc.Profile)
	if err != nil {
		return nil, err
	}
	procs = append(procs, facadeProc{"this build", h.URL, c.pid, c.stop})
	for _, bin := range lc.Compare {
		p, err := startProgram(bin, up.url)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", bin, err)
		}
		procs = append(procs, facadeProc{bin, p.url, p.pid, p.stop})
	}
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * lc.Conc, MaxIdleConns: 2 * lc.Conc}}
	defer hc.CloseIdleConnections()
	out := &LoadResult{PeakRSSKB: map[string]int64{}}
	for _, q := range queries {
		if !slices.Contains(loadQueries, q.Name) {
			continue
		}
		body := requestBody(q)
		for _, variant := range []string{"one", "per request"} {
			for _, p := range procs {
				var next func() http.Header
				if variant == "one" {
					next = func() http.Header { return who }
				} else {
					var i atomic.Int64
					nid := who.Get("service-network-id")
					next = func() http.Header {
						return gqlclient.Credentials("Bearer "+tokens[int(i.Add(1))%len(tokens)], nid)
					}
				}
				r := loadCPURun(ctx, hc, p.url, p.pid, body, next, lc.Conc, lc.Dur)
				r.Facade, r.Query, r.Tokens, r.LatencyMs = p.name, q.Name, variant, ms(lc.Latency)
				cfg.logf("load      %-9s %-12s %-20s c=%d lat=%v cpu/req=%.3fms qps=%.0f n=%d err=%d %s", q.Name, variant, p.name, lc.Conc, lc.Latency, r.CPUMsPerReq, r.QPS, r.N, r.Errors, r.FirstErr)
				if r.N == 0 {
					return nil, fmt.Errorf("%s under load (%s): no answer without errors: %s", q.Name, p.name, r.FirstErr)
				}
				out.Runs = append(out.Runs, r)
			}
		}
	}
	for _, p := range procs {
		out.PeakRSSKB[p.name] = peakRSSKB(strconv.Itoa(p.pid))
	}
	return out, nil
}

// loadCPURun sends body to url from conc clients back to back for dur
// (after a warm-up of 2×conc requests) and returns the requests answered
// without errors and the CPU time process pid spent per request.
func loadCPURun(ctx context.Context, hc *http.Client, url string, pid int, body []byte, who func() http.Header, conc int, dur time.Duration) LoadCPURun {
	var n, errs atomic.Int64
	var firstErr atomic.Value
	ok := []byte(`{"data":`)
	one := func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		for k, v := range who() {
			req.Header[k] = v
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		var b []byte
		if err == nil {
			b, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && (resp.StatusCode != http.StatusOK || !bytes.HasPrefix(b, ok)) {
				err = fmt.Errorf("status %d: %.300s", resp.StatusCode, b)
			}
		}
		if err != nil {
			errs.Add(1)
			firstErr.CompareAndSwap(nil, err.Error())
			return
		}
		n.Add(1)
	}
	var wg sync.WaitGroup
	for range conc { // warm-up: connections, query caches, the heap
		wg.Go(func() { one(); one() })
	}
	wg.Wait()
	n.Store(0)
	errs.Store(0)
	c0 := procCPU(pid)
	t0 := time.Now()
	for range conc {
		wg.Go(func() {
			for ctx.Err() == nil && time.Since(t0) < dur {
				one()
			}
		})
	}
	wg.Wait()
	el := time.Since(t0)
	c1 := procCPU(pid)
	r := LoadCPURun{Conc: conc, N: n.Load(), Errors: errs.Load()}
	if s, _ := firstErr.Load().(string); s != "" {
		r.FirstErr = s
	}
	if r.N > 0 {
		r.QPS = float64(r.N) / el.Seconds()
		r.CPUMsPerReq = ms(c1-c0) / float64(r.N)
	}
	return r
}

// procCPU is the user + system CPU time of process pid (/proc/<pid>/stat,
// in clock ticks of 10 ms).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 { // state is field 3 of stat: f[0]; utime, stime: fields 14, 15
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// mintTokens asks the upstream for n access tokens of the demo client
// (client_credentials), for the runs that send a new token per request.
func mintTokens(ctx context.Context, up *upstream, n int) ([]string, error) {
	tokens := make([]string, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	per := (n + 7) / 8
	for w := range 8 {
		wg.Go(func() {
			for i := w * per; i < min(n, (w+1)*per); i++ {
				t, err := mintToken(ctx, up)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				tokens[i] = t
			}
		})
	}
	wg.Wait()
	return tokens, first
}

func mintToken(ctx context.Context, up *upstream) (string, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, up.url+"/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", up.manifest.BasicAuth)
	resp, err := up.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var t struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return "", fmt.Errorf("%s: %.200s", resp.Status, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&t); err != nil || t.AccessToken == "" {
		return "", fmt.Errorf("token response: %v", err)
	}
	return t.AccessToken, nil
}

// program is a facade program binary (-load-compare) serving on a loopback
// port with the flags every version of the program has.
type program struct {
	url  string
	pid  int
	stop func() error
}

// startProgram runs bin as the facade over upstreamURL with no pacing and
// no response cache (as startFacade), waiting at most 30 s for its port.
func startProgram(bin, upstreamURL string) (*program, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "-addr", addr, "-upstream", upstreamURL, "-upstream-rps", "0", "-cache-ttl", "",
		"-playground=false", "-log-level", "error")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() error {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
			return nil
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			return <-done
		}
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return &program{url: "http://" + addr + "/graphql", pid: cmd.Process.Pid, stop: stop}, nil
		}
	}
	_ = stop()
	return nil, fmt.Errorf("no listener on %s within 30 s", addr)
}

// loadTable renders the under-load runs, with this build's CPU per request
// as a ratio of each other facade's.
func loadTable(res *LoadResult) string {
	var b strings.Builder
	if res == nil || len(res.Runs) == 0 {
		return ""
	}
	runs := res.Runs
	fmt.Fprintf(&b, "| query | tokens | facade | CPU ms/request | this build ÷ it | requests/s | requests | errors |\n|---|---|---|---:|---:|---:|---:|---:|\n")
	self := map[[2]string]float64{}
	for _, r := range runs {
		if r.Facade == "this build" {
			self[[2]string{r.Query, r.Tokens}] = r.CPUMsPerReq
		}
	}
	for _, r := range runs {
		ratio := "–"
		if s := self[[2]string{r.Query, r.Tokens}]; r.Facade != "this build" && r.CPUMsPerReq > 0 {
			ratio = fmt.Sprintf("%.2f×", s/r.CPUMsPerReq)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.3f | %s | %.0f | %d | %d |\n", r.Query, r.Tokens, r.Facade, r.CPUMsPerReq, ratio, r.QPS, r.N, r.Errors)
	}
	b.WriteString("\nPeak RSS (VmHWM) of each facade process over these runs:")
	for i, name := range slices.Sorted(maps.Keys(res.PeakRSSKB)) {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s %.1f MiB", name, float64(res.PeakRSSKB[name])/1024)
	}
	b.WriteString(".\n")
	return b.String()
}
