package reliability_test

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver/hooks"
)

// deadline is the per-request deadline of the fault tests; margin is how much
// longer the test's HTTP client waits for the answer. attemptTimeout ends the
// attempts of the "timeout" and "hang" cases; every healthy call of those
// queries must be answered within it, and every healthy part of a query
// within the deadline, so both leave a wide margin for a loaded machine (the
// matrix itself starts eight envs at once). The cases' durations are not
// asserted.
const (
	deadline       = 4 * time.Second
	margin         = 10 * time.Second
	attemptTimeout = 2 * time.Second
)

// faultCase is one misbehaviour of one upstream route.
type faultCase struct {
	name    string
	fault   hooks.Fault
	latency time.Duration // above attemptTimeout: an upstream timeout
	// noAttemptTimeout keeps the client's default per-attempt timeout, so
	// only the request deadline ends a hanging call.
	noAttemptTimeout bool
	code             string
	retryAfter       float64 // extensions.retryAfter expected (0: not checked)
}

var faultCases = []faultCase{
	{name: "500", fault: hooks.Fault{Kind: hooks.Fault500, Rate: 1}, code: "UPSTREAM_UNAVAILABLE"},
	{name: "503", fault: hooks.Fault{Kind: hooks.Fault503, Rate: 1}, code: "UPSTREAM_UNAVAILABLE"},
	// Retry-After 1s: the client waits for it and retries while the wait
	// fits the deadline; the last 429 is the answer.
	{name: "429 with Retry-After", fault: hooks.Fault{Kind: hooks.Fault429, Rate: 1, RetryAfter: time.Second}, code: "RATE_LIMITED", retryAfter: 1},
	// Retry-After beyond the deadline: not waited for at all.
	{name: "429 with long Retry-After", fault: hooks.Fault{Kind: hooks.Fault429, Rate: 1, RetryAfter: 5 * time.Second}, code: "RATE_LIMITED", retryAfter: 5},
	{name: "429 without Retry-After", fault: hooks.Fault{Kind: hooks.Fault429, Rate: 1}, code: "RATE_LIMITED"},
	{name: "timeout", latency: 5 * time.Second, code: "UPSTREAM_UNAVAILABLE"},
	{name: "hang", fault: hooks.Fault{Kind: hooks.FaultHang, Rate: 1}, code: "UPSTREAM_UNAVAILABLE"},
	{name: "hang past the request deadline", fault: hooks.Fault{Kind: hooks.FaultHang, Rate: 1}, noAttemptTimeout: true, code: "UPSTREAM_UNAVAILABLE"},
	{name: "malformed JSON", fault: hooks.Fault{Kind: hooks.FaultMalformed, Rate: 1}, code: "UPSTREAM_UNAVAILABLE"},
	{name: "truncated", fault: hooks.Fault{Kind: hooks.FaultTruncated, Rate: 1}, code: "UPSTREAM_UNAVAILABLE"},
	{name: "connection reset", fault: hooks.Fault{Kind: hooks.FaultReset, Rate: 1}, code: "UPSTREAM_UNAVAILABLE"},
}

// faultTarget is a query with one relation served by the broken route.
type faultTarget struct {
	name, route, query string
	errPath            *regexp.Regexp // where every error must sit
	check              func(t *testing.T, env *testenv.Env, data any)
}

