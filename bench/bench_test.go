package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/workspacenet/facade/bench/floor"
	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
)

// TestSuiteCallsEqualMinimum runs the whole suite in its smallest form (one
// latency, a handful of executions per run) and checks the call counts, which
// do not depend on timing: the batched facade makes exactly the minimum calls
// the data requires, and fewer than the naive baseline wherever the baseline
// is above the minimum. It asserts no timings.
func TestSuiteCallsEqualMinimum(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the REST service and the facade")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	memPrefix := filepath.Join(t.TempDir(), "mem")
	res, err := Run(ctx, Config{
		Scale: 1, Latencies: []time.Duration{0}, Conc: []int{2}, Sweep: []int{1, 2}, Waits: []time.Duration{0},
		Dur: time.Millisecond, MinN: 2, CostDur: time.Millisecond, CostMinN: 2, Child: true,
		Load: LoadCPU{Dur: 20 * time.Millisecond, Conc: 2, Tokens: 3, Mem: true, MemProfile: memPrefix}, CritPathN: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Queries) != 7 {
		t.Fatalf("%d queries, want 7", len(res.Queries))
	}
	var totalBatched, totalNaive int64
	for _, q := range res.Queries {
		b, n := callsAt(q, modeBatched, "0"), callsAt(q, modeNaive, "0")
		totalBatched += b
		totalNaive += n
		if q.MinCalls < 1 || q.Rounds < 1 {
			t.Errorf("%s: minimum %d calls in %d rounds", q.Name, q.MinCalls, q.Rounds)
		}
		if b != int64(q.MinCalls) {
			t.Errorf("%s: batched facade made %d upstream calls, minimum is %d\n  minimum: %s\n  made:    %s",
				q.Name, b, q.MinCalls, formatRoutes(q.MinByRoute), formatRoutes(q.Modes[modeBatched].CallsByRoute))
		}
		if n < b || (n > int64(q.MinCalls) && b >= n) {
			t.Errorf("%s: batched %d calls, naive %d", q.Name, b, n)
		}
		for _, mode := range modes {
			m := q.Modes[mode]
			if m.Cost == nil || m.Cost.N < 2 || m.Cost.AllocsPerQ <= 0 {
				t.Errorf("%s %s: cost not measured: %+v", q.Name, mode, m.Cost)
			}
			for _, r := range m.Runs {
				if r.Errors > 0 || r.N < r.Conc {
					t.Errorf("%s %s: run %+v", q.Name, mode, r)
				}
			}
		}
	}
	// The critical-path decomposition: every traced request reported the
	// minimum calls, each matched to the REST service's timing log.
	for _, q := range res.Queries {
		cp := q.Modes[modeBatched].CritPath["0"]
		if cp == nil || cp.N != 2 || len(cp.Requests) != 2 {
			t.Errorf("%s: critical path %+v", q.Name, cp)
			continue
		}
		for _, d := range cp.Requests {
			if d.Calls != q.MinCalls || !d.Matched || d.CritPath <= 0 {
				t.Errorf("%s: decomposition %+v, want %d calls matched", q.Name, d, q.MinCalls)
			}
		}
		n := 0
		for _, r := range cp.ByRoute {
			n += r.Calls
		}
		if n != 2*q.MinCalls {
			t.Errorf("%s: %d calls by route, want %d", q.Name, n, 2*q.MinCalls)
		}
	}
	if totalBatched >= totalNaive {
		t.Errorf("batched %d calls in total, naive %d", totalBatched, totalNaive)
	}
	if want := map[string]int{"dashboard": 2, "invoice": 2, "feed": 2, "thread": 1, "booking": 2, "resource": 1, "orders": 2}; true {
		for _, q := range res.Queries {
			if q.Rounds != want[q.Name] {
				t.Errorf("%s: %d dependent rounds, want %d", q.Name, q.Rounds, want[q.Name])
			}
		}
	}
	// Under load: every query but the mutation, with one token and with a
	// token per request, answered without errors by the facade child; the
	// resource and the orders with a token per request also by the floor
	// child, which answered them as this build (checkAnswers, before the
	// runs) with as many calls.
	if res.Load == nil || res.Load.PeakRSSKB["this build"] <= 0 || res.Load.PeakRSSKB["floor"] <= 0 {
		t.Fatalf("under load: %+v", res.Load)
	}
	runs := map[string]int{}
	calls := map[[2]string]int64{}
	for _, r := range res.Load.Runs {
		runs[r.Facade]++
		if r.N < r.Conc || r.Errors > 0 || r.Round != 1 || r.Calls < 1 || r.Facade == "floor" && (!slices.Contains(floorQueries, r.Query) || r.Tokens != "per request") {
			t.Errorf("under load: %+v", r)
		}
		if c, ok := calls[[2]string{r.Query, r.Tokens}]; ok && c != r.Calls {
			t.Errorf("under load: %s made %d calls, this build %d", r.Facade, r.Calls, c)
		}
		calls[[2]string{r.Query, r.Tokens}] = r.Calls
	}
	if runs["this build"] != 2*len(loadQueries) || runs["floor"] != len(floorQueries) || len(runs) != 2 {
		t.Errorf("runs under load by server: %v", runs)
	}
	// -load-mem: the facade's resident set at its peak, its runtime's
	// memory classes, its profiles halfway through a run.
	if m := res.Load.PeakProc["this build"]; m.RSS <= 0 || m.Anon <= 0 || m.File <= 0 || m.Anon+m.File > m.RSS+1024 {
		t.Errorf("this build's resident set at its peak: %+v", m)
	}
	if m := res.Load.PeakRuntime; m == nil || m.Proc.RSS <= 0 || m.HeapObjects == 0 || m.Stacks == 0 || m.Total < m.HeapObjects+m.Stacks || m.Goroutines == 0 {
		t.Errorf("this build's runtime at its peak: %+v", m)
	}
	if b, err := os.ReadFile(memPrefix + ".resource.one.goroutine.txt"); err != nil || !strings.HasPrefix(string(b), "goroutine profile: total ") {
		t.Errorf("goroutines under load: %v %.100q", err, b)
	}
	if f, err := os.Open(memPrefix + ".feed.per-request.heap.pprof"); err != nil {
		t.Error(err)
	} else {
		p, err := profile.Parse(f)
		f.Close()
		if err != nil || p.SampleType[len(p.SampleType)-1].Type != "inuse_space" {
			t.Errorf("heap profile under load: %v", err)
		}
	}
	if res.FacadeRSSKB <= 0 || res.UpstreamRSSKB <= 0 {
		t.Errorf("peak RSS facade %d KB, upstream %d KB", res.FacadeRSSKB, res.UpstreamRSSKB)
	}

	// The report and the plots render from these results.
	dir := t.TempDir()
	files, err := writePlots(res, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("plot %s: %v", f, err)
		}
	}
	md := filepath.Join(dir, "B.md")
	if err := os.WriteFile(md, []byte("# Title\n\nprose before\n\n"+markBegin+"\nold\n"+markEnd+"\nprose after\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeMarkdown(md, markdown(res, res, files)); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(md)
	s := string(b)
	for _, want := range []string{"prose before", "prose after", "| dashboard |", "Δ CPU", "feed", "## Facade under load", "| orders | per request | this build | 2 |", "| resource | per request | floor | 1 |", "This build ÷ the floor (medians, a new token per request): resource: CPU per request ", "## Where the time goes", "| p50 − measured path |", "| feed | `GET /transactions/money/v1` |"} {
		if !strings.Contains(s, want) {
			t.Errorf("BENCHMARKS.md lacks %q", want)
		}
	}
	if strings.Contains(s, "\nold\n") || strings.Count(s, markBegin) != 1 {
		t.Errorf("generated section not replaced:\n%s", s)
	}
}

func TestNeedsKeepEarliestRound(t *testing.T) {
	n := needs{}
	n.add(routeInvoice, "a", 3, routeCreditNotes)
	n.add(routeInvoice, "a", 1, "")
	n.add(routeResource, "r", 2, routeTransactions)
	n.add(routeResource, "r", 2, routeInvoice)
	n.add(routeTransactions, "", 1, "")
	if n.Calls() != 3 || n.Rounds() != 2 {
		t.Fatalf("calls %d rounds %d, want 3 and 2", n.Calls(), n.Rounds())
	}
	if got := n.ByRoute(); got[routeInvoice] != 1 || got[routeResource] != 1 || got[routeTransactions] != 1 {
		t.Fatalf("by route %v", got)
	}
	// The invoice's round-3 parent is forgotten with its round; both of
	// the resource's round-2 parents are kept.
	deps := n.Deps()
	if d := deps[routeInvoice]; !d.Root || len(d.From) != 0 {
		t.Errorf("invoice deps %+v, want root only", d)
	}
	if d := deps[routeResource]; d.Root || !slices.Equal(d.From, []string{routeInvoice, routeTransactions}) {
		t.Errorf("resource deps %+v, want from the invoice and the transactions", d)
	}
}

func TestPercentileNearestRank(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i))
	}
	for p, want := range map[float64]time.Duration{0.5: 50, 0.95: 95, 0.99: 99, 1: 100} {
		if got := percentile(s, p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if percentile(nil, 0.5) != 0 {
		t.Error("empty")
	}
}

// TestObservabilityOverheadRuns runs `-observability-overhead` with one
// tiny round, so the mode does not rot: every configuration is measured,
// the metrics rows recorded every request, the tracing rows exported spans
// and the others none, and the table and verdicts render. It asserts no
// timings and no cost ratios.
func TestObservabilityOverheadRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the REST service and the facade")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o, err := observabilityOverhead(ctx, Config{Scale: 1, CostDur: time.Millisecond, CostMinN: 2, Child: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Rows) != len(obsConfigs) {
		t.Fatalf("%d rows, want %d", len(o.Rows), len(obsConfigs))
	}
	for _, r := range o.Rows {
		metricsOn := r.Config == obsMetrics || r.Config == obsBoth
		traced := r.Config == obsTracing || r.Config == obsBoth
		if len(r.Runs) != 1 || r.Median.N < 2 || r.Median.AllocsPerQ <= 0 || r.Median.CPUMsPerQuery <= 0 {
			t.Errorf("%s: not measured: %+v", r.Config, r)
		}
		if metricsOn && (r.Executed < r.Median.N || r.Recorded != r.Executed) {
			t.Errorf("%s: metrics recorded %d of %d requests", r.Config, r.Recorded, r.Executed)
		}
		if !metricsOn && r.Recorded+r.Executed != 0 {
			t.Errorf("%s: metrics recorded %d requests with metrics off", r.Config, r.Recorded)
		}
		// The dashboard traced: a server span, loader spans, a client span per upstream call.
		if traced != (r.SpansPerQ >= 3) {
			t.Errorf("%s: %.1f spans per query", r.Config, r.SpansPerQ)
		}
	}
	var b strings.Builder
	o.Print(&b)
	for _, want := range []string{"| baseline: metrics off, tracing off |", "| metrics on |", "| tracing on, 100 % sampled |", "| metrics and tracing on |", "- metrics, target", "- tracing off, target", "- tracing on, "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}

