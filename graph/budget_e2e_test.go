package graph_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restserver/hooks"
	"github.com/workspacenet/facade/stack"
)

// realLimit is an Env whose upstream enforces the real API's 10 requests per
// second per client (with or without Retry-After) and whose facade paces with
// its default budget.
func realLimit(t *testing.T, retryAfter bool, adjust func(*graph.Options)) *testenv.Env {
	t.Helper()
	env := testenv.New(t, testenv.Options{
		Config: func(c *stack.Config) {
			c.Budget = budget.Config{RPS: budget.DefaultRPS, Burst: budget.DefaultBurst}
		},
		GraphOpts: adjust,
	})
	env.Hooks().SetRateLimit(hooks.RateLimit{PerSecond: 10, OmitRetryAfter: !retryAfter})
	return env
}

// expectPaced fails t unless the upstream saw at most 10 requests of any
// client in any one second and refused none.
func expectPaced(t *testing.T, env *testenv.Env) {
	t.Helper()
	for client, n := range env.Hooks().MaxPerSecond() {
		if n > 10 {
			t.Errorf("client %s sent %d requests within one second, the limit is 10", client, n)
		}
	}
	if n := env.Hooks().RateLimited(); n != 0 {
		t.Errorf("the upstream refused %d requests with 429", n)
	}
}

// TestReadmeQueriesUnderTheRealRateLimit: the documented dashboard (18
// calls) and invoice (3) come back complete, without a single 429, whether
// or not the upstream sends Retry-After.
func TestReadmeQueriesUnderTheRealRateLimit(t *testing.T) {
	readme := testenv.DocQueries(t, "..")
	for _, retryAfter := range []bool{true, false} {
		t.Run(fmt.Sprint("Retry-After ", retryAfter), func(t *testing.T) {
			env := realLimit(t, retryAfter, nil)
			for _, rq := range readme {
				if rq.Query != queries.Dashboard && rq.Query != queries.Invoice {
					continue
				}
				r := env.Do(t, env.Bearer(), rq.Query, rq.Vars, map[string]string{graph.TraceHeader: "1"})
				if len(r.Errors) > 0 {
					t.Fatalf("%.30q: %+v", rq.Query, r.Errors)
				}
				var rep struct {
					Count int
					Calls []struct{ WaitedMs float64 }
				}
				if err := json.Unmarshal(r.Extensions["upstream"], &rep); err != nil {
					t.Fatalf("extensions.upstream: %v", err)
				}
				waited := 0.0
				for _, c := range rep.Calls {
					waited += c.WaitedMs
				}
				t.Logf("%.24q: %d calls, %.0f ms waited for the budget in all", rq.Query, rep.Count, waited)
			}
			_, total := env.Calls()
			if total != 18+3 {
				t.Errorf("%d upstream calls, want 21 (18 + 3)", total)
			}
			expectPaced(t, env)
		})
	}
}

// TestBudgetRefusesWhatTheDeadlineCannotPace: 30 resources in a request
// whose deadline is 1 s: the budget sends what fits (the burst of 2, then
// about 9 a second) and answers the rest RATE_LIMITED with retryAfter at
// once, without sending them.
func TestBudgetRefusesWhatTheDeadlineCannotPace(t *testing.T) {
	env := realLimit(t, true, func(o *graph.Options) {
		o.RequestTimeout = timeoutForPacing
		o.Limits.MaxRootFields, o.Limits.MaxAliases = 0, 0
	})
	var q strings.Builder
	q.WriteString("{ ")
	for i := range 30 {
		fmt.Fprintf(&q, `r%d: resource(id: "00000000-0000-4000-8000-%012d") { id } `, i, i)
	}
	q.WriteString("}")
	r := env.Query(t, env.Bearer(), q.String(), nil)
	// A call granted a slot just before the deadline may be cut by it on a
	// loaded machine (UPSTREAM_UNAVAILABLE), before or after the upstream
	// saw it. What must hold whatever the machine's speed: a RATE_LIMITED
	// field cost no call, a NOT_FOUND one exactly one, a cut one at most one.
	limited, notFound, cut := 0, 0, 0
	for _, e := range r.Errors {
		switch e.Code() {
		case "RATE_LIMITED":
			limited++
			if s, _ := e.Extensions["retryAfter"].(float64); s < 1 {
				t.Errorf("RATE_LIMITED without retryAfter: %+v", e)
			}
		case "NOT_FOUND":
			notFound++
		case "UPSTREAM_UNAVAILABLE":
			cut++
		default:
			t.Errorf("unexpected error %+v", e)
		}
	}
	_, sent := env.Calls()
	if limited == 0 || notFound == 0 || limited+notFound+cut != 30 || sent < int64(notFound) || sent > int64(notFound+cut) {
		t.Errorf("%d RATE_LIMITED, %d NOT_FOUND, %d cut by the deadline, %d upstream calls: want RATE_LIMITED and NOT_FOUND, 30 in all, one call per NOT_FOUND, none per RATE_LIMITED", limited, notFound, cut, sent)
	}
	// What was sent fits the deadline at the budget's pace.
	pace := budget.Config{RPS: 10, Burst: 2}
	if maxSent := int64(2 + timeoutForPacing/pace.Interval()); sent > maxSent {
		t.Errorf("%d calls sent within %v, the budget allows %d", sent, timeoutForPacing, maxSent)
	}
	expectPaced(t, env)
}

