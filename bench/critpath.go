package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/policy/calls"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/restserver/hooks"
)

// The critical-path decomposition: where one request's time goes, from the
// facade's own call report (X-Upstream-Trace: 1, internal/policy/calls: each upstream
// call's start and duration as the facade's client saw them, decoding
// included) and the REST service's timing log (hooks.Timings: each call's
// injected sleep and handler time).

// tracedCall is one upstream call of a traced request, times in ms from the
// facade handler's start.
type tracedCall struct {
	Route      string // "GET /resources/v1/{id}"
	Start, Dur float64
	// Slept and Handled are the REST service's injected sleep and handler
	// time for the call; known is false when the log could not be matched.
	Slept, Handled float64
	known          bool
}

func (c tracedCall) end() float64 { return c.Start + c.Dur }

// Decomp is one request's time, split (ms).
type Decomp struct {
	Total float64 `json:"totalMs"` // sending the request to the answer's last byte at the bench's client
	// CritPath is the longest chain of dependent upstream calls by their
	// measured durations; Own = Total - CritPath is the time the facade
	// (and the HTTP exchange with the bench's client) added to it.
	CritPath float64 `json:"critPathMs"`
	Own      float64 `json:"ownMs"`
	// Before is the facade handler's start to its first upstream call;
	// Between, on the chain of calls that ends with the last answer, the
	// time from each answer to the start of the call that needed it;
	// After, the last answer to the response's last byte at the bench's
	// client (with the request's way in before the handler started). Own - Before -
	// Between - After is what remains: a first call of that chain that
	// started after the first call, less the critical path's excess over
	// that chain.
	Before  float64 `json:"beforeMs"`
	Between float64 `json:"betweenMs"`
	After   float64 `json:"afterMs"`
	// Of the critical path: the REST service's injected sleep (overshoot
	// included), its handler time, and the rest (Client: both ways over
	// loopback, the facade reading and decoding the answer, goroutine
	// wake-ups). Zero when the service's log could not be matched.
	Slept   float64 `json:"sleptMs"`
	Handled float64 `json:"handledMs"`
	Client  float64 `json:"clientMs"`
	Matched bool    `json:"matched"`
	Calls   int     `json:"calls"`
}

// overlapSlackMs tolerates clock granularity when deciding whether a call
// started after a possible parent's answer.
const overlapSlackMs = 0.01

// decompose splits one request of total ms whose upstream calls were calls,
// the calls of each route waiting for what deps says (needs.Deps). A call
// whose route has parent routes waits for the shortest chain among the
// calls of those routes that ended before it started (or, if none did, that
// started before it); a call of a root route waits for nothing. So the
// critical path is never longer than the dependencies allow: what the
// facade added is never understated.
func decompose(total float64, cs []tracedCall, deps map[string]RouteDeps) Decomp {
	d := Decomp{Total: total, Calls: len(cs)}
	if len(cs) == 0 {
		d.Own, d.After = total, total
		return d
	}
	cs = slices.Clone(cs)
	slices.SortStableFunc(cs, func(a, b tracedCall) int { return cmp.Compare(a.Start, b.Start) })
	cp := make([]float64, len(cs)) // longest chain ending with call i
	parent := make([]int, len(cs)) // -1: none
	for i, c := range cs {
		dep, known := deps[c.Route]
		best, bp := -1.0, -1
		if !known || dep.Root || len(dep.From) == 0 {
			best = 0
		}
		pick := func(after bool) {
			for j := range i {
				if !slices.Contains(dep.From, cs[j].Route) || (after && cs[j].end() > c.Start+overlapSlackMs) {
					continue
				}
				if best < 0 || cp[j] < best {
					best, bp = cp[j], j
				}
			}
		}
		if best < 0 {
			pick(true)
		}
		if best < 0 {
			pick(false)
		}
		cp[i], parent[i] = max(best, 0)+c.Dur, bp
	}
	top, last := 0, 0
	for i, c := range cs {
		if cp[i] > cp[top] {
			top = i
		}
		if c.end() > cs[last].end() {
			last = i
		}
	}
	d.CritPath = cp[top]
	d.Own = total - d.CritPath
	d.Before = cs[0].Start
	d.After = total - cs[last].end()
	for i := last; parent[i] >= 0; i = parent[i] {
		d.Between += cs[i].Start - cs[parent[i]].end()
	}
	d.Matched = true
	for i := top; i >= 0; i = parent[i] {
		c := cs[i]
		if !c.known {
			d.Matched = false
			break
		}
		d.Slept += c.Slept
		d.Handled += c.Handled
	}
	if d.Matched {
		d.Client = d.CritPath - d.Slept - d.Handled
	} else {
		d.Slept, d.Handled = 0, 0
	}
	return d
}