func faultTargets(env *testenv.Env, t *testing.T) []faultTarget {
	loc, res := env.ID(t, "location", 0), env.ID(t, "resource", 0)
	return []faultTarget{
		{
			name:  "nested relation",
			route: restclient.OpGetResource.Pattern(),
			query: `{ location(id: "` + loc + `") {
				products { id }
				transactions(first: 30, type: BOOKING) { nodes { id booking { resource { id capacity } } } } } }`,
			errPath: regexp.MustCompile(`^location\.transactions\.nodes\.\d+\.booking\.resource$`),
			check: func(t *testing.T, env *testenv.Env, data any) {
				if ps, _ := field(data, "location.products").([]any); len(ps) == 0 {
					t.Errorf("products missing: %v", data)
				}
				nodes, _ := field(data, "location.transactions.nodes").([]any)
				if len(nodes) == 0 {
					t.Fatalf("transactions missing: %v", data)
				}
				for _, n := range nodes {
					if id, _ := field(n, "id").(string); id == "" {
						t.Errorf("a transaction without its id: %v", n)
					}
				}
			},
		},
		{
			name:    "root list",
			route:   restclient.OpListOrders.Pattern(),
			query:   `{ orders(locationId: "` + loc + `", first: 5) { nodes { id } } resource(id: "` + res + `") { id title } products(locationId: "` + loc + `") { id } }`,
			errPath: regexp.MustCompile(`^orders$`),
			check: func(t *testing.T, env *testenv.Env, data any) {
				if field(data, "orders") != nil {
					t.Errorf("orders should be null: %v", data)
				}
				if field(data, "resource.id") != res {
					t.Errorf("resource missing: %v", data)
				}
				if ps, _ := field(data, "products").([]any); len(ps) == 0 {
					t.Errorf("products missing: %v", data)
				}
			},
		},
	}
}

// TestFaultMatrix injects every fault kind on one relation of a nested query
// and on a root list, with a short request deadline: the answer arrives, the
// unaffected data is there, every error carries the fault's code on the
// affected field, and no goroutine outlives the test. The cases run in
// parallel, each with its own upstream and facade.
func TestFaultMatrix(t *testing.T) {
	noLeaks(t) // checked once every case has ended
	// The cases are mostly waiting; run them all at once (t.Parallel would
	// run only GOMAXPROCS at a time).
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, 8) // envs alive at once
	for _, fc := range faultCases {
		wg.Go(func() {
			t.Run(fc.name, func(t *testing.T) {
				opts := []restclient.Option{}
				if !fc.noAttemptTimeout {
					opts = append(opts, restclient.WithTimeout(attemptTimeout))
				}
				var targets sync.WaitGroup
				defer targets.Wait()
				for i, name := range []string{"nested relation", "root list"} {
					targets.Go(func() {
						slots <- struct{}{}
						defer func() { <-slots }()
						t.Run(name, func(t *testing.T) {
							// A fresh env per target: the breaker the first target
							// opens must not decide the second.
							env := testenv.New(t, testenv.Options{
								ClientOpts: opts,
								GraphOpts:  func(o *graph.Options) { o.RequestTimeout = deadline },
							})
							tg := faultTargets(env, t)[i]
							// The credentials answered once: trusted, their calls go
							// together (an unproven one's would wait for its first).
							if r := gql(t, env, deadline+margin, env.Bearer(), `{ resource(id: "`+env.ID(t, "resource", 0)+`") { id } }`, nil); len(r.Errors) > 0 {
								t.Fatalf("proving the credentials: %s", r.Raw)
							}
							if fc.fault.Kind != "" {
								env.Hooks().SetFault(tg.route, fc.fault)
							}
							if fc.latency > 0 {
								env.Hooks().SetLatency(tg.route, hooks.Latency{Fixed: fc.latency})
							}
							env.ResetCalls()
							r := gql(t, env, deadline+margin, env.Bearer(), tg.query, nil)
							if r.Status != http.StatusOK || len(r.Errors) == 0 {
								t.Fatalf("want 200 with errors, got %d %.600s", r.Status, r.Raw)
							}
							for _, e := range r.Errors {
								if e.Code() != fc.code || !tg.errPath.MatchString(e.PathString()) {
									t.Errorf("error %s at %q (%s), want %s at %s", e.Code(), e.PathString(), e.Message, fc.code, tg.errPath)
								}
								if fc.retryAfter > 0 && e.Extensions["retryAfter"] != fc.retryAfter {
									t.Errorf("retryAfter = %v, want %v", e.Extensions["retryAfter"], fc.retryAfter)
								}
							}
							tg.check(t, env, decode(t, r.Data))
							if m, _ := env.Calls(); m[tg.route] == 0 {
								t.Errorf("the broken route was not called:\n%s", testenv.FormatCalls(m))
							}
						})
					})
				}
			})
		})
	}
}

