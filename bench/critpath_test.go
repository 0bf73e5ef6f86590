package main

import (
	"math"
	"testing"
	"time"

	"github.com/workspacenet/facade/restserver/hooks"
)

// TestDecomposeFollowsDependencies: a call waits for the shortest chain of
// its parent routes' answers that came before it started; the critical path is the
// longest such chain, and the facade's time is split around the chain that
// ends with the last answer.
func TestDecomposeFollowsDependencies(t *testing.T) {
	const (
		tx = "GET /transactions/money/v1"
		cn = "GET /billing/credit_notes/v1"
		rs = "GET /resources/v1/{id}"
		iv = "GET /billing/invoices/v1/{id}/items"
	)
	deps := map[string]RouteDeps{tx: {Root: true}, cn: {Root: true}, rs: {From: []string{tx}}, iv: {From: []string{cn, tx}}}
	k := func(route string, start, dur, slept, handled float64) tracedCall {
		return tracedCall{Route: route, Start: start, Dur: dur, Slept: slept, Handled: handled, known: true}
	}
	cs := []tracedCall{
		k(rs, 22.5, 21, 20, 0.5),  // after tx's answer: chain 22 + 21
		k(tx, 0.1, 22, 20, 1),     // answered at 22.1
		k(cn, 0.9, 21.5, 20, 0.5), // answered at 22.4
		// Started after tx's answer, before cn's: waits for tx (chain
		// 22 + 21.9 = 43.9, the critical path), although cn's chain is
		// shorter.
		k(iv, 22.2, 21.9, 20, 0.7),
		// Both answers came before it: the shorter chain, cn's, bounds it
		// (21.5 + 22); it ends last, at 44.6.
		k(iv, 22.6, 22, 20, 0.4),
	}
	d := decompose(45, cs, deps)
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("critical path", d.CritPath, 43.9)
	near("own", d.Own, 45-43.9)
	near("before", d.Before, 0.1)
	near("between", d.Between, 22.6-22.4) // on the chain ending with the last answer: cn -> the second invoice call
	near("after", d.After, 45-44.6)
	near("slept", d.Slept, 40) // on the critical path: tx -> the first invoice call
	near("handled", d.Handled, 1.7)
	near("client", d.Client, 43.9-41.7)
	if !d.Matched || d.Calls != 5 {
		t.Errorf("matched %v, calls %d", d.Matched, d.Calls)
	}
	// One call without the service's timing: no split.
	cs[1].known = false
	if d := decompose(45, cs, deps); d.Matched || d.Slept != 0 || d.CritPath != 43.9 {
		t.Errorf("unmatched: %+v", d)
	}
}

// TestMatchTimingsByRouteAndCompletion: per route, the calls in the order
// their answers came take the logged requests in the order the service
// finished them, whatever order they arrived in; a route whose counts
// differ stays unmatched.
func TestMatchTimingsByRouteAndCompletion(t *testing.T) {
	t0 := time.Unix(1000, 0)
	cs := []tracedCall{{Route: "A", Start: 0, Dur: 40}, {Route: "A", Start: 1, Dur: 22}, {Route: "B", Start: 0, Dur: 21}}
	matchTimings(cs, []hooks.Timing{
		// Arrived first, finished last (waited for the database).
		{Route: "A", Arrived: t0, Slept: 20 * time.Millisecond, Handled: 18 * time.Millisecond},
		{Route: "A", Arrived: t0.Add(time.Millisecond), Slept: 20 * time.Millisecond, Handled: time.Millisecond},
	})
	if c := cs[1]; !c.known || c.Slept != 20 || c.Handled != 1 {
		t.Errorf("the call answered first: %+v", c)
	}
	if c := cs[0]; !c.known || c.Slept != 20 || c.Handled != 18 {
		t.Errorf("the call answered last: %+v", c)
	}
	if cs[2].known {
		t.Errorf("B matched without a logged request: %+v", cs[2])
	}
}
