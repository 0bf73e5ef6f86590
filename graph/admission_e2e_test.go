package graph_test

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

// heldFirst returns testenv options whose upstream, once armed is set, holds
// the first request it receives until release is closed (or the request
// ends); arrived is closed when it arrives, and seen counts the requests the
// upstream received while armed.
func heldFirst(adjust func(*graph.Options)) (o testenv.Options, armed *atomic.Bool, arrived chan struct{}, release chan struct{}, seen *atomic.Int64) {
	armed, arrived, release, seen = &atomic.Bool{}, make(chan struct{}), make(chan struct{}), &atomic.Int64{}
	o = testenv.Options{
		GraphOpts: adjust,
		OnUpstreamRequest: func(r *http.Request) {
			if armed.Load() && seen.Add(1) == 1 {
				close(arrived)
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}
		},
	}
	return o, armed, arrived, release, seen
}

// transactionsQuery costs first+2: the location, its connection, first nodes.
func transactionsQuery(env *testenv.Env, t *testing.T, first int) string {
	return `{ location(id: "` + env.ID(t, "location", 0) + `") { transactions(first: ` + strconv.Itoa(first) + `) { nodes { id } } } }`
}

func waitArrived(t *testing.T, arrived, done <-chan struct{}) {
	t.Helper()
	select {
	case <-arrived:
	case <-done:
		t.Fatal("the first operation answered without an upstream call")
	}
}

// TestAdmissionRefusesWhatDoesNotFit: with 100 cost units in flight, an
// operation of cost 62 held at its first upstream call leaves no room for a
// second one: after its short wait it is refused with 503, Retry-After and
// OVERLOADED, without reaching the upstream. An operation of cost 1 still
// fits beside the first; once the first has answered, its units are back and
// the second runs.
func TestAdmissionRefusesWhatDoesNotFit(t *testing.T) {
	o, armed, arrived, release, seen := heldFirst(func(g *graph.Options) {
		g.MaxCostInFlight = 100
		g.AdmissionWait = 50 * time.Millisecond
	})
	env := testenv.New(t, o)
	heavy := transactionsQuery(env, t, 60)
	light := `{ resource(id: "` + env.ID(t, "resource", 0) + `") { id } }`
	// Trusted credentials: the light operation's call does not wait for the
	// held one's answer (the authentication gate's probe).
	if r := env.Query(t, env.Bearer(), light, nil); len(r.Errors) > 0 {
		t.Fatal(r.Raw)
	}
	armed.Store(true)

	var wg sync.WaitGroup
	var first *testenv.Response
	done := make(chan struct{})
	wg.Go(func() { defer close(done); first = env.Query(t, env.Bearer(), heavy, nil) })
	waitArrived(t, arrived, done)

	r := env.Query(t, env.Bearer(), heavy, nil)
	if r.Status != http.StatusServiceUnavailable {
		t.Errorf("second heavy operation: HTTP %d, want 503 (%s)", r.Status, r.Raw)
	}
	if got := r.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	if len(r.Errors) != 1 || r.Errors[0].Code() != errcode.Overloaded || len(r.Data) != 0 && string(r.Data) != "null" {
		t.Errorf("want one OVERLOADED error and no data, got %s", r.Raw)
	}
	if n := seen.Load(); n != 1 {
		t.Errorf("the upstream received %d requests, want only the held one", n)
	}

	lr := env.Query(t, env.Bearer(), light, nil)
	if lr.Status != http.StatusOK || len(lr.Errors) > 0 {
		t.Errorf("a cost-1 operation beside the held one: HTTP %d %s", lr.Status, lr.Raw)
	}

	close(release)
	wg.Wait()
	if first.Status != http.StatusOK || len(first.Errors) > 0 {
		t.Fatalf("the held operation: HTTP %d %s", first.Status, first.Raw)
	}
	again := env.Query(t, env.Bearer(), heavy, nil)
	if again.Status != http.StatusOK || len(again.Errors) > 0 {
		t.Errorf("after the first answered, the second: HTTP %d %s", again.Status, again.Raw)
	}
}

// TestAdmissionDefaultsAdmitTwoOperationsAtTheCostLimit: under the default
// bound, an operation at the default cost limit held in flight leaves room
// for another one at the limit (both cost 9902, the cost limit is 10000).
func TestAdmissionDefaultsAdmitTwoOperationsAtTheCostLimit(t *testing.T) {
	o, armed, arrived, release, _ := heldFirst(func(g *graph.Options) { g.AdmissionWait = 0 })
	env := testenv.New(t, o)
	// Distinct page sizes, so the second does not share the held GET.
	loc := env.ID(t, "location", 0)
	q := `{ location(id: "` + loc + `") { transactions(first: 100) { nodes { invoice { creditNotes(first: 96) { nodes { id } } } } } } }`
	q2 := `{ location(id: "` + loc + `") { transactions(first: 99) { nodes { invoice { creditNotes(first: 97) { nodes { id } } } } } } }`
	armed.Store(true)
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		if r := env.Query(t, env.Bearer(), q, nil); r.Status != http.StatusOK {
			t.Errorf("first operation: HTTP %d %.300s", r.Status, r.Raw)
		}
	})
	waitArrived(t, arrived, done)
	r := env.Query(t, env.Bearer(), q2, nil)
	close(release)
	wg.Wait()
	if r.Status != http.StatusOK || len(r.Errors) > 0 {
		t.Errorf("second operation at the cost limit: HTTP %d %.300s", r.Status, r.Raw)
	}
}

// TestResponseTooLarge: a response whose data is above -max-response-bytes
// is answered RESPONSE_TOO_LARGE alone, data null; a smaller one is whole.
func TestResponseTooLarge(t *testing.T) {
	env := testenv.New(t, testenv.Options{GraphOpts: func(g *graph.Options) { g.MaxResponseBytes = 2000 }})
	big := env.Query(t, env.Bearer(), transactionsQuery(env, t, 100), nil)
	if len(big.Errors) != 1 || big.Errors[0].Code() != errcode.ResponseTooLarge || string(big.Data) != "null" {
		t.Errorf("want RESPONSE_TOO_LARGE alone and data null, got HTTP %d %.500s", big.Status, big.Raw)
	}
	if len(big.Raw) > 2000 {
		t.Errorf("the refusal is %d bytes", len(big.Raw))
	}
	small := env.Query(t, env.Bearer(), transactionsQuery(env, t, 2), nil)
	if len(small.Errors) > 0 || !strings.Contains(string(small.Data), `"nodes"`) {
		t.Errorf("a small response: %s", small.Raw)
	}
}
