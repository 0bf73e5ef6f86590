package stack_test

import (
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/policy/live"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/redistest"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// TestQueriesGoBeforePollsAcrossReplicas: two replicas on one Redis, one
// client, the response cache off (every query goes upstream). The client's
// subscriptions poll its products and events through both replicas, and
// resource X through replica B only. The client's budget is paused (a 429
// learned by replica A, extended while the test sets up) until every poll
// waits in it; then, still paused, the client queries X through B (X's
// poll is waiting there: before, the query joined that poll's shared GET
// and waited at its place) and resource Y, which nothing polls, through B
// too. Once the pause ends, the budgets grant the two queries' GETs first,
// before any of the polls queued before them, A's included (A's polls
// would otherwise take the burst's second slot: they give way to B's
// queries through Redis); the grants are read in the order Redis decided
// them. Each query made its own call, and X's waiting poll had its answer
// from the query's, with no request of its own.
func TestQueriesGoBeforePollsAcrossReplicas(t *testing.T) {
	rs := redistest.Start(t)
	up := limitedUpstream(t)
	reps := startReplicas(t, 2, rs.URL, up, func(cfg *stack.Config) {
		cfg.Budget = budget.Config{RPS: budget.DefaultRPS, Burst: budget.DefaultBurst}
		cfg.RedisOpTimeout = 5 * time.Second
		cfg.CacheTTL = ""
		cfg.Live.Interval, cfg.Live.AllowFastPolls = 200*time.Millisecond, true
	}, func() *slog.Logger { return slog.New(slog.DiscardHandler) })
	a, b := reps[0], reps[1]
	m := up.Manifest
	creds := restclient.Credentials{Authorization: "Bearer " + m.BearerToken, NetworkID: m.NetworkID}
	x, y := m.IDs["resource"][0], m.IDs["resource"][1]

	sources := 0
	subscribe := func(r *replica, src live.Source) {
		if _, err := r.st.Live.Subscribe(t.Context(), creds, src); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range m.IDs["product"] {
		for _, r := range reps {
			subscribe(r, live.Product(r.st.Client, id))
		}
		sources++
	}
	for _, id := range m.IDs["event"] {
		for _, r := range reps {
			subscribe(r, live.EventSource(r.st.Client, id))
		}
		sources++
	}
	subscribe(b, live.Resource(b.st.Client, x))
	sources++
	polled := func() (n int64) {
		for _, r := range reps {
			for _, p := range r.st.Live.Stats().Polls {
				n += p
			}
		}
		return n
	}
	testenv.WaitFor(t, "every source polled", func() bool { return polled() >= int64(sources) })

	// Pause the client's budget, and keep it paused until told.
	budgetA := a.st.Config.Graph.Budget
	id := creds.Identity()
	retry := http.Header{"Retry-After": []string{"1"}}
	stopPausing := make(chan struct{})
	var pausing sync.WaitGroup
	budgetA.Learn(id, http.StatusTooManyRequests, retry)
	pausing.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopPausing:
				return
			case <-t.C:
				budgetA.Learn(id, http.StatusTooManyRequests, retry)
			}
		}
	})
	defer func() {
		select {
		case <-stopPausing:
		default:
			close(stopPausing)
		}
		pausing.Wait()
	}()
	// The calls waiting in the replicas' budgets: the polls', the others'.
	waiting := func() (polls, queries int) {
		for _, r := range reps {
			st := r.st.Config.Graph.Budget.Stats()
			polls, queries = polls+st.Background, queries+st.Waiting-st.Background
		}
		return polls, queries
	}
	testenv.WaitFor(t, "every poll waiting", func() bool { p, _ := waiting(); return p >= sources })
	hooks := up.Server.Hooks()
	hooks.Reset() // from here on, every request was granted after the pause
	// The grants from now on, in the order they were decided (every one by
	// Redis's clock: the shared log decides them all).
	type grant struct {
		at         time.Time
		background bool
	}
	var gmu sync.Mutex
	var grants []grant
	for _, r := range reps {
		r.st.Config.Graph.Budget.ObserveGrants(func(_ string, at time.Time, background bool) {
			gmu.Lock()
			grants = append(grants, grant{at, background})
			gmu.Unlock()
		})
	}

	q := `query($id: ID!) { resource(id: $id) { id title } }`
	var wg sync.WaitGroup
	answers := make([]*gqlclient.Response, 2)
	for i, c := range []struct {
		r  *replica
		id string
	}{{b, x}, {b, y}} {
		wg.Go(func() {
			resp, err := c.r.client(creds.Authorization, creds.NetworkID).Post(t.Context(), gqlclient.Request{Query: q, Variables: map[string]any{"id": c.id}}, nil)
			if err != nil || len(resp.Errors) > 0 {
				t.Errorf("query of %s: %v %+v", c.id, err, resp)
				return
			}
			answers[i] = resp
		})
	}
	testenv.WaitFor(t, "both queries' calls waiting", func() bool { _, q := waiting(); return q >= 2 })
	close(stopPausing)
	pausing.Wait()
	wg.Wait()
	if answers[0] == nil || answers[1] == nil {
		t.FailNow()
	}
	var reports [2]int
	for i, r := range answers {
		reports[i], _ = upstreamReport(t, r)
	}

	testenv.WaitFor(t, "polls granted after the pause", func() bool {
		gmu.Lock()
		defer gmu.Unlock()
		return len(grants) >= 6
	})
	for _, r := range reps {
		r.st.Config.Graph.Budget.ObserveGrants(nil)
	}
	gmu.Lock()
	order := slices.SortedStableFunc(slices.Values(grants), func(a, b grant) int { return a.at.Compare(b.at) })
	gmu.Unlock()
	var kinds []string
	for _, g := range order[:6] {
		kinds = append(kinds, map[bool]string{false: "query", true: "poll"}[g.background])
	}
	if kinds[0] != "query" || kinds[1] != "query" || slices.Contains(kinds[2:], "query") {
		t.Errorf("the budgets granted %v after the pause, want the two queries' calls first, before the polls queued before them", kinds)
	}
	// Where the upstream counts, at arrival (by delays after the grants on
	// a loaded machine, a poll may come in between): logged.
	var routes []string
	for _, s := range hooks.Seen() {
		routes = append(routes, s.Route)
	}
	if reports[0] != 1 || reports[1] != 1 {
		t.Errorf("the query of polled X made %d upstream calls of its own and the query of unpolled Y %d, want 1 each (the same treatment)", reports[0], reports[1])
	}
	t.Logf("after the pause: grants %v; the upstream served %v", kinds, routes[:min(len(routes), 6)])
}
