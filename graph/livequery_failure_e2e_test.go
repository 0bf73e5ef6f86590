package graph_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver/hooks"
)

// liveCreditNotes reads a location's credit notes (polled) and each one's
// invoice (an invoice's items, which a new credit note of it makes stale).
const liveCreditNotes = `query($l: ID!) @live { creditNotes(locationId: $l, first: 10) { nodes { id number invoice { id number } } } }`

// TestLiveQueryFailingRerunsBackOff: a new credit note seen by the poll
// re-runs the live query, whose call for the stale invoice fails (500):
// the update carries the error (UPSTREAM_UNAVAILABLE) with an empty patch,
// so the last result stays; the re-runs go on failing and back off (far
// fewer failed updates than polls of the list meanwhile). Once the fault
// is cleared the next re-run sends the change as a patch, and so does the
// next change; every patch applied to the first result equals a fresh
// query's result.
func TestLiveQueryFailingRerunsBackOff(t *testing.T) {
	// The breaker off: every re-run calls the upstream, whose counters
	// then count the re-runs (the breaker's refusals fail them the same).
	env := liveEnvWith(t, testenv.Options{ClientOpts: []restclient.Option{restclient.WithCircuitBreaker(restclient.BreakerSettings{Disabled: true})}})
	bearer := env.Bearer()
	loc := env.ID(t, "location", 0)
	vars := map[string]any{"l": loc}
	var d struct {
		CreditNotes struct{ Nodes []struct{ ID string } }
	}
	plain := strings.Replace(liveCreditNotes, " @live", "", 1)
	testenv.MustData(t, env.Query(t, bearer, plain, vars), &d)
	if len(d.CreditNotes.Nodes) == 0 {
		t.Fatal("no credit note in the location")
	}
	note := d.CreditNotes.Nodes[0].ID

	c := connectLive(t, env, initOf(bearer))
	c.subscribe("1", liveCreditNotes, vars)
	first, raw := nextLive(t, c, "1")
	if first.Revision != 1 || len(first.Extensions.Live.Watched) < 2 {
		t.Fatalf("first result %.400s, want revision 1 watching the list and the invoice", raw)
	}
	testenv.WaitFor(t, "every watched source polled once", func() bool {
		st := env.Stack.Live.Stats()
		return st.Pollers == len(first.Extensions.Live.Watched) && st.Ready == st.Pollers
	})
	result := decodeJSON(t, first.Data)

	items := restclient.OpListInvoiceItems.Pattern()
	env.Hooks().SetFault(items, hooks.Fault{Kind: hooks.Fault500, Rate: 1})
	defer env.Hooks().ClearFaults()
	restChange(t, env, "/_test/credit_notes/"+note+"/copy", map[string]any{})

	// The first failed re-run: its error, an empty patch, no data.
	failedUpdate := func(want int) {
		t.Helper()
		upd, raw := nextLive(t, c, "1")
		if upd.Revision != want || upd.Data != nil || upd.Patch == nil || len(upd.Patch) != 0 || len(upd.Errors) == 0 {
			t.Fatalf("update %.400s, want revision %d with an empty patch, no data and the error", raw, want)
		}
		if code, _ := upd.Errors[0]["extensions"].(map[string]any)["code"].(string); code != "UPSTREAM_UNAVAILABLE" {
			t.Fatalf("update %.400s, want UPSTREAM_UNAVAILABLE", raw)
		}
	}
	failedUpdate(2)
	revision := 2

	// While the fault holds, the re-runs back off: over 30 polls of the
	// list (one a live interval), a re-run every interval would send ~30
	// failed updates; doubling up to 12 intervals sends at most 5.
	route := restclient.OpListCreditNotes.Route
	base := env.Stack.Live.Stats().Polls[route]
	waitPolls(t, env, route, base+30)
	failed := 0
	for len(c.ops("1")) > 0 {
		revision++
		failedUpdate(revision)
		failed++
	}
	polls := env.Stack.Live.Stats().Polls[route] - base
	injected := env.Hooks().Injected()[items][hooks.Fault500]
	t.Logf("%d failed re-runs after the first over %d polls; %d calls of the invoice refused", failed, polls, injected)
	if failed < 1 || int64(failed) > polls/4 {
		t.Fatalf("%d failed re-runs over %d polls: want at least one retry and backoff (at most a quarter of the polls)", failed, polls)
	}
	if injected < int64(failed)+1 {
		t.Fatalf("%d invoice calls refused, want at least one per failed re-run (%d)", injected, failed+1)
	}

	// The fault cleared: the next re-run sends the change as a patch (a
	// re-run under way as the fault is cleared may still fail).
	env.Hooks().ClearFaults()
	patchUpdate := func(inFlight int) {
		t.Helper()
		upd, raw := nextLive(t, c, "1")
		revision++
		for ; inFlight > 0 && len(upd.Errors) > 0 && upd.Patch != nil && len(upd.Patch) == 0; inFlight-- {
			upd, raw = nextLive(t, c, "1")
			revision++
		}
		if upd.Revision != revision || len(upd.Patch) == 0 || len(upd.Errors) != 0 || upd.Data != nil {
			t.Fatalf("update %.400s, want revision %d with a patch and no error", raw, revision)
		}
		result = applyPatch(t, result, upd.Patch)
		if fresh := env.Query(t, bearer, plain, vars); !reflect.DeepEqual(result, decodeJSON(t, fresh.Data)) {
			t.Fatalf("patched result differs from a fresh query's: patch %v", upd.Patch)
		}
	}
	patchUpdate(1)
	restChange(t, env, "/_test/credit_notes/"+note+"/copy", map[string]any{})
	patchUpdate(0)
}
