package graph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// cached is an Env whose response cache keeps the given route families
// (cache.ParseTTLs), in process.
func cached(t *testing.T, ttl string) *testenv.Env {
	t.Helper()
	return testenv.New(t, testenv.Options{Config: func(c *stack.Config) { c.CacheTTL = ttl }})
}

// report decodes extensions.upstream.
func report(t *testing.T, r *testenv.Response) (count, hits int, cachedRoutes []string) {
	t.Helper()
	var rep struct {
		Count     int
		CacheHits int
		Calls     []struct {
			Path   string
			Cached bool
		}
	}
	if err := json.Unmarshal(r.Extensions["upstream"], &rep); err != nil {
		t.Fatalf("extensions.upstream: %v (%s)", err, r.Extensions["upstream"])
	}
	for _, c := range rep.Calls {
		if c.Cached {
			cachedRoutes = append(cachedRoutes, c.Path)
		}
	}
	return rep.Count, rep.CacheHits, cachedRoutes
}

var trace = map[string]string{graph.TraceHeader: "1"}

// TestResponseCacheIsPerCredential: a resource fetched once answers the same
// credential's next request from the cache, never another credential's
// (another client of the same network, or another network), and not a
// request that says Cache-Control: no-cache.
func TestResponseCacheIsPerCredential(t *testing.T) {
	env := cached(t, "resources=30s")
	q := `query($id: ID!) { resource(id: $id) { id title capacity } }`
	vars := map[string]any{"id": env.ID(t, "resource", 0)}
	upstream := func(t *testing.T, c testenv.Creds, hdr map[string]string) (calls, hits int) {
		t.Helper()
		env.ResetCalls()
		h := map[string]string{graph.TraceHeader: "1"}
		for k, v := range hdr {
			h[k] = v
		}
		r := env.Do(t, c, q, vars, h)
		if len(r.Errors) > 0 {
			t.Fatalf("%+v", r.Errors)
		}
		_, n := env.Calls()
		count, hits, routes := report(t, r)
		if int64(count) != n || len(routes) != hits {
			t.Fatalf("report: %d calls, %d hits %v; upstream counted %d", count, hits, routes, n)
		}
		return int(n), hits
	}
	if n, hits := upstream(t, env.Bearer(), nil); n != 1 || hits != 0 {
		t.Fatalf("first: %d calls, %d hits", n, hits)
	}
	if n, hits := upstream(t, env.Bearer(), nil); n != 0 || hits != 1 {
		t.Fatalf("again: %d calls, %d hits; want 0 and 1", n, hits)
	}
	if n, _ := upstream(t, env.Basic(), nil); n != 1 {
		t.Errorf("another client of the network: %d calls, want its own 1", n)
	}
	if n, _ := upstream(t, env.Bearer(), map[string]string{"Cache-Control": "no-cache"}); n != 1 {
		t.Errorf("Cache-Control: no-cache: %d calls, want 1", n)
	}
	// The other network's resource is fetched with its own credential.
	other := env.Other(t)
	env.ResetCalls()
	vars["id"] = env.Manifest.OtherNetworks[0].IDs["resource"][0]
	for range 2 {
		if r := env.Query(t, other, q, vars); len(r.Errors) > 0 {
			t.Fatalf("%+v", r.Errors)
		}
	}
	if _, n := env.Calls(); n != 1 {
		t.Errorf("other network, twice: %d calls, want 1", n)
	}
}

// TestWritesInvalidateWhatTheyMakeStale: with invoices and credit notes
// cached, a credit note created through the facade makes its invoice and the
// invoice's credit-note list stale: the next read fetches them again and
// shows the new credit note.
func TestWritesInvalidateWhatTheyMakeStale(t *testing.T) {
	env := cached(t, "invoices=30s,creditNotes=30s")
	creds := env.Bearer()
	inv := env.ID(t, "invoice", 0)
	read := `query($id: ID!) { invoice(id: $id) { id amountDue items { id } creditNotes(first: 100) { nodes { id } } } }`
	vars := map[string]any{"id": inv}
	first := env.Do(t, creds, read, vars, trace)
	if len(first.Errors) > 0 {
		t.Fatalf("%+v", first.Errors)
	}
	if r := env.Do(t, creds, read, vars, trace); len(r.Errors) > 0 {
		t.Fatalf("%+v", r.Errors)
	} else if count, hits, _ := report(t, r); count != 0 || hits != 2 {
		t.Fatalf("second read: %d calls, %d hits; want both from the cache", count, hits)
	}
	var before struct {
		Invoice struct {
			Items []struct{ ID string }
		}
	}
	testenv.MustData(t, first, &before)
	m := env.Query(t, creds, `mutation($in: CreateCreditNoteInput!) { createCreditNote(input: $in) { creditNote { id } } }`,
		map[string]any{"in": map[string]any{"invoiceRef": inv, "reason": "other", "lines": []any{map[string]any{"invoiceItemRef": before.Invoice.Items[0].ID, "amount": 0.01}}}})
	var created struct {
		CreateCreditNote struct{ CreditNote struct{ ID string } }
	}
	testenv.MustData(t, m, &created)

	after := env.Do(t, creds, read, vars, trace)
	if count, hits, routes := report(t, after); count != 2 || hits != 0 {
		t.Fatalf("read after the write: %d calls, %d hits %v; want both fetched again", count, hits, routes)
	}
	if !strings.Contains(string(after.Data), created.CreateCreditNote.CreditNote.ID) {
		t.Errorf("the new credit note %s is missing after the write: %s", created.CreateCreditNote.CreditNote.ID, after.Data)
	}
}
