package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/workspacenet/facade/bench/floor"
	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/internal/testsupport/childproc"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
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
// (VmHWM) of each server process over all of them.
type LoadResult struct {
	Runs      []LoadCPURun     `json:"runs"`
	PeakRSSKB map[string]int64 `json:"peakRssKB"` // by server
	// With LoadCPU.Mem: each server's resident set at its peak, and this
	// build's runtime memory classes at its own.
	PeakProc    map[string]procMem `json:"peakProc,omitempty"`
	PeakRuntime *runtimeMem        `json:"peakRuntime,omitempty"`
}

// LoadCPURun is one query against one server under a closed-loop load;
// LatRun's CPUMsPerQ is the server process's alone.
type LoadCPURun struct {
	// Facade is the server: "this build", "floor" (bench/floor), Tailcall
	// (-load-compare-tailcall, by its version), or a program binary given by
	// -load-compare.
	Facade string `json:"facade"`
	Query  string `json:"query"`
	Tokens string `json:"tokens"` // "one" (every request the same credentials) or "per request"
	Round  int    `json:"round,omitempty"`
	// Calls is the upstream calls the server made for one request of the
	// query sent alone, read from the REST service's counters before the
	// runs.
	Calls int64 `json:"calls,omitempty"`
	LatRun
}

// LoadCPU configures the measurement.
type LoadCPU struct {
	Dur     time.Duration // per run; 0 skips the measurement
	Conc    int
	Latency time.Duration // injected upstream latency
	Tokens  int           // credentials minted for the "per request" runs
	// Rounds is the interleaved rounds of a query measured on more than one
	// server (this build and the floor, Tailcall or -load-compare's
	// builds): each round runs every server once, in reverse order every
	// other round; the table gives each server's medians. 0 means 1.
	Rounds   int
	Compare  []string // facade program binaries measured beside this build
	Tailcall string   // the Tailcall binary measured beside this build on floorQueries; "" for none
	Profile  string   // CPU profile of this build's facade process over all runs; "" for none
	Mem      bool     // break each server's peak RSS down (loadmem.go; the sampling adds a little CPU)
	// MemProfile, with Mem, is the prefix of the profiles of this build's
	// facade taken halfway through each of its first round's runs
	// (fetchProfiles).
	MemProfile string
}

// loadQueries are the suite's queries measured under load (not the
// mutation: thousands of bookings per second would fill the calendar).
var loadQueries = []string{"resource", "orders", "dashboard", "feed", "invoice", "thread"}

// floorQueries are the queries bench/floor and the Tailcall configuration
// (tailcall.graphql) answer.
var floorQueries = []string{"resource", "orders"}

// tokenVariants are the credentials of the runs: the demo credentials on
// every request, or a new token per request.
var tokenVariants = []string{"one", "per request"}

// The servers beside this build.
const (
	thisBuild = "this build"
	floorName = "floor"
)

// loadServer is one server measured under load, in a process of its own.
type loadServer struct {
	name string
	gql  *gqlclient.Client
	proc *childproc.Process
	// queries and tokens are the queries it answers and the token variants
	// it runs; nil: all.
	queries, tokens []string
	// check is how its answer to a query must match this build's: "bytes"
	// (identical), "data" (the same data), "data, enums as upstream" (the
	// same data, an enum value possibly spelled as the REST API spells
	// it), or "" (a difference is only logged: another build may answer
	// differently on purpose).
	check string
}

func (s *loadServer) runs(query, tokens string) bool {
	return (s.queries == nil || slices.Contains(s.queries, query)) && (s.tokens == nil || slices.Contains(s.tokens, tokens))
}

// floorEnv, when set to an upstream URL, makes the bench binary serve
// bench/floor over it (with the program's GC settings, stack.SetGC, as
// the facade child) instead of running the suite.
const floorEnv = "FACADE_BENCH_FLOOR"

// maybeServeFloor runs the floor child mode when floorEnv is set and
// reports whether it did.
func maybeServeFloor() bool {
	upstreamURL := os.Getenv(floorEnv)
	if upstreamURL == "" {
		return false
	}
	stack.SetGC(os.Getenv)
	ctx := childproc.ParentGone()
	err := func() error {
		f, err := floor.New(upstreamURL)
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		hs := &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = hs.Serve(ln) }()
		if err := childproc.Announce(facadeHello{URL: "http://" + ln.Addr().String() + "/graphql"}); err != nil {
			return err
		}
		<-ctx.Done()
		return hs.Close()
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench floor:", err)
		os.Exit(1)
	}
	return true
}

