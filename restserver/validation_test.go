package restserver

import (
	"strings"
	"testing"

	"github.com/workspacenet/facade/restclient"
)

// count returns the number of rows of table.
func (ts *testServer) count(t testing.TB, table string) int {
	t.Helper()
	var n int
	if err := ts.db.read.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestValidation(t *testing.T) {
	ts := newTestServer(t)
	ids := ts.Manifest.IDs
	loc, inv := ids["location"][0], ids["invoice"][0]
	// An item of another invoice.
	var foreignItem string
	ts.db.read.QueryRow(`SELECT id FROM invoice_items WHERE invoice_id != ? AND network_id = ? LIMIT 1`, inv, ts.Manifest.NetworkID).Scan(&foreignItem)
	cn := func(fields map[string]any) map[string]any {
		body := map[string]any{"invoiceRef": inv, "reason": "other", "lines": []any{map[string]any{"invoiceItemRef": ids["invoiceItem"][0], "amount": 0.01}}}
		for k, v := range fields {
			if v == nil {
				delete(body, k)
			} else {
				body[k] = v
			}
		}
		return map[string]any{"creditNote": body}
	}
	bk := func(fields map[string]any) map[string]any {
		body := map[string]any{"resourceRef": ids["resource"][0], "startDate": "2029-01-01T10:00:00Z", "endDate": "2029-01-01T11:00:00Z"}
		for k, v := range fields {
			if v == nil {
				delete(body, k)
			} else {
				body[k] = v
			}
		}
		return map[string]any{"booking": body}
	}
	visitor := map[string]any{"email": "a@example.com", "name": "A"}
	cases := []struct {
		name, method, path string
		body               any
		mention            string
	}{
		{"malformed path uuid", "GET", "/resources/v1/not-a-uuid", nil, "id"},
		{"malformed product id", "GET", "/shop/products/v1/123", nil, "productId"},
		{"malformed invoice id", "GET", "/billing/invoices/v1/xyz/items", nil, "id"},
		{"credit notes without filter", "GET", restclient.OpListCreditNotes.Route, nil, "invoiceRef or locationRef"},
		{"credit notes bad invoiceRef", "GET", "/billing/credit_notes/v1?invoiceRef=1", nil, "invoiceRef"},
		{"transactions without location", "GET", restclient.OpListTransactions.Route, nil, "locationRef"},
		{"transactions unknown status", "GET", "/transactions/money/v1?locationRef=" + loc + "&status=done", nil, "status"},
		{"transactions unknown type", "GET", "/transactions/money/v1?locationRef=" + loc + "&type=gift", nil, "type"},
		{"transactions limit 0", "GET", "/transactions/money/v1?locationRef=" + loc + "&limit=0", nil, "limit"},
		{"transactions limit 101", "GET", "/transactions/money/v1?locationRef=" + loc + "&limit=101", nil, "limit"},
		{"transactions limit text", "GET", "/transactions/money/v1?locationRef=" + loc + "&limit=ten", nil, "limit"},
		{"transactions bad date", "GET", "/transactions/money/v1?locationRef=" + loc + "&createDate[gte]=yesterday", nil, "createDate[gte]"},
		{"transactions date range reversed", "GET", "/transactions/money/v1?locationRef=" + loc + "&createDate[gte]=2026-01-02T00:00:00Z&createDate[lte]=2026-01-01T00:00:00Z", nil, "createDate[lte]"},
		{"transactions bad token", "GET", "/transactions/money/v1?locationRef=" + loc + "&nextPageToken=abc", nil, "nextPageToken"},
		{"products without location", "GET", restclient.OpListProducts.Route, nil, "locationRef"},
		{"orders without location", "GET", restclient.OpListOrders.Route, nil, "locationRef"},
		{"orders unknown status", "GET", "/shop/orders/v1?locationRef=" + loc + "&status=lost", nil, "status"},
		{"redemptions without filter", "GET", restclient.OpListRedemptions.Route, nil, "couponRef or promocodeRef"},
		{"redemptions limit 500", "GET", "/discounts/redemptions/v1?couponRef=" + ids["coupon"][0] + "&limit=500", nil, "limit"},
		{"malformed JSON", "POST", restclient.OpCreateBooking.Route, `{"booking": {`, "malformed JSON"},
		{"not an object", "POST", restclient.OpCreateBooking.Route, `[1,2]`, "JSON object"},
		{"missing wrapper", "POST", restclient.OpCreateBooking.Route, `{"resourceRef": "x"}`, "resourceRef"},
		{"empty body", "POST", restclient.OpCreateBooking.Route, ``, "malformed JSON"},
		{"null wrapper", "POST", restclient.OpCreateBooking.Route, `{"booking": null}`, "booking: is required"},
		{"unknown field", "POST", restclient.OpCreateBooking.Route, bk(map[string]any{"color": "red"}), "booking.color"},
		{"wrong type", "POST", restclient.OpCreateBooking.Route, bk(map[string]any{"title": 7}), "booking.title"},
		{"bad timestamp", "POST", restclient.OpCreateBooking.Route, bk(map[string]any{"startDate": "tomorrow"}), "booking.startDate"},
		{"date-only timestamp", "POST", restclient.OpCreateBooking.Route, bk(map[string]any{"startDate": "2029-01-01"}), "booking.startDate: must be an RFC 3339"},
		{"zoneless timestamp", "POST", restclient.OpCreateBooking.Route, bk(map[string]any{"endDate": "2029-01-01T11:00:00"}), "booking.endDate: must be an RFC 3339"},
		{"numeric timestamp", "POST", restclient.OpCreateBooking.Route, bk(map[string]any{"startDate": 1861920000}), "booking.startDate: must be an RFC 3339"},
		{"booking missing resource", "POST", restclient.OpCreateBooking.Route, bk(map[string]any{"resourceRef": nil}), "booking.resourceRef"},
		{"booking bad resource uuid", "POST", restclient.OpCreateBooking.Route, bk(map[string]any{"resourceRef": "r1"}), "booking.resourceRef"},
		{"booking missing start", "POST", restclient.OpCreateBooking.Route, bk(map[string]any{"startDate": nil}), "booking.startDate"},
		{"booking missing end", "POST", restclient.OpCreateBooking.Route, bk(map[string]any{"endDate": nil}), "booking.endDate"},
		{"booking end before start", "POST", restclient.OpCreateBooking.Route, bk(map[string]any{"endDate": "2029-01-01T09:00:00Z"}), "booking.endDate"},
		{"booking too short", "POST", restclient.OpCreateBooking.Route, bk(map[string]any{"endDate": "2029-01-01T10:10:00Z"}), "at least 30"},
		{"booking too long", "POST", restclient.OpCreateBooking.Route, bk(map[string]any{"endDate": "2029-01-02T10:00:00Z"}), "at most 600"},
		{"booking off step", "POST", restclient.OpCreateBooking.Route, bk(map[string]any{"endDate": "2029-01-01T11:15:00Z"}), "multiple of 30"},
		{"booking bad owner", "POST", restclient.OpCreateBooking.Route, bk(map[string]any{"membershipRefOwner": "me"}), "booking.membershipRefOwner"},
		{"credit note missing invoice", "POST", restclient.OpListCreditNotes.Route, cn(map[string]any{"invoiceRef": nil}), "creditNote.invoiceRef"},
		{"credit note missing reason", "POST", restclient.OpListCreditNotes.Route, cn(map[string]any{"reason": nil}), "creditNote.reason"},
		{"credit note unknown reason", "POST", restclient.OpListCreditNotes.Route, cn(map[string]any{"reason": "whim"}), "creditNote.reason"},
		{"credit note no lines", "POST", restclient.OpListCreditNotes.Route, cn(map[string]any{"lines": []any{}}), "creditNote.lines"},
		{"credit note line without item", "POST", restclient.OpListCreditNotes.Route, cn(map[string]any{"lines": []any{map[string]any{"amount": 1}}}), "creditNote.lines[0].invoiceItemRef"},
		{"credit note negative amount", "POST", restclient.OpListCreditNotes.Route, cn(map[string]any{"lines": []any{map[string]any{"invoiceItemRef": ids["invoiceItem"][0], "amount": -1}}}), "creditNote.lines[0].amount"},
		{"credit note zero quantity", "POST", restclient.OpListCreditNotes.Route, cn(map[string]any{"lines": []any{map[string]any{"invoiceItemRef": ids["invoiceItem"][0], "quantity": 0}}}), "creditNote.lines[0].quantity"},
		{"credit note foreign item", "POST", restclient.OpListCreditNotes.Route, cn(map[string]any{"lines": []any{
			map[string]any{"invoiceItemRef": ids["invoiceItem"][0], "amount": 0.01}, map[string]any{"invoiceItemRef": foreignItem, "amount": 0.01}}}), "creditNote.lines[1].invoiceItemRef"},
		{"credit note duplicate item", "POST", restclient.OpListCreditNotes.Route, cn(map[string]any{"lines": []any{
			map[string]any{"invoiceItemRef": ids["invoiceItem"][0]}, map[string]any{"invoiceItemRef": ids["invoiceItem"][0]}}}), "creditNote.lines[1].invoiceItemRef"},
		{"credit note refund without transaction", "POST", restclient.OpListCreditNotes.Route, cn(map[string]any{"refunds": []any{map[string]any{"amount": 1}}}), "creditNote.refunds[0].transactionRef"},
		{"visit missing date", "POST", restclient.OpCreateVisit.Route, map[string]any{"visit": map[string]any{"locationRef": loc, "visitor": visitor}}, "visit.date"},
		{"visit missing location", "POST", restclient.OpCreateVisit.Route, map[string]any{"visit": map[string]any{"date": "2026-02-01T10:00:00Z", "visitor": visitor}}, "visit.locationRef"},
		{"visit missing visitor", "POST", restclient.OpCreateVisit.Route, map[string]any{"visit": map[string]any{"date": "2026-02-01T10:00:00Z", "locationRef": loc}}, "visit.visitor"},
		{"visit empty name", "POST", restclient.OpCreateVisit.Route, map[string]any{"visit": map[string]any{"date": "2026-02-01T10:00:00Z", "locationRef": loc,
			"visitor": map[string]any{"email": "a@example.com", "name": " "}}}, "visit.visitor.name"},
		{"visit bad email", "POST", restclient.OpCreateVisit.Route, map[string]any{"visit": map[string]any{"date": "2026-02-01T10:00:00Z", "locationRef": loc,
			"visitor": map[string]any{"email": "nope", "name": "A"}}}, "visit.visitor.email"},
		{"visit update without date", "PUT", "/visitors/visits/v1/" + ids["visit"][0], map[string]any{"visit": map[string]any{"comment": "x"}}, "visit.date"},
		{"visit update without body", "PUT", "/visitors/visits/v1/" + ids["visit"][0], map[string]any{}, "visit: is required"},
		{"request missing host", "POST", restclient.OpCreateVisitRequest.Route, map[string]any{"request": map[string]any{"locationRef": loc, "visitor": visitor}}, "request.userRefHost"},
		{"request missing email", "POST", restclient.OpCreateVisitRequest.Route, map[string]any{"request": map[string]any{"locationRef": loc, "userRefHost": ids["user"][0],
			"visitor": map[string]any{"name": "A"}}}, "request.visitor.email"},
		{"post missing location", "POST", restclient.OpCreatePost.Route, map[string]any{"post": map[string]any{"text": "x"}}, "post.locationRef"},
		{"post empty", "POST", restclient.OpCreatePost.Route, map[string]any{"post": map[string]any{"locationRef": loc}}, "post.text"},
		{"post media without key", "POST", restclient.OpCreatePost.Route, map[string]any{"post": map[string]any{"locationRef": loc, "media": []any{map[string]any{}}}}, "post.media[0].key"},
		{"post og without url", "POST", restclient.OpCreatePost.Route, map[string]any{"post": map[string]any{"locationRef": loc, "text": "x", "og": map[string]any{"title": "t"}}}, "post.og.url"},
		{"post update locationRef", "PUT", "/feed/posts/v1/" + ids["post"][0], map[string]any{"post": map[string]any{"locationRef": loc}}, "post.locationRef"},
		{"oversized body", "PUT", "/feed/posts/v1/" + ids["post"][0], `{"post": {"text": "` + strings.Repeat("x", maxBodyBytes) + `"}}`, "exceeds"},
	}
	tables := []string{"credit_notes", "bookings", "visits", "visit_requests", "posts", "transactions"}
	before := map[string]int{}
	for _, tb := range tables {
		before[tb] = ts.count(t, tb)
	}
	var postBefore, visitBefore string
	ts.db.read.QueryRow(`SELECT doc FROM posts WHERE id = ?`, ids["post"][0]).Scan(&postBefore)
	ts.db.read.QueryRow(`SELECT doc FROM visits WHERE id = ?`, ids["visit"][0]).Scan(&visitBefore)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts.do(t, ts.bearer(), c.method, c.path, c.body).wantError(t, 400, "invalid_request", c.mention)
		})
	}
	for _, tb := range tables {
		if n := ts.count(t, tb); n != before[tb] {
			t.Errorf("%s: %d rows after rejected requests, %d before", tb, n, before[tb])
		}
	}
	var postAfter, visitAfter string
	ts.db.read.QueryRow(`SELECT doc FROM posts WHERE id = ?`, ids["post"][0]).Scan(&postAfter)
	ts.db.read.QueryRow(`SELECT doc FROM visits WHERE id = ?`, ids["visit"][0]).Scan(&visitAfter)
	if postAfter != postBefore || visitAfter != visitBefore {
		t.Error("a rejected update changed the record")
	}
}