const timeoutForPacing = time.Second

// TestBudgetIsPerClient: each caller's credentials have their own budget.
// A request that spends one client's budget (30 resources within its 1 s
// deadline) leaves another client's whole: that client's next request (two
// resources, its burst) waits for nothing.
func TestBudgetIsPerClient(t *testing.T) {
	env := realLimit(t, true, func(o *graph.Options) {
		o.RequestTimeout = timeoutForPacing
		o.Limits.MaxRootFields, o.Limits.MaxAliases = 0, 0
	})
	resources := func(n int) string {
		var q strings.Builder
		q.WriteString("{ ")
		for i := range n {
			fmt.Fprintf(&q, `r%d: resource(id: "00000000-0000-4000-8000-%012d") { id } `, i, i)
		}
		return q.String() + "}"
	}
	env.Query(t, env.Bearer(), resources(30), nil) // spends the Bearer client's budget
	r := env.Do(t, env.ReadOnly(), resources(2), nil, map[string]string{graph.TraceHeader: "1"})
	var rep struct {
		Count int
		Calls []struct{ WaitedMs float64 }
	}
	if err := json.Unmarshal(r.Extensions["upstream"], &rep); err != nil {
		t.Fatalf("extensions.upstream: %v", err)
	}
	if rep.Count != 2 {
		t.Fatalf("%d upstream calls, want 2 (errors %+v)", rep.Count, r.Errors)
	}
	for _, c := range rep.Calls {
		// The other client's budget would make the second call wait a
		// pacing interval (~120 ms) at least.
		if c.WaitedMs > 60 {
			t.Errorf("a call of the other client waited %.0f ms for the budget, want none: %+v", c.WaitedMs, rep.Calls)
		}
	}
	expectPaced(t, env)
}

// TestBudgetServesRequestsInArrivalOrder: one client's requests are served
// in the order they arrived. A dashboard (18 calls over two levels of
// lists and lookups) arrives first; ten root visit lookups (shallow:
// priority 1, where the dashboard's calls are 2 to 5) arrive while its
// first calls wait for the budget. A visit goes only when no call of the
// dashboard is waiting (between its levels, while the answers it needs for
// the next are on their way): served by priority across requests, all ten
// would overtake the dashboard's deeper calls; by arrival, a few at most.
func TestBudgetServesRequestsInArrivalOrder(t *testing.T) {
	env := realLimit(t, true, func(o *graph.Options) {
		o.Limits.MaxRootFields, o.Limits.MaxAliases = 0, 0
	})
	dashDone := make(chan *testenv.Response, 1)
	go func() {
		dashDone <- env.Query(t, env.Bearer(), queries.Dashboard, map[string]any{"locationId": env.ID(t, "location", 0)})
	}()
	// The dashboard has arrived once its first call reached the upstream.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, n := env.Calls(); n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the dashboard made no call within 10s")
		}
		time.Sleep(time.Millisecond)
	}
	var q strings.Builder
	q.WriteString("{ ")
	for i := range 10 {
		fmt.Fprintf(&q, `v%d: visit(id: "00000000-0000-4000-8000-%012d") { id } `, i, i)
	}
	q.WriteString("}")
	later := env.Query(t, env.Bearer(), q.String(), nil)
	for _, e := range later.Errors {
		if e.Code() != "NOT_FOUND" {
			t.Errorf("later request: %+v", e)
		}
	}
	if r := <-dashDone; len(r.Errors) > 0 {
		t.Fatalf("dashboard: %+v", r.Errors)
	}
	seen := env.Hooks().Seen()
	routes := make([]string, len(seen))
	visits, overtaking := 0, 0 // visits seen, and seen before the dashboard's last call
	for i, s := range seen {
		routes[i] = s.Route
		if strings.Contains(s.Route, "/visitors/") {
			visits++
		} else {
			overtaking = visits
		}
	}
	if len(seen) != 18+10 || visits != 10 || overtaking > 5 {
		t.Errorf("upstream order %v: %d visits went before the dashboard's last call, want at most 5 (the gaps between its levels)", routes, overtaking)
	}
	t.Logf("%d of the later request's 10 calls went before the earlier dashboard's last call", overtaking)
	expectPaced(t, env)
}