// runLoadCPU measures each of queries (those of loadQueries) on this build
// and on the servers beside it: the floor (bench/floor) and Tailcall on
// floorQueries with a new token per request, and -load-compare's builds on
// every query with both token variants. Before a query's runs, each server
// answers it once alone: the answer is checked against this build's and its
// upstream calls are counted. A query measured on more than one server runs lc.Rounds
// interleaved rounds, so that drift in the machine's load spreads evenly.
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
	fl := &loadFleet{}
	defer fl.stop()
	if err := fl.start(lc, up, who, queries); err != nil {
		return nil, err
	}
	var peaks procPeaks
	if lc.Mem {
		var pids []int
		for _, s := range fl.servers {
			pids = append(pids, s.proc.Pid)
		}
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		go peaks.watch(wctx, pids)
	}
	out := &LoadResult{PeakRSSKB: map[string]int64{}}
	for _, q := range queries {
		if !slices.Contains(loadQueries, q.Name) {
			continue
		}
		runs, err := fl.measure(ctx, cfg, up, q, tokens, who.Get("service-network-id"))
		if err != nil {
			return nil, err
		}
		out.Runs = append(out.Runs, runs...)
	}
	for _, s := range fl.servers {
		out.PeakRSSKB[s.name] = peakRSSKB(strconv.Itoa(s.proc.Pid))
	}
	if lc.Mem {
		out.PeakProc = map[string]procMem{}
		for _, s := range fl.servers {
			out.PeakProc[s.name] = peaks.of(s.proc.Pid)
		}
		m, err := fetchMemPeak(fl.hello.MemURL)
		if err != nil {
			return nil, fmt.Errorf("this build's memory at its peak: %w", err)
		}
		out.PeakRuntime = &m
	}
	return out, nil
}

// loadFleet is the servers measured under load: this build first (child,
// which said hello), then those beside it.
type loadFleet struct {
	servers []*loadServer
	child   *childproc.Process
	hello   facadeHello
}

// stop stops every server started.
func (fl *loadFleet) stop() {
	for _, s := range fl.servers {
		_ = s.proc.Stop()
	}
}

// start starts this build, then the floor and Tailcall when queries holds
// one of floorQueries, then -load-compare's builds, each on up.
func (fl *loadFleet) start(lc LoadCPU, up *upstream, who http.Header, queries []*benchQuery) error {
	memEnv := ""
	if lc.Mem {
		memEnv = "1"
	}
	child, err := childproc.StartSelf(&fl.hello, time.Minute, nil, facadeEnv+"="+up.url,
		facadeProfileEnv+"="+lc.Profile, facadeMemEnv+"="+memEnv)
	if err != nil {
		return err
	}
	fl.child = child
	fl.servers = append(fl.servers, &loadServer{name: thisBuild, gql: newGQLClient(fl.hello.URL, who), proc: child})
	measured := slices.ContainsFunc(queries, func(q *benchQuery) bool { return slices.Contains(floorQueries, q.Name) })
	if measured {
		var fh facadeHello
		p, err := childproc.StartSelf(&fh, time.Minute, nil, floorEnv+"="+up.url)
		if err != nil {
			return fmt.Errorf("floor: %w", err)
		}
		// A new token per request only: with one token, the facade shares
		// identical GETs in flight between requests, which the floor does not.
		fl.servers = append(fl.servers, &loadServer{name: floorName, gql: newGQLClient(fh.URL, who), proc: p, queries: floorQueries,
			tokens: []string{"per request"}, check: "bytes"})
	}
	if lc.Tailcall != "" && measured {
		name, url, p, err := startTailcall(lc.Tailcall, up.url)
		if err != nil {
			return fmt.Errorf("tailcall: %w", err)
		}
		fl.servers = append(fl.servers, &loadServer{name: name, gql: newGQLClient(url, who), proc: p, queries: floorQueries,
			tokens: []string{"per request"}, check: "data, enums as upstream"})
	}
	for _, bin := range lc.Compare {
		url, proc, err := startProgram(bin, up.url)
		if err != nil {
			return fmt.Errorf("%s: %w", bin, err)
		}
		fl.servers = append(fl.servers, &loadServer{name: bin, gql: newGQLClient(url, who), proc: proc})
	}
	return nil
}

