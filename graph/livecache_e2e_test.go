package graph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// TestLivePollsInvalidateWhatTheirChangesMakeStale: with invoices and credit
// notes cached, a credit note created outside the API (the local service's
// test change) and seen by a subscription to its location's credit notes
// makes stale what creating it through the API would (restclient's operation
// table, POST /billing/credit_notes/v1): its invoice and the invoice's
// credit-note list, which no filter of the subscription names. The next
// read fetches both again and shows it.
func TestLivePollsInvalidateWhatTheirChangesMakeStale(t *testing.T) {
	env := liveEnv(t, func(c *stack.Config) { c.CacheTTL = "invoices=30s,creditNotes=30s" })
	creds := env.Bearer()
	inv := env.ID(t, "invoice", 0)
	read := `query($id: ID!) { invoice(id: $id) { id locationRef items { id } creditNotes(first: 100) { nodes { id } } } }`
	vars := map[string]any{"id": inv}
	var before struct {
		Invoice struct {
			LocationRef string
			Items       []struct{ ID string }
		}
	}
	first := env.Do(t, creds, read, vars, trace)
	if len(first.Errors) > 0 {
		t.Fatalf("%+v", first.Errors)
	}
	if err := json.Unmarshal(first.Data, &before); err != nil || before.Invoice.LocationRef == "" || len(before.Invoice.Items) == 0 {
		t.Fatalf("invoice %s: %v", first.Data, err)
	}
	// A credit note of the invoice to copy, made through the API (which
	// makes the cached reads stale itself).
	var made struct {
		CreateCreditNote struct{ CreditNote struct{ ID string } }
	}
	testenv.MustData(t, env.Query(t, creds, `mutation($in: CreateCreditNoteInput!) { createCreditNote(input: $in) { creditNote { id } } }`,
		map[string]any{"in": map[string]any{"invoiceRef": inv, "reason": "other", "lines": []any{map[string]any{"invoiceItemRef": before.Invoice.Items[0].ID, "amount": 0.01}}}}), &made)

	c := connectLive(t, env, initOf(creds))
	c.subscribe("1", `subscription($loc: ID) { creditNoteEvents(locationId: $loc) { kind node { id } } }`, map[string]any{"loc": before.Invoice.LocationRef})
	waitPolls(t, env, restclient.OpListCreditNotes.Route, 1) // the baseline is set

	for i := range 2 {
		r := env.Do(t, creds, read, vars, trace)
		count, hits, routes := report(t, r)
		if i == 1 && (count != 0 || hits != 2) {
			t.Fatalf("read before the change: %d calls, %d hits %v; want both from the cache", count, hits, routes)
		}
	}

	copied := restChange(t, env, "/_test/credit_notes/"+made.CreateCreditNote.CreditNote.ID+"/copy", nil)
	m := c.next("1")
	if m.Type != "next" || !strings.Contains(string(m.Payload), `"CREATED"`) || !strings.Contains(string(m.Payload), copied) {
		t.Fatalf("event %s %s, want CREATED of %s", m.Type, m.Payload, copied)
	}
	after := env.Do(t, creds, read, vars, trace)
	if count, hits, routes := report(t, after); count != 2 || hits != 0 {
		t.Fatalf("read after the poll saw the change: %d calls, %d hits %v; want both fetched again", count, hits, routes)
	}
	if !strings.Contains(string(after.Data), copied) {
		t.Errorf("the new credit note %s is missing after the poll saw it: %s", copied, after.Data)
	}
}
