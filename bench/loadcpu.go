package main

import (
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
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/internal/childproc"
	"github.com/workspacenet/facade/internal/gqlclient"
	"github.com/workspacenet/facade/stack"
)

// The "under load" measurement: the facade alone in a process of its own,
// driven by this one over loopback HTTP, its CPU time per request read from
// /proc. Unlike the cost table (sequential executions through the handler,
// in the bench's process), it includes the facade's HTTP server and the
// runtime's behaviour with many requests in flight: the setting in which the
// facade is compared with other gateways.

// facadeEnv, when set to an upstream URL, makes the bench binary serve the
// facade (as startFacade does, batched, with the program's GC pacing,
// stack.SetGC) instead of running the suite.
const (
	facadeEnv = "FACADE_BENCH_FACADE"
	// facadeProfileEnv names the CPU profile the facade child writes over
	// its whole life (-load-cpuprofile).
	facadeProfileEnv = "FACADE_BENCH_CPUPROFILE"
)

// facadeHello is the one line a facade child writes once it listens.
type facadeHello struct {
	URL    string `json:"url"`
	MemURL string `json:"memUrl,omitempty"` // with facadeMemEnv: serveMemPeak's
}

// maybeServeFacade runs the facade child mode when facadeEnv is set and
// reports whether it did.
func maybeServeFacade() bool {
	upstreamURL := os.Getenv(facadeEnv)
	if upstreamURL == "" {
		return false
	}
	stack.SetGC(os.Getenv)
	ctx := childproc.ParentGone()
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
	hello := facadeHello{URL: f.url}
	if os.Getenv(facadeMemEnv) == "1" {
		if hello.MemURL, err = serveMemPeak(ctx, new(memPeak)); err != nil {
			fmt.Fprintln(os.Stderr, "bench facade:", err)
			os.Exit(1)
		}
	}
	if err := childproc.Announce(hello); err != nil {
		fmt.Fprintln(os.Stderr, "bench facade:", err)
		os.Exit(1)
	}
	<-ctx.Done()
	f.close()
	return true
}

// LoadResult is the under-load measurement: its runs, and the peak RSS
// (VmHWM) of each facade process over all of them.
type LoadResult struct {
	Runs      []LoadCPURun     `json:"runs"`
	PeakRSSKB map[string]int64 `json:"peakRssKB"` // by facade
	// With LoadCPU.Mem: each facade's resident set at its peak, and this
	// build's runtime memory classes at its own.
	PeakProc    map[string]procMem `json:"peakProc,omitempty"`
	PeakRuntime *runtimeMem        `json:"peakRuntime,omitempty"`
}

// LoadCPURun is one query against one facade under a closed-loop load;
// LatRun's CPUMsPerQ is the facade process's alone.
type LoadCPURun struct {
	Facade string `json:"facade"` // "this build", or the program binary given by -load-compare
	Query  string `json:"query"`
	Tokens string `json:"tokens"` // "one" (every request the same credentials) or "per request"
	LatRun
}