// TestCircuitBreaker: a route that keeps failing opens its breaker; later
// queries fail fast with UPSTREAM_UNAVAILABLE without calling it; once the
// route recovers and the open timeout has passed, a probe closes the breaker.
// Each phase has its own env: an open timeout far beyond the test keeps the
// breaker open however slow the machine is, a short one lets it recover.
func TestCircuitBreaker(t *testing.T) {
	noLeaks(t)
	var route = restclient.OpGetResource.Pattern()
	// trip starts an env whose breaker opens after 3 consecutive failures for
	// openTimeout, opens it with a failing route, and clears the fault, so
	// that any call let through would succeed. It returns the env, the query
	// and the breaker's transitions so far.
	trip := func(t *testing.T, openTimeout time.Duration) (*testenv.Env, string, func() []string) {
		t.Helper()
		var (
			mu          sync.Mutex
			transitions []string
			opened      = make(chan struct{}, 1)
		)
		env := testenv.New(t, testenv.Options{
			ClientOpts: []restclient.Option{
				restclient.WithRetry(restclient.RetryPolicy{}),
				restclient.WithCircuitBreaker(restclient.BreakerSettings{ConsecutiveFailures: 3, OpenTimeout: openTimeout, HalfOpenProbes: 1}),
				restclient.WithBreakerStateChange(func(r string, from, to restclient.BreakerState) {
					// One client's failures open that client's breaker of
					// the route ("GET /resources/v1/{id} client <id>").
					if !strings.HasPrefix(r, route+" client ") {
						return
					}
					mu.Lock()
					transitions = append(transitions, from.String()+">"+to.String())
					mu.Unlock()
					if to == restclient.BreakerOpen {
						select {
						case opened <- struct{}{}:
						default:
						}
					}
				}),
			},
			GraphOpts: func(o *graph.Options) { o.RequestTimeout = deadline },
		})
		q := `{ resource(id: "` + env.ID(t, "resource", 0) + `") { id title } }`
		env.Hooks().SetFault(route, hooks.Fault{Kind: hooks.Fault500, Rate: 1})

		// Three failures in a row open the breaker.
		for i := range 3 {
			r := gql(t, env, deadline+margin, env.Bearer(), q, nil)
			if c := r.Codes(); len(c) != 1 || c[0] != "UPSTREAM_UNAVAILABLE" {
				t.Fatalf("failure %d: %s", i, r.Raw)
			}
		}
		select {
		case <-opened:
		case <-time.After(5 * time.Second):
			t.Fatal("the breaker did not open after 3 failures")
		}
		if calls := env.Hooks().Counts()[route]; calls != 3 {
			t.Fatalf("%d upstream calls before opening, want 3", calls)
		}
		env.Hooks().ClearFaults()
		return env, q, func() []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(transitions)
		}
	}

	t.Run("open: fails fast without calling", func(t *testing.T) {
		env, q, transitions := trip(t, time.Hour)
		for range 3 {
			r := gql(t, env, deadline+margin, env.Bearer(), q, nil)
			if c := r.Codes(); len(c) != 1 || c[0] != "UPSTREAM_UNAVAILABLE" || r.Errors[0].PathString() != "resource" {
				t.Fatalf("while open: %s", r.Raw)
			}
			if n := env.Hooks().Counts()[route]; n != 3 {
				t.Fatalf("an open breaker let a call through: %d calls, was 3", n)
			}
		}
		if got, want := transitions(), []string{"closed>open"}; !slices.Equal(got, want) {
			t.Errorf("transitions %v, want %v", got, want)
		}
	})

	t.Run("recovery", func(t *testing.T) {
		env, q, transitions := trip(t, 300*time.Millisecond)
		// After the open timeout a probe passes and closes the breaker.
		stop := time.Now().Add(10 * time.Second)
		for {
			r := gql(t, env, deadline+margin, env.Bearer(), q, nil)
			if len(r.Errors) == 0 {
				break
			}
			if time.Now().After(stop) {
				t.Fatalf("the breaker never closed again: %s", r.Raw)
			}
			time.Sleep(50 * time.Millisecond) // polling a time-based state, bounded above
		}
		if got, want := transitions(), []string{"closed>open", "open>half-open", "half-open>closed"}; !slices.Equal(got, want) {
			t.Errorf("transitions %v, want %v", got, want)
		}
		// Closed: every query calls the upstream again.
		before := env.Hooks().Counts()[route]
		gql(t, env, deadline+margin, env.Bearer(), q, nil)
		if after := env.Hooks().Counts()[route]; after != before+1 {
			t.Errorf("closed breaker: %d calls, want %d", after, before+1)
		}
	})
}