// TestProfileOwner: a CPU sample counts for the innermost frame outside the
// standard library.
func TestProfileOwner(t *testing.T) {
	sample := func(names ...string) *profile.Sample { // innermost first
		s := &profile.Sample{}
		for _, n := range names {
			s.Location = append(s.Location, &profile.Location{Line: []profile.Line{{Function: &profile.Function{Name: n}}}})
		}
		return s
	}
	for want, s := range map[string]*profile.Sample{
		"metrics": sample("runtime.mallocgc", "time.Now", "github.com/workspacenet/facade/internal/policy/metrics.(*Facade).StartRequest", "github.com/workspacenet/facade/graph.(*Handler).ServeHTTP"),
		"tracing": sample("sync.(*Mutex).Lock", "go.opentelemetry.io/otel/sdk/trace.(*tracer).Start", "github.com/workspacenet/facade/restclient.startCallSpan"),
		"":        sample("runtime.mallocgc", "github.com/99designs/gqlgen/graphql/executor.(*Executor).Exec", "go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp.(*middleware).serveHTTP"),
		"none":    sample("runtime.gcBgMarkWorker"),
	} {
		if want == "none" {
			want = ""
		}
		if got := owner(s); got != want {
			t.Errorf("owner(%v) = %q, want %q", s.Location[0].Line[0].Function.Name, got, want)
		}
	}
}