// matchTimings fills the calls' server times from the REST service's log of
// the same request: per route, the calls in the order their answers came
// and the logged requests in the order the service finished them (arrival
// plus sleep plus handler time). Completion order, not start order: calls
// that start together reach the service in any order, while each answer
// comes after the service finished it. A route whose counts differ is left
// unmatched.
func matchTimings(cs []tracedCall, ts []hooks.Timing) {
	byRoute := map[string][]hooks.Timing{}
	for _, t := range ts {
		byRoute[t.Route] = append(byRoute[t.Route], t)
	}
	idx := map[string][]int{}
	for i, c := range cs {
		idx[c.Route] = append(idx[c.Route], i)
	}
	done := func(t hooks.Timing) time.Time { return t.Arrived.Add(t.Slept + t.Handled) }
	for route, is := range idx {
		logged := byRoute[route]
		if len(logged) != len(is) {
			continue
		}
		slices.SortStableFunc(is, func(a, b int) int { return cmp.Compare(cs[a].end(), cs[b].end()) })
		slices.SortStableFunc(logged, func(a, b hooks.Timing) int { return done(a).Compare(done(b)) })
		for k, i := range is {
			cs[i].Slept, cs[i].Handled, cs[i].known = ms(logged[k].Slept), ms(logged[k].Handled), true
		}
	}
}

// CritPath is a query's decomposition over N traced requests: the median
// of each column (so the medians need not add up) and each request; and
// per route, the medians of its calls' durations and their split.
type CritPath struct {
	N        int          `json:"n"`
	Median   Decomp       `json:"median"`
	Requests []Decomp     `json:"-"`
	ByRoute  []RouteSplit `json:"byRoute,omitempty"`
}

// RouteSplit is the median duration of a route's calls (ms) as the
// facade's client saw them, and of its REST service's sleep and handler
// time and the rest (Client), over the calls matched to the service's log.
type RouteSplit struct {
	Route   string  `json:"route"`
	Calls   int     `json:"calls"`
	Dur     float64 `json:"durMs"`
	Slept   float64 `json:"sleptMs"`
	Handled float64 `json:"handledMs"`
	Client  float64 `json:"clientMs"`
}

// routeSplits returns the per-route medians of cs, sorted by route.
func routeSplits(cs []tracedCall) []RouteSplit {
	by := map[string][]tracedCall{}
	for _, c := range cs {
		if c.known {
			by[c.Route] = append(by[c.Route], c)
		}
	}
	var out []RouteSplit
	for _, route := range slices.Sorted(maps.Keys(by)) {
		rc := by[route]
		col := func(f func(tracedCall) float64) float64 {
			v := make([]float64, len(rc))
			for i, c := range rc {
				v[i] = f(c)
			}
			return median(v)
		}
		out = append(out, RouteSplit{Route: route, Calls: len(rc),
			Dur:     col(func(c tracedCall) float64 { return c.Dur }),
			Slept:   col(func(c tracedCall) float64 { return c.Slept }),
			Handled: col(func(c tracedCall) float64 { return c.Handled }),
			Client:  col(func(c tracedCall) float64 { return c.Dur - c.Slept - c.Handled }),
		})
	}
	return out
}

// medianDecomp returns the per-column median of ds.
func medianDecomp(ds []Decomp) Decomp {
	col := func(f func(Decomp) float64) float64 {
		v := make([]float64, 0, len(ds))
		for _, d := range ds {
			v = append(v, f(d))
		}
		return median(v)
	}
	m := Decomp{
		Total:    col(func(d Decomp) float64 { return d.Total }),
		CritPath: col(func(d Decomp) float64 { return d.CritPath }),
		Own:      col(func(d Decomp) float64 { return d.Own }),
		Before:   col(func(d Decomp) float64 { return d.Before }),
		Between:  col(func(d Decomp) float64 { return d.Between }),
		After:    col(func(d Decomp) float64 { return d.After }),
		Calls:    int(col(func(d Decomp) float64 { return float64(d.Calls) })),
		Matched:  true,
	}
	var matched []Decomp
	for _, d := range ds {
		if d.Matched {
			matched = append(matched, d)
		}
	}
	if len(matched) == 0 {
		m.Matched = false
		return m
	}
	ds = matched
	m.Slept = col(func(d Decomp) float64 { return d.Slept })
	m.Handled = col(func(d Decomp) float64 { return d.Handled })
	m.Client = col(func(d Decomp) float64 { return d.Client })
	return m
}

// critPathRun sends q n times, one at a time, asking for the facade's call
// report, and decomposes each request with the REST service's timing log.
// Between requests (outside the timed part) it resets and reads the log.
func critPathRun(ctx context.Context, up *upstream, c *gqlclient.Client, q *benchQuery, deps map[string]RouteDeps, n int) (*CritPath, error) {
	if err := up.RecordTimings(true); err != nil {
		return nil, err
	}
	defer up.RecordTimings(false)
	header := http.Header{graph.TraceHeader: {"1"}}
	out := &CritPath{N: n}
	var all []tracedCall
	for range n {
		if err := up.ResetStats(); err != nil {
			return nil, err
		}
		r, total, err := exchange(ctx, c, requestBody(q), header)
		if err != nil {
			return nil, err
		}
		var rep calls.Report
		if err := json.Unmarshal(r.Extensions["upstream"], &rep); err != nil {
			return nil, fmt.Errorf("extensions.upstream: %w (is the report enabled?)", err)
		}
		ts, err := up.Timings()
		if err != nil {
			return nil, err
		}
		cs := make([]tracedCall, 0, len(rep.Calls))
		for _, k := range rep.Calls {
			cs = append(cs, tracedCall{Route: k.Method + " " + k.Path, Start: k.StartMs, Dur: k.DurationMs})
		}
		matchTimings(cs, ts)
		all = append(all, cs...)
		out.Requests = append(out.Requests, decompose(ms(total), cs, deps))
	}
	out.Median = medianDecomp(out.Requests)
	out.ByRoute = routeSplits(all)
	return out, nil
}

