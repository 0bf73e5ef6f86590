package graph_test

import (
	"encoding/json"
	"github.com/workspacenet/facade/restclient"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

var uuidRE = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

type upstreamReport struct {
	Count int `json:"count"`
	Calls []struct {
		Method     string   `json:"method"`
		Path       string   `json:"path"`
		Status     int      `json:"status"`
		DurationMs *float64 `json:"durationMs"`
	} `json:"calls"`
}

var traceOn = map[string]string{graph.TraceHeader: "1"}

// TestUpstreamReport: X-Upstream-Trace: 1 returns extensions.upstream
// matching the upstream's own counters, with route templates and no
// credentials; without the header, or with the report disabled, there is none.
func TestUpstreamReport(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	creds := env.Bearer()
	vars := map[string]any{"locationId": env.ID(t, "location", 0)}

	env.ResetCalls()
	r := env.Do(t, creds, queries.Dashboard, vars, traceOn)
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %+v", r.Errors)
	}
	counts, total := env.Calls()
	raw, ok := r.Extensions["upstream"]
	if !ok {
		t.Fatalf("no extensions.upstream: %v", r.Extensions)
	}
	if strings.Contains(string(raw), env.Manifest.BearerToken) || strings.Contains(string(raw), "Bearer") || strings.Contains(string(raw), env.Manifest.NetworkID) {
		t.Fatalf("the report carries credentials: %s", raw)
	}
	var rep upstreamReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if int64(rep.Count) != total || len(rep.Calls) != rep.Count || total < 5 {
		t.Fatalf("report count %d with %d calls; upstream counted %d", rep.Count, len(rep.Calls), total)
	}
	byRoute := map[string]int64{}
	for _, c := range rep.Calls {
		byRoute[c.Method+" "+c.Path]++
		if uuidRE.MatchString(c.Path) || strings.Contains(c.Path, "?") {
			t.Errorf("path is not a route template: %s", c.Path)
		}
		if c.Status != 200 || c.DurationMs == nil || *c.DurationMs < 0 {
			t.Errorf("call %+v", c)
		}
	}
	for k, n := range counts {
		if byRoute[k] != n {
			t.Errorf("route %s: report %d, upstream %d", k, byRoute[k], n)
		}
	}
	if byRoute[restclient.OpGetResource.Pattern()] == 0 { // reported as the template "/resources/v1/{id}"
		t.Errorf("no templated resource call in %v", byRoute)
	}

	// A failed call is reported with its status.
	r = env.Do(t, creds, `query($id: ID!) { resource(id: $id) { id } }`, map[string]any{"id": unknownUUID}, traceOn)
	if err := json.Unmarshal(r.Extensions["upstream"], &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Count != 1 || rep.Calls[0].Status != 404 || rep.Calls[0].Path != restclient.OpGetResource.Route {
		t.Errorf("report of a 404: %+v", rep)
	}

	// No header, another header value: no report.
	for _, h := range []map[string]string{nil, {graph.TraceHeader: "0"}} {
		r = env.Do(t, creds, queries.Dashboard, vars, h)
		if len(r.Errors) > 0 {
			t.Fatalf("errors: %+v", r.Errors)
		}
		if _, ok := r.Extensions["upstream"]; ok {
			t.Errorf("report without asking (%v)", h)
		}
	}

	// Disabled by configuration: no report even when asked.
	off := testenv.New(t, testenv.Options{NoTrace: true})
	r = off.Do(t, off.Bearer(), queries.Dashboard, vars, traceOn)
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %+v", r.Errors)
	}
	if len(r.Data) < 100 {
		t.Fatalf("no data: %s", r.Data)
	}
	if _, ok := r.Extensions["upstream"]; ok {
		t.Errorf("report with NoTrace")
	}
}

// TestUpstreamReportStartOffsets: each call carries startMs, its start in ms
// since the request's start (the playground draws the waterfall from it): a
// call that needs an earlier call's answer starts after that call ended.
func TestUpstreamReportStartOffsets(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	for i := range env.Manifest.IDs["resource"] {
		r := env.Do(t, env.Bearer(), queries.First, map[string]any{"id": env.ID(t, "resource", i)}, traceOn)
		var d struct {
			Resource struct {
				Parent *struct{ ID string } `json:"parent"`
			} `json:"resource"`
		}
		testenv.MustData(t, r, &d)
		if d.Resource.Parent == nil {
			continue
		}
		var rep struct {
			Calls []struct {
				StartMs    *float64 `json:"startMs"`
				DurationMs float64  `json:"durationMs"`
			} `json:"calls"`
		}
		if err := json.Unmarshal(r.Extensions["upstream"], &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Calls) != 2 || rep.Calls[0].StartMs == nil || rep.Calls[1].StartMs == nil {
			t.Fatalf("report of a resource and its parent: %s", r.Extensions["upstream"])
		}
		first, second := rep.Calls[0], rep.Calls[1]
		// Offsets are truncated to microseconds: allow one.
		if *first.StartMs < 0 || *second.StartMs < *first.StartMs+first.DurationMs-0.001 {
			t.Errorf("the parent's call starts before the resource's call ended: %s", r.Extensions["upstream"])
		}
		return
	}
	t.Fatal("no demo resource has a parent")
}

// TestUpstreamReportBatch: with a loader window (-loader-wait), the calls a
// loader made for the keys it dispatched together carry the batch's size;
// with the default (no window) every key is dispatched alone and no call
// carries one. Whether a given key lands in a window depends on scheduling,
// so the windowed run checks what is marked, not how much (unit test:
// internal/policy/calls).
func TestUpstreamReportBatch(t *testing.T) {
	type report struct {
		Calls []struct {
			Method string `json:"method"`
			Path   string `json:"path"`
			Batch  int    `json:"batch"`
		} `json:"calls"`
	}
	run := func(env *testenv.Env) report {
		r := env.Do(t, env.Bearer(), queries.Dashboard, map[string]any{"locationId": env.ID(t, "location", 0)}, traceOn)
		if len(r.Errors) > 0 {
			t.Fatalf("errors: %+v", r.Errors)
		}
		var rep report
		if err := json.Unmarshal(r.Extensions["upstream"], &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	for _, c := range run(testenv.New(t, testenv.Options{})).Calls {
		if c.Batch != 0 {
			t.Errorf("without a loader window: %s %s marked batch %d", c.Method, c.Path, c.Batch)
		}
	}
	windowed := testenv.New(t, testenv.Options{GraphOpts: func(o *graph.Options) { o.Loaders.Wait = 50 * time.Millisecond }})
	rep := run(windowed)
	batched := 0
	for _, c := range rep.Calls {
		if c.Batch == 0 {
			continue
		}
		batched++
		if c.Batch < 2 {
			t.Errorf("%s %s marked batch %d: a batch holds at least two keys", c.Method, c.Path, c.Batch)
		}
	}
	t.Logf("with a 50ms loader window, %d of %d calls were made in batches", batched, len(rep.Calls))
}
