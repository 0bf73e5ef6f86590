package graph_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

const (
	visitEventsQuery      = `subscription($id: ID!) { visitEvents(id: $id) { kind node { id comment } } }`
	creditNoteEventsQuery = `subscription($inv: ID) { creditNoteEvents(invoiceId: $inv) { kind node { id } } }`
	updateVisitMutation   = `mutation($id: ID!, $in: UpdateVisitInput!) { updateVisit(id: $id, input: $in) { visit { id } } }`
	createNoteMutation    = `mutation($in: CreateCreditNoteInput!) { createCreditNote(input: $in) { creditNote { id } } }`
)

// liveNode is the kind and node of a subscription's event, whatever its field.
func liveNode(t *testing.T, c *wsClient, id string) (kind, nodeID, comment string) {
	t.Helper()
	m := c.next(id)
	var ev struct {
		Data map[string]struct {
			Kind string
			Node *struct{ ID, Comment string }
		}
	}
	if m.Type != "next" || json.Unmarshal(m.Payload, &ev) != nil || len(ev.Data) != 1 {
		t.Fatalf("operation %s: %s %s", id, m.Type, m.Payload)
	}
	for _, e := range ev.Data {
		if e.Node != nil {
			return e.Kind, e.Node.ID, e.Node.Comment
		}
		return e.Kind, "", ""
	}
	return
}

// TestWritesPollTheWritersSourcesAtOnce: with polls a minute apart, a
// client's updateVisit and createCreditNote through the facade reach that
// client's visitEvents and creditNoteEvents (the next poll would be a
// minute later, past the test's wait): each write costs its own call and
// one poll of the source it made stale, and another client of the same
// network subscribed to the same sources (the read-only credential) is not
// polled early.
func TestWritesPollTheWritersSourcesAtOnce(t *testing.T) {
	env := liveEnv(t, func(c *stack.Config) { c.Live.Interval = time.Minute })
	writer, other := env.Bearer(), env.ReadOnly()
	visit, inv := env.ID(t, "visit", 0), env.ID(t, "invoice", 0)
	var invoice struct {
		Invoice struct{ Items []struct{ ID string } }
	}
	testenv.MustData(t, env.Query(t, writer, `query($id: ID!) { invoice(id: $id) { items { id } } }`, map[string]any{"id": inv}), &invoice)
	if len(invoice.Invoice.Items) == 0 {
		t.Fatalf("invoice %s has no items", inv)
	}
	var clients []*wsClient
	for _, creds := range []testenv.Creds{writer, other} {
		c := connectLive(t, env, initOf(creds))
		c.subscribe("visit", visitEventsQuery, map[string]any{"id": visit})
		c.subscribe("notes", creditNoteEventsQuery, map[string]any{"inv": inv})
		clients = append(clients, c)
	}
	testenv.WaitFor(t, "four pollers' baselines", func() bool { return env.Stack.Live.Stats().Ready == 4 })
	polls := func() map[string]int64 { return env.Stack.Live.Stats().Polls }
	before := polls()
	env.ResetCalls()

	testenv.MustData(t, env.Query(t, writer, updateVisitMutation,
		map[string]any{"id": visit, "in": map[string]any{"date": "2030-05-01T10:00:00Z", "comment": "written through"}}), &struct{}{})
	if kind, id, comment := liveNode(t, clients[0], "visit"); kind != "UPDATED" || id != visit || comment != "written through" {
		t.Fatalf("the writer's visitEvents: %s %s %q, want UPDATED %s \"written through\"", kind, id, comment, visit)
	}
	expectCalls(t, env, calls{restclient.OpUpdateVisit: 1, restclient.OpGetVisit: 1})
	env.ResetCalls()

	var made struct {
		CreateCreditNote struct{ CreditNote struct{ ID string } }
	}
	testenv.MustData(t, env.Query(t, writer, createNoteMutation, map[string]any{"in": map[string]any{
		"invoiceRef": inv, "reason": "other", "lines": []any{map[string]any{"invoiceItemRef": invoice.Invoice.Items[0].ID, "amount": 0.01}}}}), &made)
	if kind, id, _ := liveNode(t, clients[0], "notes"); kind != "CREATED" || id != made.CreateCreditNote.CreditNote.ID {
		t.Fatalf("the writer's creditNoteEvents: %s %s, want CREATED %s", kind, id, made.CreateCreditNote.CreditNote.ID)
	}
	expectCalls(t, env, calls{restclient.OpCreateCreditNote: 1, restclient.OpListCreditNotes: 1})

	// One poll each, the writer's: the other client's pollers were not polled.
	after := polls()
	for _, op := range []restclient.Row{restclient.OpGetVisit, restclient.OpListCreditNotes} {
		route := op.Row().Route
		if n := after[route] - before[route]; n != 1 {
			t.Errorf("%s: %d polls after the writes, want the writer's one", route, n)
		}
	}
}