// LoadCPU configures the measurement.
type LoadCPU struct {
	Dur     time.Duration // per run; 0 skips the measurement
	Conc    int
	Latency time.Duration // injected upstream latency
	Tokens  int           // credentials minted for the "per request" runs
	Compare []string      // facade program binaries measured beside this build
	Profile string        // CPU profile of this build's facade process over all runs; "" for none
	Mem     bool          // break each facade's peak RSS down (loadmem.go; the sampling adds a little CPU)
	// MemProfile, with Mem, is the prefix of the profiles of this build's
	// facade taken halfway through each of its runs (fetchProfiles).
	MemProfile string
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
	type facade struct {
		name string
		gql  *gqlclient.Client
		proc *childproc.Process
	}
	var facades []facade
	defer func() {
		for _, f := range facades {
			_ = f.proc.Stop()
		}
	}()
	var h facadeHello
	memEnv := ""
	if lc.Mem {
		memEnv = "1"
	}
	child, err := childproc.StartSelf(&h, time.Minute, nil, facadeEnv+"="+up.url,
		facadeProfileEnv+"="+lc.Profile, facadeMemEnv+"="+memEnv)
	if err != nil {
		return nil, err
	}
	facades = append(facades, facade{"this build", newGQLClient(h.URL, who), child})
	for _, bin := range lc.Compare {
		url, proc, err := startProgram(bin, up.url)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", bin, err)
		}
		facades = append(facades, facade{bin, newGQLClient(url, who), proc})
	}
	var peaks procPeaks
	if lc.Mem {
		var pids []int
		for _, f := range facades {
			pids = append(pids, f.proc.Pid)
		}
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		go peaks.watch(wctx, pids)
	}
	nid := who.Get("service-network-id")
	out := &LoadResult{PeakRSSKB: map[string]int64{}}
	for _, q := range queries {
		if !slices.Contains(loadQueries, q.Name) {
			continue
		}
		body := requestBody(q)
		for _, variant := range []string{"one", "per request"} {
			header := func() http.Header { return nil } // the client's: who
			if variant == "per request" {
				var i atomic.Int64
				header = func() http.Header { return gqlclient.Credentials("Bearer "+tokens[int(i.Add(1))%len(tokens)], nid) }
			}
			for _, f := range facades {
				cpu := func() time.Duration { return procCPU(f.proc.Pid) }
				build := func() []byte { return body }
				send := func(ctx context.Context, body []byte) (time.Duration, error) {
					_, took, err := exchange(ctx, f.gql, body, header())
					return took, err
				}
				closedLoop(ctx, lc.Conc, 0, 2*lc.Conc, cpu, build, send) // warm-up: connections, caches, heap
				// This build's profiles, halfway through its run.
				var profiled chan error
				if lc.MemProfile != "" && f.proc == child {
					prefix := fmt.Sprintf("%s.%s.%s", lc.MemProfile, q.Name, strings.ReplaceAll(variant, " ", "-"))
					profiled = make(chan error, 1)
					time.AfterFunc(lc.Dur/2, func() { profiled <- fetchProfiles(h.MemURL, prefix) })
				}
				r := LoadCPURun{Facade: f.name, Query: q.Name, Tokens: variant, LatRun: closedLoop(ctx, lc.Conc, lc.Dur, 1, cpu, build, send)}
				if profiled != nil {
					if err := <-profiled; err != nil {
						return nil, fmt.Errorf("profiles of %s under load: %w", q.Name, err)
					}
				}
				r.LatencyMs = ms(lc.Latency)
				cfg.logf("load      %-9s %-12s %-20s c=%d lat=%v cpu/req=%.3fms qps=%.0f p50=%.2fms n=%d err=%d %s", q.Name, variant, f.name, lc.Conc, lc.Latency, r.CPUMsPerQ, r.QPS, r.P50Ms, r.N, r.Errors, r.FirstErr)
				if r.N == 0 {
					return nil, fmt.Errorf("%s under load (%s): no answer without errors: %s", q.Name, f.name, r.FirstErr)
				}
				out.Runs = append(out.Runs, r)
			}
		}
	}
	for _, f := range facades {
		out.PeakRSSKB[f.name] = peakRSSKB(strconv.Itoa(f.proc.Pid))
	}
	if lc.Mem {
		out.PeakProc = map[string]procMem{}
		for _, f := range facades {
			out.PeakProc[f.name] = peaks.of(f.proc.Pid)
		}
		m, err := fetchMemPeak(h.MemURL)
		if err != nil {
			return nil, fmt.Errorf("this build's memory at its peak: %w", err)
		}
		out.PeakRuntime = &m
	}
	return out, nil
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
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range tokens {
		g.Go(func() (err error) {
			tokens[i], err = mintToken(ctx, up)
			return err
		})
	}
	return tokens, g.Wait()
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

// startProgram runs bin, a facade program binary (-load-compare), as the
// facade over upstreamURL on a loopback port, with the flags every version
// of the program has: no pacing and no response cache (as startFacade). It
// waits at most 30 s for the port and returns the GraphQL endpoint's URL.
func startProgram(bin, upstreamURL string) (string, *childproc.Process, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "-addr", addr, "-upstream", upstreamURL, "-upstream-rps", "0", "-cache-ttl", "",
		"-playground=false", "-log-level", "error")
	cmd.Stderr = os.Stderr
	p, err := childproc.Start(cmd)
	if err != nil {
		return "", nil, err
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr + "/graphql", p, nil
		}
	}
	_ = p.Stop()
	return "", nil, fmt.Errorf("no listener on %s within 30 s", addr)
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
			self[[2]string{r.Query, r.Tokens}] = r.CPUMsPerQ
		}
	}
	for _, r := range runs {
		ratio := "–"
		if s := self[[2]string{r.Query, r.Tokens}]; r.Facade != "this build" && r.CPUMsPerQ > 0 {
			ratio = fmt.Sprintf("%.2f×", s/r.CPUMsPerQ)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.3f | %s | %.0f | %d | %d |\n", r.Query, r.Tokens, r.Facade, r.CPUMsPerQ, ratio, r.QPS, r.N, r.Errors)
	}
	b.WriteString("\nPeak RSS (VmHWM) of each facade process over these runs:")
	for i, name := range slices.Sorted(maps.Keys(res.PeakRSSKB)) {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s %.1f MiB", name, float64(res.PeakRSSKB[name])/1024)
	}
	b.WriteString(".\n")
	b.WriteString(memLines(res))
	return b.String()
}
