package graph_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/admission"
	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restserver/hooks"
	"github.com/workspacenet/facade/stack"
)

// heavyPaced is an operation of tenant B at the cost limit whose upstream
// calls its rate budget paces: 20 transaction lists, each filtered from its
// own instant (distinct GETs, within and across operations), with each
// transaction's invoice and its credit notes. Cost 20 * (1 + 5 * 99) = 9920;
// at least 20 calls, so at 10 a second four of them take seconds.
func heavyPaced(loc string, op int) string {
	var q strings.Builder
	q.WriteString("{ ")
	for i := range 20 {
		fmt.Fprintf(&q, `t%d: transactions(locationId: %q, createDate: {gte: "2020-01-01T00:%02d:%02dZ"}, first: 5) { nodes { invoice { creditNotes(first: 96) { nodes { id } } } } } `, i, loc, op, i)
	}
	return q.String() + "}"
}

const heavyPacedCost = 9920

// TestOneTenantsPacedFloodLeavesOthersAdmission: against the local service
// enforcing 10 requests a second per client, and the facade pacing each
// client to it, tenant B sends four operations at the cost limit whose calls
// B's budget paces for seconds, enough to fill the default 40,000 units in
// flight. B holds at most its share of them (the first 10,000 units, and
// more only while 10,000 stay free for others): its fourth operation waits,
// and tenant A's dashboard, sent while B's three hold their units, is
// admitted and answered in full with its 18 calls, not 503 OVERLOADED.
func TestOneTenantsPacedFloodLeavesOthersAdmission(t *testing.T) {
	var (
		bAuth, aAuth   atomic.Value
		callsA, callsB atomic.Int64
	)
	env := testenv.New(t, testenv.Options{
		Config: func(c *stack.Config) {
			c.Budget = budget.Config{RPS: budget.DefaultRPS, Burst: budget.DefaultBurst}
			withMetrics(c)
		},
		OnUpstreamRequest: func(r *http.Request) {
			switch r.Header.Get("Authorization") {
			case aAuth.Load():
				callsA.Add(1)
			case bAuth.Load():
				callsB.Add(1)
			}
		},
	})
	env.Hooks().SetRateLimit(hooks.RateLimit{PerSecond: 10})
	if o := graph.DefaultOptions(); o.MaxCostInFlight != 4*admission.DefaultClientShare || o.ClientCostShare != admission.DefaultClientShare {
		t.Fatalf("the test assumes the defaults: 40000 units, 10000 per client; got %d, %d", o.MaxCostInFlight, o.ClientCostShare)
	}
	a, b := env.Bearer(), env.Other(t)
	aAuth.Store(a.Authorization)
	bAuth.Store(b.Authorization)
	locB := env.Manifest.OtherNetworks[0].IDs["location"][0]

	ctx, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	var wg sync.WaitGroup
	var refusedB atomic.Int64
	for op := range 4 {
		wg.Go(func() {
			r, err := env.GraphQL.Post(ctx, gqlclient.Request{Query: heavyPaced(locB, op)}, b.Header())
			if err == nil && r.Status == http.StatusServiceUnavailable {
				refusedB.Add(1)
			}
		})
	}
	// B's four operations have each been admitted, or are held back (or
	// already refused) by B's share: the units in flight and waiting add up
	// to all four of them.
	testenv.WaitFor(t, "B's operations to take their units", func() bool {
		held := metric(t, env, "facade_admission_cost_in_flight")
		waiting := metric(t, env, "facade_admission_waiting_operations") + float64(refusedB.Load())
		return held >= 3*heavyPacedCost && held+waiting*heavyPacedCost >= 4*heavyPacedCost
	})
	heldByB := metric(t, env, "facade_admission_cost_in_flight")

	r := env.Query(t, a, queries.Dashboard, map[string]any{"locationId": env.ID(t, "location", 0)})
	t.Logf("while B's operations held %v cost units (B's calls so far: %d): A's dashboard HTTP %d, %d calls", heldByB, callsB.Load(), r.Status, callsA.Load())
	if r.Status != http.StatusOK || len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"transactions"`) {
		t.Fatalf("A's dashboard during B's paced flood: HTTP %d %.400s", r.Status, r.Raw)
	}
	if heldByB > 3*heavyPacedCost {
		t.Errorf("B held %v cost units, more than three operations (%d) while A waited", heldByB, 3*heavyPacedCost)
	}

	cancelB()
	wg.Wait()
	counts, total := env.Calls()
	if n := callsA.Load(); n != 18 {
		t.Errorf("A's dashboard made %d upstream calls, want 18", n)
	}
	if got := callsA.Load() + callsB.Load(); got != total {
		t.Errorf("the upstream counted %d calls, A's and B's are %d:\n%s", total, got, testenv.FormatCalls(counts))
	}
	expectPaced(t, env)
}