// critPathAt returns q's batched decomposition at latency lat (ms), nil if
// none was measured.
func critPathAt(q *QueryResult, lat float64) *CritPath {
	if m := q.Modes[modeBatched]; m != nil {
		return m.CritPath[strconv.FormatFloat(lat, 'f', -1, 64)]
	}
	return nil
}

// critPathTable renders the decompositions of a run as plain text.
func critPathTable(res *Results) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s %6s %4s %4s %7s %6s %7s %7s | %6s %7s %7s %6s | %7s %7s %7s\n",
		"query", "lat", "n", "calls", "total", "bound", "critpth", "own",
		"before", "between", "after", "rest", "slept", "handler", "client")
	for _, q := range res.Queries {
		m := q.Modes[modeBatched]
		if m == nil {
			continue
		}
		for _, lat := range slices.Sorted(maps.Keys(m.CritPath)) {
			cp := m.CritPath[lat]
			d := cp.Median
			var latMs float64
			fmt.Sscan(lat, &latMs)
			fmt.Fprintf(&b, "%-10s %4sms %4d %4d %7.2f %6.0f %7.2f %+7.2f | %6.2f %7.2f %7.2f %+6.2f | %7.2f %7.2f %7.2f\n",
				q.Name, lat, cp.N, d.Calls, d.Total, float64(q.Rounds)*latMs, d.CritPath, d.Own,
				d.Before, d.Between, d.After, d.Own-d.Before-d.Between-d.After, d.Slept, d.Handled, d.Client)
			for _, r := range cp.ByRoute {
				fmt.Fprintf(&b, "    %-40s %4d calls: %6.2f ms = slept %6.2f + handler %5.2f + client %5.2f\n", r.Route, r.Calls, r.Dur, r.Slept, r.Handled, r.Client)
			}
		}
	}
	return b.String()
}

// critPathSection renders the decomposition at latency lat (ms) into the
// generated section of BENCHMARKS.md.
func critPathSection(w func(string, ...any), res *Results, lat float64) {
	some := false
	for _, q := range res.Queries {
		some = some || critPathAt(q, lat) != nil
	}
	if !some {
		return
	}
	w("## Where the time goes (upstream latency %g ms, concurrency 1)\n\n", lat)
	w("Each query sent one at a time with `X-Upstream-Trace: 1`: the facade's call report gives every upstream call's start and duration as its client saw them (from sending the request to the decoded answer), ")
	w("and the REST service's timing log (`restserver/hooks`, `GET /_bench/timings`) gives the same call's injected sleep, as it actually slept, and its handler's time after it. ")
	w("Per request: the **measured path** is the longest chain of dependent calls (a call waits for the shortest chain among the answers, of the routes whose answers name its key, that came before it started) by their durations; ")
	w("**own** = total − measured path, the time the facade and the HTTP exchange with the bench's client added, of which **before** is the facade handler's start to its first call, ")
	w("**between** the time from each answer to the call that needed it on the chain that ends with the last answer, and **after** the last answer to the response's last byte at the client (with the request's way in). ")
	w("The measured path splits into the REST service's **sleep** (the injected latency and the timer's and scheduler's overshoot), its **handler** time, and the **client** rest: both ways over loopback, the facade reading and decoding the answers, goroutine wake-ups. ")
	w("Medians per column over the requests, so a row need not add up.\n\n")
	w("| query | requests | calls | total | bound | measured path | own | before | between | after | path: sleep | path: handler | path: client |\n")
	w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, q := range res.Queries {
		cp := critPathAt(q, lat)
		if cp == nil {
			continue
		}
		d := cp.Median
		w("| %s | %d | %d | %.2f ms | %.0f ms | %.2f ms | %+.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms |\n", q.Name, cp.N, d.Calls, d.Total,
			float64(q.Rounds)*lat, d.CritPath, d.Own, d.Before, d.Between, d.After, d.Slept, d.Handled, d.Client)
	}
	w("\nPer route (median of its calls over the same requests: duration = sleep + handler + client):\n\n")
	w("| query | route | calls | duration | sleep | handler | client |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, q := range res.Queries {
		cp := critPathAt(q, lat)
		if cp == nil {
			continue
		}
		for _, r := range cp.ByRoute {
			w("| %s | `%s` | %d | %.2f ms | %.2f ms | %.2f ms | %.2f ms |\n", q.Name, r.Route, r.Calls, r.Dur, r.Slept, r.Handled, r.Client)
		}
	}
	w("\n")
}