// TestLimitCoercion: credit notes and orders coerce limit. The OpenAPI
// document says 1..100 (the spec's contract), so the requests outside it go
// to the handler directly (outsideContract), not through the validator.
func TestLimitCoercion(t *testing.T) {
	ts := newTestServer(t)
	loc := ts.Manifest.IDs["location"][0]
	for _, c := range []struct {
		query string
		want  int
	}{{"", 25}, {"&limit=0", 25}, {"&limit=-3", 25}, {"&limit=ten", 25}, {"&limit=3", 3}} {
		var out struct {
			Orders      []any
			CreditNotes []any
		}
		for _, path := range []string{"/shop/orders/v1?locationRef=" + loc + c.query, "/billing/credit_notes/v1?locationRef=" + loc + c.query} {
			r := ts.outsideContract(t, ts.basic(), path)
			if r.status != 200 {
				t.Fatalf("GET %s: %d %s", path, r.status, r.body)
			}
			r.json(t, &out)
		}
		if len(out.Orders) != c.want || len(out.CreditNotes) != c.want {
			t.Errorf("limit%s: %d orders, %d credit notes, want %d", c.query, len(out.Orders), len(out.CreditNotes), c.want)
		}
	}
	var out struct{ Transactions []any }
	ts.ok(t, ts.basic(), 200, "GET", "/transactions/money/v1?limit=100&locationRef="+loc, nil).json(t, &out)
	if len(out.Transactions) != 100 {
		t.Errorf("limit=100: %d transactions", len(out.Transactions))
	}
	var orders struct{ Orders []any }
	r := ts.outsideContract(t, ts.basic(), "/shop/orders/v1?limit=1000&locationRef="+loc)
	if r.status != 200 {
		t.Fatalf("limit=1000: %d %s", r.status, r.body)
	}
	r.json(t, &orders)
	if len(orders.Orders) != 30 { // all of them: fewer than 100
		t.Errorf("limit=1000: %d orders", len(orders.Orders))
	}
}