// measure checks q's answers, then runs it under load with each token
// variant on the servers that run it (tokens: those minted, in network nid),
// in interleaved rounds when more than one does.
func (fl *loadFleet) measure(ctx context.Context, cfg Config, up *upstream, q *benchQuery, tokens []string, nid string) ([]LoadCPURun, error) {
	body := requestBody(q)
	calls, err := checkAnswers(ctx, cfg, up, fl.servers, q.Name, body)
	if err != nil {
		return nil, err
	}
	var runs []LoadCPURun
	for _, variant := range tokenVariants {
		header := func() http.Header { return nil } // the client's: who
		if variant == "per request" {
			var i atomic.Int64
			header = func() http.Header { return gqlclient.Credentials("Bearer "+tokens[int(i.Add(1))%len(tokens)], nid) }
		}
		var these []*loadServer
		for _, s := range fl.servers {
			if s.runs(q.Name, variant) {
				these = append(these, s)
			}
		}
		rounds := 1
		if len(these) > 1 {
			rounds = max(cfg.Load.Rounds, 1)
		}
		for round := range rounds {
			order := slices.Clone(these)
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, s := range order {
				r, err := fl.run(ctx, cfg, s, q.Name, variant, round, rounds, body, header)
				if err != nil {
					return nil, err
				}
				r.Calls = calls[s.name]
				runs = append(runs, r)
			}
		}
	}
	return runs, nil
}

// run is one run of query (request body) on s with the token variant's
// headers, in round of rounds, after a warm-up; this build's profiles are
// taken halfway through its first round, when asked.
func (fl *loadFleet) run(ctx context.Context, cfg Config, s *loadServer, query, variant string, round, rounds int, body []byte, header func() http.Header) (LoadCPURun, error) {
	lc := cfg.Load
	cpu := func() time.Duration { return procCPU(s.proc.Pid) }
	build := func() []byte { return body }
	send := func(ctx context.Context, body []byte) (time.Duration, error) {
		_, took, err := exchange(ctx, s.gql, body, header())
		return took, err
	}
	closedLoop(ctx, lc.Conc, 0, 2*lc.Conc, cpu, build, send) // warm-up: connections, caches, heap
	// This build's profiles, halfway through its first round's run.
	var profiled chan error
	if lc.MemProfile != "" && s.proc == fl.child && round == 0 {
		prefix := fmt.Sprintf("%s.%s.%s", lc.MemProfile, query, strings.ReplaceAll(variant, " ", "-"))
		profiled = make(chan error, 1)
		time.AfterFunc(lc.Dur/2, func() { profiled <- fetchProfiles(fl.hello.MemURL, prefix) })
	}
	r := LoadCPURun{Facade: s.name, Query: query, Tokens: variant, Round: round + 1,
		LatRun: closedLoop(ctx, lc.Conc, lc.Dur, 1, cpu, build, send)}
	if profiled != nil {
		if err := <-profiled; err != nil {
			return r, fmt.Errorf("profiles of %s under load: %w", query, err)
		}
	}
	r.LatencyMs = ms(lc.Latency)
	cfg.logf("load      %-9s %-12s %-20s round %d/%d c=%d lat=%v cpu/req=%.3fms qps=%.0f p50=%.2fms n=%d err=%d %s", query, variant, s.name, round+1, rounds, lc.Conc, lc.Latency, r.CPUMsPerQ, r.QPS, r.P50Ms, r.N, r.Errors, r.FirstErr)
	if r.N == 0 {
		return r, fmt.Errorf("%s under load (%s): no answer without errors: %s", query, s.name, r.FirstErr)
	}
	return r, nil
}

