package graph_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

// TestMutationInputsRefusedBeforeTheCall sends inputs the upstream refuses
// (or that no client should send) through the facade: each is
// BAD_USER_INPUT naming the field, with no upstream call.
func TestMutationInputsRefusedBeforeTheCall(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	creds := env.Bearer()
	loc := env.ID(t, "location", 0)
	inv := env.ID(t, "invoice", 0)
	item := env.ID(t, "invoiceItem", 0)
	item2 := env.ID(t, "invoiceItem", 1)
	res := env.ID(t, "resource", 0)
	post := env.ID(t, "post", 0)
	visit := env.ID(t, "visit", 0)

	const (
		cnQ        = `mutation($in: CreateCreditNoteInput!) { createCreditNote(input: $in) { creditNote { id } } }`
		visitQ     = `mutation($in: CreateVisitInput!) { createVisit(input: $in) { visit { id } } }`
		updVisitQ  = `mutation($id: ID!, $in: UpdateVisitInput!) { updateVisit(id: $id, input: $in) { visit { id } } }`
		visitReqQ  = `mutation($in: CreateVisitRequestInput!) { createVisitRequest(input: $in) { visitRequest { id } } }`
		postQ      = `mutation($in: CreatePostInput!) { createPost(input: $in) { post { id } } }`
		updPostQ   = `mutation($id: ID!, $in: UpdatePostInput!) { updatePost(id: $id, input: $in) { post { id } } }`
		day        = "2030-03-05T"
		bookStart  = day + "10:00:00Z"
		bookEnd    = day + "11:00:00Z"
		longString = 1500 * 1024
	)
	line := func(ref string, kv ...any) map[string]any {
		m := map[string]any{"invoiceItemRef": ref}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	cn := func(kv ...any) map[string]any {
		in := map[string]any{"invoiceRef": inv, "reason": "other", "lines": []any{line(item)}}
		for i := 0; i < len(kv); i += 2 {
			in[kv[i].(string)] = kv[i+1]
		}
		return map[string]any{"in": in}
	}
	booking := func(kv ...any) map[string]any {
		in := map[string]any{"resourceRef": res, "startDate": bookStart, "endDate": bookEnd}
		for i := 0; i < len(kv); i += 2 {
			in[kv[i].(string)] = kv[i+1]
		}
		return map[string]any{"in": in}
	}
	visitor := func(kv ...any) map[string]any {
		v := map[string]any{"email": "ada@example.com", "name": "Ada"}
		for i := 0; i < len(kv); i += 2 {
			v[kv[i].(string)] = kv[i+1]
		}
		return v
	}
	visitIn := func(kv ...any) map[string]any {
		in := map[string]any{"date": "2030-04-01T09:00:00Z", "locationRef": loc, "visitor": visitor()}
		for i := 0; i < len(kv); i += 2 {
			in[kv[i].(string)] = kv[i+1]
		}
		return map[string]any{"in": in}
	}
	postIn := func(kv ...any) map[string]any {
		in := map[string]any{"locationRef": loc, "text": "hello"}
		for i := 0; i < len(kv); i += 2 {
			in[kv[i].(string)] = kv[i+1]
		}
		return map[string]any{"in": in}
	}
	manyLines := make([]any, 101)
	for i := range manyLines {
		manyLines[i] = line(fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1))
	}
	manyMedia := make([]any, 21)
	for i := range manyMedia {
		manyMedia[i] = map[string]any{"key": fmt.Sprintf("k%d", i)}
	}
	long := func(n int) string { return strings.Repeat("x", n) }

	cases := []struct {
		name, query string
		vars        map[string]any
		field       string
	}{
		{"zero line amount", cnQ, cn("lines", []any{line(item, "amount", 0)}), "input.lines[0].amount"},
		{"negative line amount", cnQ, cn("lines", []any{line(item, "amount", 1), line(item2, "amount", -5)}), "input.lines[1].amount"},
		{"zero line quantity", cnQ, cn("lines", []any{line(item, "quantity", 0)}), "input.lines[0].quantity"},
		{"duplicate lines", cnQ, cn("lines", []any{line(item), line(strings.ToUpper(item))}), "input.lines[1].invoiceItemRef"},
		{"too many lines", cnQ, cn("lines", manyLines), "input.lines"},
		{"refund without transactionRef", cnQ, cn("refunds", []any{map[string]any{"amount": 5}}), "input.refunds[0].transactionRef"},
		{"zero refund", cnQ, cn("refunds", []any{map[string]any{"amount": 0, "transactionRef": unknownUUID}}), "input.refunds[0].amount"},
		{"refund without amount", cnQ, cn("refunds", []any{map[string]any{"transactionRef": unknownUUID}}), "input.refunds[0].amount"},
		{"long memo", cnQ, cn("memo", long(2001)), "input.memo"},
		{"long internalNote", cnQ, cn("internalNote", long(2001)), "input.internalNote"},
		{"long reason", cnQ, cn("reason", long(101)), "input.reason"},
		{"booking of 32 days", createBookingMutation, booking("endDate", "2030-04-06T10:00:00Z"), "input.endDate"},
		{"long booking title", createBookingMutation, booking("title", long(201)), "input.title"},
		{"long booking memo", createBookingMutation, booking("memo", long(2001)), "input.memo"},
		{"long visitor name", visitQ, visitIn("visitor", visitor("name", long(201))), "input.visitor.name"},
		{"long visitor surname", visitQ, visitIn("visitor", visitor("surname", long(201))), "input.visitor.surname"},
		{"long visitor email", visitQ, visitIn("visitor", visitor("email", long(250)+"@example.com")), "input.visitor.email"},
		{"long visit comment", visitQ, visitIn("comment", long(2001)), "input.comment"},
		{"long comment on update", updVisitQ, map[string]any{"id": visit, "in": map[string]any{"date": "2030-04-01T09:00:00Z", "comment": long(2001)}}, "input.comment"},
		{"long name on a visit request", visitReqQ, map[string]any{"in": map[string]any{"locationRef": loc, "userRefHost": unknownUUID, "visitor": visitor("name", long(201))}}, "input.visitor.name"},
		{"long post text", postQ, postIn("text", long(10001)), "input.text"},
		{"1.5 MB of text", postQ, postIn("text", long(longString)), "input.text"},
		{"1.5 MB on update", updPostQ, map[string]any{"id": post, "in": map[string]any{"text": long(longString)}}, "input.text"},
		{"empty post", postQ, postIn("text", " "), "input.text"},
		{"javascript og.url", postQ, postIn("og", map[string]any{"url": "javascript:alert(1)"}), "input.og.url"},
		{"data og.image", updPostQ, map[string]any{"id": post, "in": map[string]any{"og": map[string]any{"url": "https://example.com/", "image": "data:text/html,<script>alert(1)</script>"}}}, "input.og.image"},
		{"too many media", postQ, postIn("media", manyMedia), "input.media"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, env, creds, c.query, c.vars)
			e := expectErr(t, r, "BAD_USER_INPUT")
			expectCalls(t, env, calls{})
			if e.Extensions["field"] != c.field {
				t.Errorf("extensions.field = %v, want %s (%.200s)", e.Extensions["field"], c.field, e.Message)
			}
		})
	}
}
