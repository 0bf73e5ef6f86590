package stack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/workspacenet/facade/graph/trusted"
	"github.com/workspacenet/facade/internal/policy/metrics"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver/hooks"
	"github.com/workspacenet/facade/stack"
)

// The README's demo ids (deterministic demo data): a desk with a parent, and
// the invoice with every item type.
const (
	deskID    = "f302cbe6-4927-49a2-baca-cbeb3a5f0274"
	invoiceID = "1c1947f8-ebbd-42b3-8c5f-47ac147bf4bb"
)

// TestMetricsScrape starts the stack as `go run . -metrics-addr
// 127.0.0.1:0` does, runs a known workload, scrapes /metrics over HTTP on
// the separate listener and checks the counts against the workload and the
// local service's own per-route counters (/_stats), and that the exposition
// lints clean and names no credential or id.
func TestMetricsScrape(t *testing.T) {
	// The service's own rate limit is off so that the only 429 is the one
	// injected below; the facade's budget stays on (its wait is measured).
	// The resources' cache TTL is long so the repeat is a hit however slow
	// the machine.
	cfg, err := stack.ParseFlags([]string{"-data-dir=", "-metrics-addr=127.0.0.1:0", "-demo-rate-limit=0", "-cache-ttl=resources=1h"},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	st, base := testenv.Serve(t, cfg, nil)
	if st.MetricsURL == "" || strings.Contains(st.MetricsURL, ":0/") {
		t.Fatalf("MetricsURL = %q, want the address actually listened on", st.MetricsURL)
	}
	m := st.Embedded.Manifest
	hc := &http.Client{}
	gc := &gqlclient.Client{URL: base + "/graphql", HTTP: hc, Header: gqlclient.Credentials("Bearer "+m.BearerToken, m.NetworkID)}
	cacheHits := 0
	query := func(doc string, vars map[string]any) *gqlclient.Response {
		t.Helper()
		r, err := gc.Post(context.Background(), gqlclient.Request{Query: doc, Variables: vars}, http.Header{"X-Upstream-Trace": {"1"}})
		if err != nil {
			t.Fatal(err)
		}
		var rep struct{ CacheHits int }
		if raw := r.Extensions["upstream"]; raw != nil {
			if err := json.Unmarshal(raw, &rep); err != nil {
				t.Fatal(err)
			}
		}
		cacheHits += rep.CacheHits
		return r
	}

	// The workload: InvoiceDetail; FirstQuery twice (the repeat answered by
	// the cache); FirstQuery of another resource answered 429 once.
	if r := query(queries.Invoice, map[string]any{"id": invoiceID}); len(r.Errors) > 0 {
		t.Fatalf("InvoiceDetail: %s", r.Raw)
	}
	first := query(queries.First, map[string]any{"id": deskID})
	var desk struct {
		Resource struct{ Parent struct{ ID string } }
	}
	if err := json.Unmarshal(first.Data, &desk); err != nil || len(first.Errors) > 0 || desk.Resource.Parent.ID == "" {
		t.Fatalf("FirstQuery: %v %s", err, first.Raw)
	}
	hitsBefore := cacheHits
	if r := query(queries.First, map[string]any{"id": deskID}); len(r.Errors) > 0 || cacheHits-hitsBefore != 2 {
		t.Fatalf("repeated FirstQuery: %d cache hits, want 2: %s", cacheHits-hitsBefore, r.Raw)
	}
	var other string
	for _, id := range m.IDs["resource"] {
		if id != deskID && id != desk.Resource.Parent.ID {
			other = id
		}
	}
	// Retry-After beyond the request's deadline: the call is not retried.
	st.Embedded.Server.Hooks().SetFault(restclient.OpGetResource.Pattern(), hooks.Fault{Kind: hooks.Fault429, Rate: 1, RetryAfter: time.Hour})
	if r := query(queries.First, map[string]any{"id": other}); len(r.Errors) != 1 || r.Errors[0].Code() != "RATE_LIMITED" {
		t.Fatalf("FirstQuery answered 429: want one RATE_LIMITED, got %s", r.Raw)
	}
	var stats struct {
		Routes   map[string]float64
		Injected map[string]map[string]float64
	}
	getJSON(t, hc, st.UpstreamURL+"/_stats", &stats)

	// The main listener does not serve /metrics: it has a listener of its own.
	if res, err := hc.Get(base + "/metrics"); err != nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /metrics on the GraphQL listener: %v %v, want 404", res.StatusCode, err)
	}
	res, err := hc.Get(st.MetricsURL)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", st.MetricsURL, res.StatusCode, err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("exposition does not parse: %v", err)
	}
	val := func(name string, labels map[string]string) float64 { return sample(fams, name, labels) }

	// GraphQL requests by operation and outcome.
	for _, c := range []struct {
		name, code string
		want       float64
	}{{"FirstQuery", "ok", 2}, {"FirstQuery", "RATE_LIMITED", 1}, {"InvoiceDetail", "ok", 1}} {
		l := map[string]string{"operation_type": "query", "operation_name": c.name, "code": c.code}
		if got := val("facade_graphql_requests_total", l); got != c.want {
			t.Errorf("facade_graphql_requests_total%v = %v, want %v", l, got, c.want)
		}
		if got := val("facade_graphql_request_duration_seconds", l); got != c.want {
			t.Errorf("facade_graphql_request_duration_seconds_count%v = %v, want %v", l, got, c.want)
		}
	}
	if got := val("facade_graphql_errors_total", map[string]string{"code": "RATE_LIMITED"}); got != 1 {
		t.Errorf("facade_graphql_errors_total{RATE_LIMITED} = %v, want 1", got)
	}

	// Upstream calls by route: the service's counts, on both sides.
	var total float64
	for _, op := range restclient.Operations() {
		l := map[string]string{"method": op.Method, "route": op.Route}
		want := stats.Routes[op.Pattern()]
		total += want
		calls := val("facade_upstream_calls_total", l) + val("facade_upstream_retries_total", l)
		if calls != want {
			t.Errorf("%s: facade_upstream_calls_total + retries = %v, the service counted %v", op.Pattern(), calls, want)
		}
		if got := val("restserver_http_requests_total", l); got != want {
			t.Errorf("%s: restserver_http_requests_total = %v, the service counted %v", op.Pattern(), got, want)
		}
	}
	if total < 6 {
		t.Fatalf("the service counted %v calls, want the workload's (at least 6): %v", total, stats.Routes)
	}
	if got := val("facade_upstream_budget_wait_seconds", nil); got != total {
		t.Errorf("facade_upstream_budget_wait_seconds_count = %v, want one per call sent (%v)", got, total)
	}
	res429 := map[string]string{"method": "GET", "route": restclient.OpGetResource.Route}
	if got, injected := val("facade_upstream_rate_limited_total", res429), stats.Injected[restclient.OpGetResource.Pattern()]["429"]; got != 1 || injected != 1 {
		t.Errorf("facade_upstream_rate_limited_total = %v, the service injected %v 429s; want 1 and 1", got, injected)
	}
	if got := val("facade_upstream_calls_total", map[string]string{"route": restclient.OpGetResource.Route, "status_class": "4xx"}); got != 1 {
		t.Errorf("facade_upstream_calls_total{4xx} = %v, want the 429", got)
	}
	if got := val("restserver_http_requests_total", map[string]string{"route": restclient.OpGetResource.Route, "status_class": "4xx"}); got != 1 {
		t.Errorf("restserver_http_requests_total{4xx} = %v, want the 429", got)
	}

	// The cache: every resource fetched was a miss; the hits are those the
	// call reports showed.
	if got := val("facade_cache_lookups_total", map[string]string{"family": "resources", "result": "hit"}); got != float64(cacheHits) || got < 2 {
		t.Errorf("cache hits = %v, the call reports showed %d (want at least 2)", got, cacheHits)
	}
	if got, want := val("facade_cache_lookups_total", map[string]string{"family": "resources", "result": "miss"}), stats.Routes[restclient.OpGetResource.Pattern()]; got != want {
		t.Errorf("cache misses = %v, want the resources fetched, %v", got, want)
	}

	// Breakers, loaders, admission, runtime.
	if n := series(fams, "facade_upstream_breaker_state"); n != len(restclient.Operations()) {
		t.Errorf("facade_upstream_breaker_state has %d series, want one per operation (%d)", n, len(restclient.Operations()))
	}
	if got := val("facade_upstream_breaker_state", res429); got != 0 {
		t.Errorf("breaker state after a 429 = %v, want 0 (closed: a 429 opens nothing)", got)
	}
	if got := val("facade_loader_batch_size", map[string]string{"loader": "resource"}); got == 0 {
		t.Error("facade_loader_batch_size{loader=resource} observed no batch")
	}
	if got := val("facade_admission_cost_limit", nil); got != float64(cfg.Graph.MaxCostInFlight) {
		t.Errorf("facade_admission_cost_limit = %v, want %d", got, cfg.Graph.MaxCostInFlight)
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "facade_graphql_requests_in_flight", "facade_upstream_budget_clients"} {
		if series(fams, name) == 0 {
			t.Errorf("%s is missing", name)
		}
	}

	// Bounded labels: no credential, network id or record id anywhere.
	for _, secret := range []string{m.BearerToken, m.NetworkID, deskID, invoiceID, other, desk.Resource.Parent.ID} {
		if bytes.Contains(body, []byte(secret)) {
			t.Errorf("the exposition contains %q", secret)
		}
	}
	// Prometheus conventions: the served exposition and the registry lint clean.
	if problems, err := promlint.New(bytes.NewReader(body)).Lint(); err != nil || len(problems) > 0 {
		t.Errorf("promlint of /metrics: %v %v", err, problems)
	}
	if problems, err := testutil.GatherAndLint(st.MetricsRegistry); err != nil || len(problems) > 0 {
		t.Errorf("GatherAndLint: %v %v", err, problems)
	}
}