// checkAnswers sends body (query's request) once to each server that
// answers it, alone, with the demo credentials, and returns each one's
// upstream calls, counted by the REST service. An answer with errors, or
// one that does not match this build's as the server's check requires, is
// an error; a mismatch of a server without a check is logged.
func checkAnswers(ctx context.Context, cfg Config, up *upstream, servers []*loadServer, query string, body []byte) (map[string]int64, error) {
	calls := map[string]int64{}
	var want *gqlclient.Response
	for _, s := range servers {
		if s.queries != nil && !slices.Contains(s.queries, query) {
			continue
		}
		if err := up.ResetStats(); err != nil {
			return nil, err
		}
		r, _, err := exchange(ctx, s.gql, body, nil)
		if err != nil {
			return nil, fmt.Errorf("%s on %s: %w", query, s.name, err)
		}
		st, err := up.Stats()
		if err != nil {
			return nil, err
		}
		calls[s.name] = st.Total
		if want == nil { // this build, first
			want = r
			continue
		}
		if diff := answerDiff(want, r, s.check); diff != "" {
			if s.check == "" {
				cfg.logf("load      %s: %s answers differently from this build: %s", query, s.name, diff)
				continue
			}
			return nil, fmt.Errorf("%s: %s does not answer as this build (%s): %s", query, s.name, s.check, diff)
		}
	}
	return calls, nil
}

// answerDiff describes how got differs from want under check (loadServer's),
// or returns "" when it matches.
func answerDiff(want, got *gqlclient.Response, check string) string {
	if check == "bytes" {
		if !bytes.Equal(want.Raw, got.Raw) {
			return fmt.Sprintf("answer\n  %.300s\nwant\n  %.300s", got.Raw, want.Raw)
		}
		return ""
	}
	var w, g any
	if json.Unmarshal(want.Data, &w) != nil || json.Unmarshal(got.Data, &g) != nil {
		return "data is not JSON"
	}
	return jsonDiff("data", w, g, check == "data, enums as upstream")
}

// jsonDiff returns the path of the first difference between decoded JSON
// values want and got, with both values, or "" when they are equal. With
// foldEnums, a string of want spelled as a GraphQL enum value (IN_PROGRESS)
// equals its REST API spelling (inProgress).
func jsonDiff(path string, want, got any, foldEnums bool) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			break
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			if d := jsonDiff(path+"."+k, w[k], g[k], foldEnums); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			break
		}
		for i := range w {
			if d := jsonDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], foldEnums); d != "" {
				return d
			}
		}
		return ""
	case string:
		g, ok := got.(string)
		if ok && (g == w || foldEnums && w == strings.ToUpper(w) && strings.ReplaceAll(w, "_", "") == strings.ToUpper(g)) {
			return ""
		}
	default:
		if reflect.DeepEqual(want, got) {
			return ""
		}
	}
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	return fmt.Sprintf("%s is %.200s, want %.200s", path, gb, wb)
}

//go:embed tailcall.graphql
var tailcallConfig string

// startTailcall runs the Tailcall binary bin (`bin start CONFIG`) with
// tailcall.graphql over the REST service at upstreamURL, on a loopback port
// of its own, its logs at level error and its usage tracking off. It
// returns Tailcall's name with its version (`bin --version`), the GraphQL
// endpoint's URL and the process. bin may be a script that execs Tailcall,
// so that the process measured is Tailcall's.
func startTailcall(bin, upstreamURL string) (string, string, *childproc.Process, error) {
	v, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "", "", nil, fmt.Errorf("%s --version: %w", bin, err)
	}
	name := "Tailcall " + strings.TrimPrefix(strings.TrimSpace(string(v)), "tailcall ")
	addr, err := freeAddr()
	if err != nil {
		return "", "", nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	const serverPort = "@server(port: 8000)"
	if strings.Count(tailcallConfig, serverPort) != 1 {
		return "", "", nil, fmt.Errorf("tailcall.graphql: want %s once", serverPort)
	}
	dir, err := os.MkdirTemp("", "bench-tailcall")
	if err != nil {
		return "", "", nil, err
	}
	defer os.RemoveAll(dir) // read at start
	config := filepath.Join(dir, "tailcall.graphql")
	if err := os.WriteFile(config, []byte(strings.Replace(tailcallConfig, serverPort, "@server(port: "+port+", hostname: \"127.0.0.1\")", 1)), 0o644); err != nil {
		return "", "", nil, err
	}
	cmd := exec.Command(bin, "start", config)
	cmd.Env = append(os.Environ(), "BENCH_UPSTREAM="+upstreamURL, "TAILCALL_LOG_LEVEL=error", "TAILCALL_TRACKER=false")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	p, err := childproc.Start(cmd)
	if err != nil {
		return "", "", nil, err
	}
	if err := waitListening(addr, p); err != nil {
		return "", "", nil, err
	}
	return name, "http://" + addr + "/graphql", p, nil
}