// TestSharedUpstreamCalls: two concurrent GraphQL requests with the same
// credentials that need the same resource share one upstream call; with
// different credentials of the same network (demo Bearer and demo Basic)
// they do not.
//
// The upstream holds every resource call until the test releases it, and the
// test releases it only once both requests have started their logical
// upstream call (restclient's Before hook): from there a request joins a
// shared call in flight without waiting for anything, while the held call
// still has to answer over HTTP. A second upstream call, if the client made
// one, is held too and counted once released.
func TestSharedUpstreamCalls(t *testing.T) {
	noLeaks(t)
	var route = restclient.OpGetResource.Pattern()
	var (
		arrived = make(chan struct{}, 16) // one per upstream resource call
		release = make(chan struct{})
		started = make(chan struct{}, 16) // one per logical resource call of a request
	)
	var gate atomic.Pointer[chan struct{}]
	gate.Store(&release)
	// onCall reports each logical resource call a request starts.
	onCall := restclient.CallHooks{Before: func(_ context.Context, c restclient.CallStart) error {
		if c.Method == http.MethodGet && c.Route == restclient.OpGetResource.Route {
			started <- struct{}{}
		}
		return nil
	}}
	env := testenv.New(t, testenv.Options{
		OnUpstreamRequest: func(r *http.Request) {
			if r.Method == http.MethodGet && regexp.MustCompile(`^/resources/v1/[^/]+$`).MatchString(r.URL.Path) {
				arrived <- struct{}{}
				select {
				case <-*gate.Load():
				case <-r.Context().Done():
				}
			}
		},
		GraphOpts: func(o *graph.Options) {
			o.RequestTimeout = 10 * time.Second
			o.Extensions = append(o.Extensions, testenv.FieldInterceptor(func(ctx context.Context, next graphql.Resolver) (any, error) {
				if fc := graphql.GetFieldContext(ctx); fc.Object == "Query" && fc.Field.Name == "resource" {
					ctx = restclient.WithCallHooks(ctx, onCall)
				}
				return next(ctx)
			}))
		},
	})
	q := `{ resource(id: "` + env.ID(t, "resource", 0) + `") { id title } }`
	wait := func(t *testing.T, ch chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("timed out waiting for %s", what)
		}
	}
	run := func(t *testing.T, a, b testenv.Creds, wantCalls int64) {
		t.Helper()
		rel := make(chan struct{})
		gate.Store(&rel)
		releaseCalls := sync.OnceFunc(func() { close(rel) })
		env.ResetCalls()
		var wg sync.WaitGroup
		defer wg.Wait()
		defer releaseCalls() // also when t fails early: the held calls end
		replies := make([]*testenv.Response, 2)
		for i, c := range []testenv.Creds{a, b} {
			wg.Go(func() {
				r, err := post(env, 15*time.Second, c, q, nil)
				if err != nil {
					t.Error(err)
				}
				replies[i] = r
			})
		}
		wait(t, started, "the first request's upstream call")
		wait(t, started, "the second request's upstream call")
		wait(t, arrived, "the first upstream call")
		if wantCalls == 2 {
			wait(t, arrived, "the second upstream call")
		}
		select {
		case <-arrived:
			t.Errorf("%d upstream calls arrived, want %d", wantCalls+1, wantCalls)
		default:
		}
		releaseCalls()
		wg.Wait()
		for i, r := range replies {
			if r == nil || len(r.Errors) > 0 || field(decode(t, r.Data), "resource.title") == nil {
				var raw []byte
				if r != nil {
					raw = r.Raw
				}
				t.Fatalf("request %d: %s", i, raw)
			}
		}
		if n := env.Hooks().Counts()[route]; n != wantCalls {
			t.Errorf("%d upstream calls, want %d", n, wantCalls)
		}
	}
	t.Run("same credentials share", func(t *testing.T) { run(t, env.Bearer(), env.Bearer(), 1) })
	t.Run("different credentials do not", func(t *testing.T) { run(t, env.Bearer(), env.Basic(), 2) })
}
