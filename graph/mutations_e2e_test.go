package graph_test

import (
	"github.com/workspacenet/facade/restclient"
	"slices"
	"testing"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restserver/hooks"
)

// A slot far after the demo data's bookings, on a weekday inside opening
// hours, whose length is a multiple of every demo booking step.
const (
	slotStart = "2030-03-05T10:00:00Z"
	slotEnd   = "2030-03-05T11:00:00Z"
)

const createBookingMutation = `mutation($in: CreateBookingInput!) {
  createBooking(input: $in) { booking { id resourceRef startDate endDate title resource { id title capacity type } } }
}`

// TestMutations runs every mutation once with demo ids, selects nested links
// in the same request, and reads the written object back through the facade.
func TestMutations(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	creds := env.Bearer()
	rc, ctx := env.REST(t, creds)
	loc := env.ID(t, "location", 0)

	t.Run("createBooking", func(t *testing.T) {
		res := env.ID(t, "resource", 0)
		want, _, err := rc.Resources.GetResource(ctx, res)
		if err != nil {
			t.Fatal(err)
		}
		if want.Capacity == nil || *want.Capacity != 1 {
			t.Fatalf("test needs a resource of capacity 1, got %v", want.Capacity)
		}
		in := map[string]any{"resourceRef": res, "startDate": slotStart, "endDate": slotEnd, "title": "e2e booking"}
		d := mustRun(t, env, creds, createBookingMutation, map[string]any{"in": in})
		expectCalls(t, env, calls{restclient.OpCreateBooking: 1, restclient.OpGetResource: 1})
		b := get(d, "createBooking.booking")
		if str(b, "id") == "" || str(b, "resourceRef") != res || str(b, "startDate") != slotStart || str(b, "endDate") != slotEnd || str(b, "title") != "e2e booking" {
			t.Fatalf("booking: %s", pretty(b))
		}
		sameFields(t, "booking.resource", get(b, "resource"), want, "id", "title", "capacity", "type")
		// The booking exists: the capacity-1 resource is now full at that slot.
		r := run(t, env, creds, createBookingMutation, map[string]any{"in": in})
		expectErr(t, r, "CONFLICT")
		expectCalls(t, env, calls{restclient.OpCreateBooking: 1})
	})

	t.Run("createVisit+updateVisit", func(t *testing.T) {
		in := map[string]any{
			"date": "2030-04-01T09:00:00Z", "locationRef": loc, "comment": "e2e visit",
			"visitor": map[string]any{"email": "ada@example.com", "name": "Ada", "surname": "Lovelace"},
		}
		d := mustRun(t, env, creds, `mutation($in: CreateVisitInput!) { createVisit(input: $in) { visit { id date comment locationRef visitor { email name surname } location { id } } } }`, map[string]any{"in": in})
		expectCalls(t, env, calls{restclient.OpCreateVisit: 1})
		v := get(d, "createVisit.visit")
		id := str(v, "id")
		if id == "" || str(v, "comment") != "e2e visit" || str(v, "date") != "2030-04-01T09:00:00Z" || str(v, "locationRef") != loc ||
			str(v, "visitor.email") != "ada@example.com" || str(v, "location.id") != loc {
			t.Fatalf("created visit: %s", pretty(v))
		}
		d = mustRun(t, env, creds, `query($id: ID!) { visit(id: $id) { id comment date visitor { name } } }`, map[string]any{"id": id})
		expectCalls(t, env, calls{restclient.OpGetVisit: 1})
		if str(d, "visit.id") != id || str(d, "visit.comment") != "e2e visit" || str(d, "visit.visitor.name") != "Ada" {
			t.Fatalf("visit read back: %s", pretty(d))
		}

		d = mustRun(t, env, creds, `mutation($id: ID!, $in: UpdateVisitInput!) { updateVisit(id: $id, input: $in) { visit { id date comment } } }`,
			map[string]any{"id": id, "in": map[string]any{"date": "2030-04-02T09:30:00Z", "comment": "moved"}})
		expectCalls(t, env, calls{restclient.OpUpdateVisit: 1})
		if str(d, "updateVisit.visit.id") != id || str(d, "updateVisit.visit.comment") != "moved" || str(d, "updateVisit.visit.date") != "2030-04-02T09:30:00Z" {
			t.Fatalf("updated visit: %s", pretty(d))
		}
		back, _, err := rc.Visitors.GetVisit(ctx, id)
		if err != nil || deref(back.Comment) != "moved" || back.Date.UTC().Format("2006-01-02T15:04:05Z") != "2030-04-02T09:30:00Z" {
			t.Fatalf("REST visit after update: %v %+v", err, back)
		}
	})

	t.Run("createVisitRequest", func(t *testing.T) {
		host := env.ID(t, "user", 0)
		in := map[string]any{"locationRef": loc, "userRefHost": host, "visitor": map[string]any{"email": "grace@example.com", "name": "Grace"}}
		d := mustRun(t, env, creds, `mutation($in: CreateVisitRequestInput!) { createVisitRequest(input: $in) { visitRequest { id locationRef userRefHost userHost { id } visitor { email name } location { id } } } }`, map[string]any{"in": in})
		expectCalls(t, env, calls{restclient.OpCreateVisitRequest: 1})
		v := get(d, "createVisitRequest.visitRequest")
		if str(v, "id") == "" || str(v, "locationRef") != loc || str(v, "userRefHost") != host || str(v, "visitor.email") != "grace@example.com" || str(v, "location.id") != loc {
			t.Fatalf("visit request: %s", pretty(v))
		}
		if slices.Contains(env.Manifest.IDs["visitRequest"], str(v, "id")) || str(v, "userHost.id") != host {
			t.Fatalf("visit request is not new or has the wrong host: %s", pretty(v))
		}
	})

	t.Run("createPost+updatePost", func(t *testing.T) {
		d := mustRun(t, env, creds, `mutation($in: CreatePostInput!) { createPost(input: $in) { post { id text locationRef location { id } comments { id } } } }`,
			map[string]any{"in": map[string]any{"locationRef": loc, "text": "hello from e2e"}})
		// The nested comments link costs the post's one comments call.
		expectCalls(t, env, calls{restclient.OpCreatePost: 1, restclient.OpListComments: 1})
		p := get(d, "createPost.post")
		id := str(p, "id")
		if id == "" || str(p, "text") != "hello from e2e" || str(p, "locationRef") != loc || str(p, "location.id") != loc {
			t.Fatalf("created post: %s", pretty(p))
		}
		if c, ok := get(p, "comments").([]any); !ok || len(c) != 0 {
			t.Fatalf("new post comments: %v", get(p, "comments"))
		}
		d = mustRun(t, env, creds, `mutation($id: ID!, $in: UpdatePostInput!) { updatePost(id: $id, input: $in) { post { id text } } }`,
			map[string]any{"id": id, "in": map[string]any{"text": "edited"}})
		expectCalls(t, env, calls{restclient.OpUpdatePost: 1})
		if str(d, "updatePost.post.id") != id || str(d, "updatePost.post.text") != "edited" {
			t.Fatalf("updated post: %s", pretty(d))
		}
		// The post exists upstream: its comment list is readable (an unknown
		// post is a 404).
		d = mustRun(t, env, creds, `query($p: ID!) { postComments(postId: $p) { id } }`, map[string]any{"p": id})
		expectCalls(t, env, calls{restclient.OpListComments: 1})
		if c, ok := get(d, "postComments").([]any); !ok || len(c) != 0 {
			t.Fatalf("postComments of the new post: %s", pretty(d))
		}
	})

	t.Run("createCreditNote", func(t *testing.T) {
		inv := env.ID(t, "invoice", 0)
		items, _, err := rc.Billing.ListInvoiceItems(ctx, inv)
		if err != nil || len(items.Items) == 0 {
			t.Fatalf("REST invoice items: %v", err)
		}
		item := items.Items[0].ID
		in := map[string]any{"invoiceRef": inv, "reason": "other", "memo": "e2e credit", "lines": []any{map[string]any{"invoiceItemRef": item, "amount": 0.01}}}
		d := mustRun(t, env, creds, `mutation($in: CreateCreditNoteInput!) { createCreditNote(input: $in) { creditNote { id invoiceRef reason memo totalAmount invoice { id number } lines { invoiceItemRef amount: totalAmount invoiceItem { id description } invoice { id } } } } }`, map[string]any{"in": in})
		// invoice, lines.invoice and lines.invoiceItem share one invoice call.
		expectCalls(t, env, calls{restclient.OpCreateCreditNote: 1, restclient.OpListInvoiceItems: 1})
		cn := get(d, "createCreditNote.creditNote")
		id := str(cn, "id")
		if id == "" || str(cn, "invoiceRef") != inv || str(cn, "reason") != "other" || str(cn, "memo") != "e2e credit" ||
			str(cn, "invoice.id") != inv || str(cn, "invoice.number") != deref(items.Invoice.Number) ||
			str(cn, "lines.0.invoiceItemRef") != item || str(cn, "lines.0.invoiceItem.id") != item || str(cn, "lines.0.invoice.id") != inv {
			t.Fatalf("credit note: %s", pretty(cn))
		}
		if get(cn, "lines.0.amount") != 0.01 {
			t.Errorf("line amount %v, want 0.01", get(cn, "lines.0.amount"))
		}
		// It exists: the invoice's credit notes list it.
		d = mustRun(t, env, creds, `query($i: ID) { creditNotes(invoiceId: $i, first: 100) { nodes { id } } }`, map[string]any{"i": inv})
		if !distinct(d, "creditNotes.nodes.*.id")[id] {
			t.Fatalf("new credit note %s missing from the invoice's list: %s", id, pretty(d))
		}
	})
}

// TestMutationNotRetried injects a 503 on POST /resources/bookings/v1: the
// mutation reaches the upstream exactly once and fails UPSTREAM_UNAVAILABLE.
func TestMutationNotRetried(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	env.Hooks().SetFault(restclient.OpCreateBooking.Pattern(), hooks.Fault{Kind: hooks.Fault503, Rate: 1})
	in := map[string]any{"resourceRef": env.ID(t, "resource", 1), "startDate": slotStart, "endDate": slotEnd}
	r := run(t, env, env.Bearer(), createBookingMutation, map[string]any{"in": in})
	e := expectErr(t, r, "UPSTREAM_UNAVAILABLE")
	expectCalls(t, env, calls{restclient.OpCreateBooking: 1})
	if e.PathString() != "createBooking" {
		t.Errorf("error path %q", e.PathString())
	}
	if str(jsonTree(t, r.Data), "createBooking") != "" || get(jsonTree(t, r.Data), "createBooking") != nil {
		t.Errorf("data: %s", r.Data)
	}
}