// freeAddr returns a loopback address with a port free at the time of the
// call.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitListening waits at most 30 s for a listener on addr, p's; it stops p
// when none comes.
func waitListening(addr string, p *childproc.Process) error {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
	}
	_ = p.Stop()
	return fmt.Errorf("no listener on %s within 30 s", addr)
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
	addr, err := freeAddr()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin, "-addr", addr, "-upstream", upstreamURL, "-upstream-rps", "0", "-cache-ttl", "",
		"-playground=false", "-log-level", "error")
	cmd.Stderr = os.Stderr
	p, err := childproc.Start(cmd)
	if err != nil {
		return "", nil, err
	}
	if err := waitListening(addr, p); err != nil {
		return "", nil, err
	}
	return "http://" + addr + "/graphql", p, nil
}

// loadTable renders the under-load runs: per query, token variant and
// server, the medians over its rounds of the CPU per request and of the
// requests per second, each as this build's ÷ the server's; then this
// build against the floor, and each server's peak RSS.
func loadTable(res *LoadResult) string {
	var b strings.Builder
	if res == nil || len(res.Runs) == 0 {
		return ""
	}
	type key struct{ query, tokens, server string }
	type row struct {
		key
		cpu, qps      []float64
		n, errs       int
		calls, rounds int64
	}
	var rows []*row
	byKey := map[key]*row{}
	for _, r := range res.Runs {
		k := key{r.Query, r.Tokens, r.Facade}
		w := byKey[k]
		if w == nil {
			w = &row{key: k}
			byKey[k] = w
			rows = append(rows, w)
		}
		w.cpu, w.qps = append(w.cpu, r.CPUMsPerQ), append(w.qps, r.QPS)
		w.n, w.errs, w.calls = w.n+r.N, w.errs+r.Errors, r.Calls
		w.rounds++
	}
	// rows are in the order of their first runs: in each group this
	// build's first (runLoadCPU's first round runs the servers in order).
	ratio := func(this, it float64) string {
		if this <= 0 || it <= 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f×", this/it)
	}
	callsText := func(n int64) string {
		if n == 0 {
			return "–"
		}
		return strconv.FormatInt(n, 10)
	}
	fmt.Fprintf(&b, "| query | tokens | server | upstream calls | CPU ms/request | this build ÷ it | requests/s | this build ÷ it | rounds | requests | errors |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var floors []string
	for _, w := range rows {
		cpu, qps := median(slices.Clone(w.cpu)), median(slices.Clone(w.qps))
		cpuRatio, qpsRatio := "–", "–"
		if self := byKey[key{w.query, w.tokens, thisBuild}]; self != nil && w.server != thisBuild {
			cpuRatio, qpsRatio = ratio(median(slices.Clone(self.cpu)), cpu), ratio(median(slices.Clone(self.qps)), qps)
			if w.server == floorName {
				floors = append(floors, fmt.Sprintf("%s: CPU per request %s, requests/s %s", w.query, cpuRatio, qpsRatio))
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.3f | %s | %.0f | %s | %d | %d | %d |\n", w.query, w.tokens, w.server, callsText(w.calls), cpu, cpuRatio, qps, qpsRatio, w.rounds, w.n, w.errs)
	}
	if len(floors) > 0 {
		fmt.Fprintf(&b, "\nThis build ÷ the floor (medians, a new token per request): %s.\n", strings.Join(floors, "; "))
	}
	b.WriteString("\nPeak RSS (VmHWM) of each server process over these runs:")
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

// rounds is the most rounds any query of res ran.
func rounds(res *LoadResult) int {
	n := 0
	for _, r := range res.Runs {
		n = max(n, r.Round)
	}
	return n
}