// TestFloorAnswersAsTheFacade: bench/floor answers the suite's resource and
// orders queries (its query texts are the suite's) with the facade's answer,
// byte for byte, making the same upstream calls, route by route.
func TestFloorAnswersAsTheFacade(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the REST service and the facade")
	}
	if floor.ResourceQuery != resourceQuery || floor.OrdersQuery != ordersQuery {
		t.Fatal("bench/floor's queries are not the suite's resourceQuery and ordersQuery")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	up, who, fx, err := startUpstreamFor(ctx, Config{Scale: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	f, err := startFacade(up.url, modeBatched, loaders.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	fl, err := floor.New(up.url)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(fl)
	defer hs.Close()
	servers := []*loadServer{{name: thisBuild, gql: newGQLClient(f.url, who)}, {name: floorName, gql: newGQLClient(hs.URL+"/graphql", who), check: "bytes"}}
	for _, q := range suite(fx) {
		if !slices.Contains(floorQueries, q.Name) {
			continue
		}
		body := requestBody(q)
		var answers [][]byte
		var routes []map[string]int64
		for _, s := range servers {
			if err := up.ResetStats(); err != nil {
				t.Fatal(err)
			}
			r, _, err := exchange(ctx, s.gql, body, nil)
			if err != nil {
				t.Fatalf("%s on %s: %v", q.Name, s.name, err)
			}
			st, err := up.Stats()
			if err != nil {
				t.Fatal(err)
			}
			answers, routes = append(answers, r.Raw), append(routes, st.Routes)
		}
		if !bytes.Equal(answers[0], answers[1]) {
			t.Errorf("%s: the floor answers\n  %s\nthe facade\n  %s", q.Name, answers[1], answers[0])
		}
		if !maps.Equal(routes[0], routes[1]) || len(routes[0]) == 0 {
			t.Errorf("%s: the floor's calls %v, the facade's %v", q.Name, routes[1], routes[0])
		}
		// What the data needs (ordersNeeds): the orders, then their location's product list.
		if want := map[string]map[string]int64{"resource": {routeResource: 1}, "orders": {routeOrders: 1, routeProducts: 1}}[q.Name]; !maps.Equal(routes[1], want) {
			t.Errorf("%s: the floor's calls %v, want %v", q.Name, routes[1], want)
		}
		// The bench's own check before its runs agrees.
		if calls, err := checkAnswers(ctx, Config{}, up, servers, q.Name, body); err != nil || calls[floorName] != calls[thisBuild] {
			t.Errorf("%s: checkAnswers: %v %v", q.Name, calls, err)
		}
	}
}

// TestAnswerDiff: the check of a server's answer against this build's
// finds a different value, a missing key and a longer list, and an enum
// spelled as the REST API spells it only where allowed.
func TestAnswerDiff(t *testing.T) {
	resp := func(s string) *gqlclient.Response {
		return &gqlclient.Response{Raw: []byte(s), Data: json.RawMessage(s[len(`{"data":`) : len(s)-1])}
	}
	want := resp(`{"data":{"o":[{"status":"IN_PROGRESS","n":1006,"p":null}]}}`)
	for _, tc := range []struct {
		got, check, diff string
	}{
		{`{"data":{"o":[{"status":"IN_PROGRESS","n":1006,"p":null}]}}`, "bytes", ""},
		{`{"data":{"o":[{"n":1006,"status":"IN_PROGRESS","p":null}]}}`, "bytes", "answer"},
		{`{"data":{"o":[{"n":1006,"status":"IN_PROGRESS","p":null}]}}`, "data", ""},
		{`{"data":{"o":[{"status":"inProgress","n":1006,"p":null}]}}`, "data", `data.o[0].status is "inProgress", want "IN_PROGRESS"`},
		{`{"data":{"o":[{"status":"inProgress","n":1006,"p":null}]}}`, "data, enums as upstream", ""},
		{`{"data":{"o":[{"status":"canceled","n":1006,"p":null}]}}`, "data, enums as upstream", `data.o[0].status is "canceled"`},
		{`{"data":{"o":[{"status":"IN_PROGRESS","n":1007,"p":null}]}}`, "data", `data.o[0].n is 1007, want 1006`},
		{`{"data":{"o":[{"status":"IN_PROGRESS","n":1006}]}}`, "data", `data.o[0] is`},
		{`{"data":{"o":[{"status":"IN_PROGRESS","n":1006,"p":null},{}]}}`, "data", `data.o is`},
	} {
		if d := answerDiff(want, resp(tc.got), tc.check); (tc.diff == "") != (d == "") || !strings.HasPrefix(d, tc.diff) {
			t.Errorf("%s, %s: %q, want %q", tc.got, tc.check, d, tc.diff)
		}
	}
}

// TestBenchmarksPageHoldsTheGeneratedBlockAsWritten: BENCHMARKS.md has one
// generated block, and its sections are the ones markdown() renders from
// bench/results.json, in its order, so nothing hand-written sits inside the
// markers where the next run would drop it. (The text within a section is
// the generator's of the run that wrote it.)
func TestBenchmarksPageHoldsTheGeneratedBlockAsWritten(t *testing.T) {
	raw, err := os.ReadFile("../BENCHMARKS.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	if strings.Count(page, markBegin) != 1 || strings.Count(page, markEnd) != 1 || strings.Index(page, markBegin) > strings.Index(page, markEnd) {
		t.Fatalf("BENCHMARKS.md: want one %q before one %q", markBegin, markEnd)
	}
	block := page[strings.Index(page, markBegin) : strings.Index(page, markEnd)+len(markEnd)]
	b, err := os.ReadFile("results.json")
	if err != nil {
		t.Fatal(err)
	}
	res := new(Results)
	if err := json.Unmarshal(b, res); err != nil {
		t.Fatal(err)
	}
	var plots []string
	for _, m := range regexp.MustCompile(`(?m)^!\[[^\]]*\]\(docs/bench/([^)]+)\)$`).FindAllStringSubmatch(block, -1) {
		plots = append(plots, m[1])
	}
	headings := regexp.MustCompile(`(?m)^##+ .*$`)
	got, want := headings.FindAllString(block, -1), headings.FindAllString(markdown(res, nil, plots), -1)
	if !slices.Equal(got, want) {
		t.Errorf("BENCHMARKS.md's generated block has the sections\n%q\nwhere bench/report.go renders\n%q\nfrom bench/results.json: hand-written sections inside the markers are lost on the next run", got, want)
	}
	if !strings.HasPrefix(block, markBegin+"\n\n## Run\n") {
		t.Errorf("BENCHMARKS.md: the generated block does not start with its Run section")
	}
}
