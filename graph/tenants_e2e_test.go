package graph_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// TestOneTenantsFloodLeavesRoomForAnother: tenant B floods the facade with
// 70 transaction lists that the upstream holds (a gate, not a clock) — more
// than the client's 64 requests in flight. Tenant A's one-call query is
// answered while every one of B's calls is still held: B can hold at most
// its own share of the in-flight requests, never all of them.
func TestOneTenantsFloodLeavesRoomForAnother(t *testing.T) {
	var (
		gate     = make(chan struct{})
		heldB    atomic.Int64
		bAuth    string
		bAuthSet = make(chan struct{})
	)
	env := testenv.New(t, testenv.Options{
		OnUpstreamRequest: func(r *http.Request) {
			<-bAuthSet
			if r.Header.Get("Authorization") == bAuth && strings.HasPrefix(r.URL.Path, "/transactions/") {
				heldB.Add(1)
				select {
				case <-gate:
				case <-r.Context().Done():
				}
			}
		},
	})
	b := env.Other(t)
	bAuth = b.Authorization
	close(bAuthSet)
	loc := env.Manifest.OtherNetworks[0].IDs["location"][0]
	// B's credentials answered once: trusted, its calls go together (an
	// unproven credential's wait for its first call's answer).
	if r := env.Query(t, b, `{ resource(id: "`+env.Manifest.OtherNetworks[0].IDs["resource"][0]+`") { id } }`, nil); len(r.Errors) > 0 {
		t.Fatal(r.Raw)
	}

	var wg sync.WaitGroup
	errs := make(chan string, 70)
	for i := range 70 { // distinct page sizes: no two GETs are shared
		wg.Go(func() {
			q := fmt.Sprintf(`{ transactions(locationId: %q, first: %d) { nodes { id } } }`, loc, i+1)
			if r := env.Query(t, b, q, nil); len(r.Errors) > 0 {
				errs <- fmt.Sprintf("B's list %d: %+v", i, r.Errors)
			}
		})
	}
	// Wait until B holds all the calls it may hold, and the rest of its
	// flood waits in the facade.
	testenv.WaitFor(t, "B's calls to reach the upstream", func() bool { return heldB.Load() == restclient.DefaultMaxInFlightPerClient })

	start := time.Now()
	r := env.Query(t, env.Bearer(), `{ resource(id: "`+env.ID(t, "resource", 0)+`") { id title } }`, nil)
	solo := time.Since(start)
	if len(r.Errors) > 0 {
		t.Fatalf("A's query: %+v", r.Errors)
	}
	if n := heldB.Load(); n != restclient.DefaultMaxInFlightPerClient {
		t.Errorf("%d of B's calls reached the upstream while held, want its share %d", n, restclient.DefaultMaxInFlightPerClient)
	}
	t.Logf("A's query took %v while B's flood was held", solo)
	close(gate)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestOneTenantCannotOpenABreakerForAnother: tenant B's resource lookups time
// out until its breaker of the route opens; tenant A's lookup on the same
// route is still sent and answered.
func TestOneTenantCannotOpenABreakerForAnother(t *testing.T) {
	var (
		bAuth    atomic.Pointer[string]
		arrivedB atomic.Int64
	)
	env := testenv.New(t, testenv.Options{
		ClientOpts: []restclient.Option{restclient.WithRetry(restclient.RetryPolicy{})},
		Config:     func(c *stack.Config) { c.UpstreamTimeout = 300 * time.Millisecond },
		OnUpstreamRequest: func(r *http.Request) {
			if a := bAuth.Load(); a != nil && r.Header.Get("Authorization") == *a {
				arrivedB.Add(1)
				<-r.Context().Done() // B's calls hang until the facade gives up
			}
		},
	})
	b := env.Other(t)
	bAuth.Store(&b.Authorization)
	res := env.Manifest.OtherNetworks[0].IDs["resource"][0]
	q := `{ resource(id: "` + res + `") { id } }`
	for i := range 5 { // the default breaker opens after 5 failures in a row
		if r := env.Query(t, b, q, nil); len(r.Errors) != 1 || r.Errors[0].Code() != "UPSTREAM_UNAVAILABLE" {
			t.Fatalf("B's lookup %d: %+v", i, r.Errors)
		}
	}
	// The hook holds each of B's lookups before the service counts it, so the
	// counts arrive after the facade gave up: count from when all five have.
	testenv.WaitFor(t, "the upstream to count B's five lookups", func() bool {
		m, _ := env.Calls()
		return arrivedB.Load() == 5 && m[restclient.OpGetResource.Pattern()] == 5
	})
	env.ResetCalls()
	if r := env.Query(t, b, q, nil); len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, "not called") {
		t.Fatalf("B's sixth lookup was not refused by its breaker: %+v", r.Errors)
	}
	env.ExpectNoCalls(t)
	r := env.Query(t, env.Bearer(), `{ resource(id: "`+env.ID(t, "resource", 0)+`") { id } }`, nil)
	if len(r.Errors) > 0 {
		t.Fatalf("A's lookup on the same route: %+v", r.Errors)
	}
	if _, n := env.Calls(); n != 1 {
		t.Errorf("A's lookup made %d upstream calls, want 1", n)
	}
}