// TestMetricsAddrDefault: metrics are on by default in demo mode only, at
// metrics.DefaultAddr, and -metrics-addr= turns them off.
func TestMetricsAddrDefault(t *testing.T) {
	none := func(string) string { return "" }
	for _, c := range []struct {
		args     []string
		env      map[string]string
		want     string
		optional bool
	}{
		{nil, nil, metrics.DefaultAddr, true},
		{[]string{"-metrics-addr="}, nil, "", false},
		{[]string{"-upstream=http://127.0.0.1:1"}, nil, "", false},
		{[]string{"-upstream=http://127.0.0.1:1", "-metrics-addr=:9100"}, nil, ":9100", false},
		{nil, map[string]string{"METRICS_ADDR": "127.0.0.1:9200"}, "127.0.0.1:9200", false},
	} {
		getenv := none
		if c.env != nil {
			getenv = func(k string) string { return c.env[k] }
		}
		cfg, err := stack.ParseFlags(c.args, getenv, io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if cfg.MetricsAddr != c.want || cfg.MetricsOptional != c.optional {
			t.Errorf("%v %v: MetricsAddr %q optional %v, want %q %v", c.args, c.env, cfg.MetricsAddr, cfg.MetricsOptional, c.want, c.optional)
		}
	}
}

// TestMetricsAddrInUse: an address given explicitly that cannot be listened
// on fails the start; the demo default only turns metrics off.
func TestMetricsAddrInUse(t *testing.T) {
	held, _ := start(t, nil, nil, "-metrics-addr=127.0.0.1:0")
	addr := strings.TrimSuffix(strings.TrimPrefix(held.MetricsURL, "http://"), "/metrics")
	cfg, err := stack.ParseFlags([]string{"-data-dir=", "-metrics-addr=" + addr}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := stack.Start(context.Background(), cfg, nil); err == nil {
		st.Close()
		t.Fatalf("Start with metrics on a busy %s succeeded", addr)
	}
	cfg.MetricsOptional = true
	st, err := stack.Start(context.Background(), cfg, nil)
	if err != nil {
		t.Fatalf("Start with the optional (demo default) address busy: %v", err)
	}
	defer st.Close()
	if st.Metrics != nil || st.MetricsURL != "" {
		t.Fatalf("metrics on although the address was busy: %q", st.MetricsURL)
	}
}

func getJSON(t *testing.T, hc *http.Client, url string, v any) {
	t.Helper()
	res, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

// sample sums the values of name's series whose labels include labels: a
// counter's or gauge's value, a histogram's count.
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	var sum float64
	for _, m := range f.Metric {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.Label {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

func series(fams map[string]*dto.MetricFamily, name string) int {
	if f := fams[name]; f != nil {
		return len(f.Metric)
	}
	return 0
}

// TestMetricsRefusalsAndTrustedNames: a call refused by the per-request cap
// is counted as refused, not as an upstream call; with trusted documents the
// operation_name label is the document's operation name.
func TestMetricsRefusalsAndTrustedNames(t *testing.T) {
	docs := filepath.Join(t.TempDir(), "docs.json")
	raw, _ := json.Marshal(map[string]string{trusted.Hash(queries.First): queries.First})
	if err := os.WriteFile(docs, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	st, base := start(t, nil, nil, "-metrics-addr=127.0.0.1:0", "-max-upstream-calls=1", "-upstream-rps=0", "-trusted-documents="+docs)
	m := st.Embedded.Manifest
	gc := &gqlclient.Client{URL: base + "/graphql", Header: gqlclient.Credentials("Bearer "+m.BearerToken, m.NetworkID)}
	r, err := gc.Post(context.Background(), gqlclient.Request{DocumentID: "sha256:" + trusted.Hash(queries.First), Variables: map[string]any{"id": deskID}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Codes(); len(c) != 1 || c[0] != "REQUEST_LIMIT_EXCEEDED" {
		t.Fatalf("FirstQuery with a cap of 1 call: %s", r.Raw)
	}
	var stats struct{ Total float64 }
	getJSON(t, http.DefaultClient, st.UpstreamURL+"/_stats", &stats)
	fams := scrape(t, st.MetricsURL)
	if got := sample(fams, "facade_upstream_calls_refused_total", map[string]string{"reason": "call_cap"}); got != 1 {
		t.Errorf("refused{call_cap} = %v, want 1", got)
	}
	if got := sample(fams, "facade_upstream_calls_total", nil); got != stats.Total || got != 1 {
		t.Errorf("facade_upstream_calls_total = %v, the service counted %v; want 1", got, stats.Total)
	}
	l := map[string]string{"operation_type": "query", "operation_name": "FirstQuery", "code": "REQUEST_LIMIT_EXCEEDED"}
	if got := sample(fams, "facade_graphql_requests_total", l); got != 1 {
		t.Errorf("facade_graphql_requests_total%v = %v, want 1", l, got)
	}
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}
