package restserver

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver/openapi/openapitest"
)

// The OpenAPI document promises what the service does, checked both ways:
// what the document declares, and a live request proving the service
// behaves so.

func loadDocument(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestDocumentLimitBounds: every limit parameter is an integer 1..100, and
// the service answers within it.
func TestDocumentLimitBounds(t *testing.T) {
	doc := loadDocument(t)
	var paged []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for _, p := range op.Parameters {
				if p.Value.Name != "limit" {
					continue
				}
				paged = append(paged, method+" "+path)
				s := p.Value.Schema.Value
				if !s.Type.Is("integer") || s.Min == nil || *s.Min != 1 || s.Max == nil || *s.Max != 100 {
					t.Errorf("%s %s: limit is %v %v..%v, want integer 1..100", method, path, s.Type, s.Min, s.Max)
				}
			}
		}
	}
	sort.Strings(paged)
	want := []string{restclient.OpListCreditNotes.Pattern(), restclient.OpListRedemptions.Pattern(), restclient.OpListOrders.Pattern(), restclient.OpListTransactions.Pattern()}
	if !slices.Equal(paged, want) {
		t.Errorf("operations with a limit: %q, want %q", paged, want)
	}
}

// TestDocumentNoNotFoundOrConflictOnLists: a list filtered by an unknown or
// foreign id is empty, never 404, and no read conflicts: the document lists
// neither 404 on the filtered lists nor 409 on any GET. The live half: the
// lists answer 200 and an empty list for unknown filter ids.
func TestDocumentNoNotFoundOrConflictOnLists(t *testing.T) {
	doc := loadDocument(t)
	lists := map[string]string{
		restclient.OpListCreditNotes.Route:  "creditNotes",
		restclient.OpListTransactions.Route: "transactions",
		restclient.OpListProducts.Route:     "products",
		restclient.OpListOrders.Route:       "orders",
		restclient.OpListRedemptions.Route:  "redemptions",
	}
	for path, item := range doc.Paths.Map() {
		op := item.Get
		if op == nil {
			continue
		}
		if op.Responses.Value("409") != nil {
			t.Errorf("GET %s documents 409", path)
		}
		if _, ok := lists[path]; ok && op.Responses.Value("404") != nil {
			t.Errorf("GET %s (a list) documents 404", path)
		}
		if _, ok := lists[path]; !ok && op.Responses.Value("404") == nil {
			t.Errorf("GET %s (by id) does not document 404", path)
		}
	}
	ts := newTestServer(t)
	unknown := "00000000-0000-4000-8000-000000000000"
	foreign := ts.Manifest.OtherNetworks[0].IDs["location"][0]
	for path, key := range lists {
		filter := "locationRef"
		if key == "redemptions" {
			filter = "couponRef"
		}
		for _, id := range []string{unknown, foreign} {
			var body map[string][]any
			ts.ok(t, ts.basic(), 200, "GET", path+"?"+filter+"="+id, nil).json(t, &body)
			if items, ok := body[key]; !ok || len(items) != 0 {
				t.Errorf("GET %s?%s=%s: %v, want an empty %s", path, filter, id, body, key)
			}
		}
	}
}

// TestDocumentTokenRequest: TokenRequest declares exactly what POST
// /oauth2/token uses, and each grant it lists is accepted; the upstream's
// authorization_code is refused.
func TestDocumentTokenRequest(t *testing.T) {
	doc := loadDocument(t)
	s := doc.Components.Schemas["TokenRequest"].Value
	var props []string
	for p := range s.Properties {
		props = append(props, p)
	}
	sort.Strings(props)
	if want := []string{"client_id", "client_secret", "grant_type", "refresh_token", "scope"}; !slices.Equal(props, want) {
		t.Errorf("TokenRequest properties %q, want %q", props, want)
	}
	var grants []string
	for _, g := range s.Properties["grant_type"].Value.Enum {
		grants = append(grants, g.(string))
	}
	if want := []string{"client_credentials", "refresh_token"}; !slices.Equal(grants, want) {
		t.Errorf("grant_type enum %q, want %q", grants, want)
	}

	ts := newTestServer(t)
	r := postForm(t, ts, "", url.Values{"grant_type": {"client_credentials"}, "client_id": {DemoClientID},
		"client_secret": {DemoClientSecret}, "scope": {"feed events"}})
	if r.status != 200 {
		t.Fatalf("client_credentials: %d %s", r.status, r.body)
	}
	var tok tokenResponse
	r.json(t, &tok)
	if tok.Scope != "feed events" || tok.RefreshToken == "" {
		t.Fatalf("client_credentials: %+v", tok)
	}
	r = postForm(t, ts, "", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken},
		"client_id": {DemoClientID}, "client_secret": {DemoClientSecret}, "scope": {"feed"}})
	if r.status != 200 {
		t.Fatalf("refresh_token: %d %s", r.status, r.body)
	}
	r = postForm(t, ts, ts.Manifest.BasicAuth, url.Values{"grant_type": {"authorization_code"}, "code": {"abc"}, "redirect_uri": {"https://app.example/cb"}})
	r.wantError(t, 400, "invalid_request", "grant_type")
}

// TestDocumentMediaKeyRequired: a media input without a key is refused, as
// the document says.
func TestDocumentMediaKeyRequired(t *testing.T) {
	doc := loadDocument(t)
	if s := doc.Components.Schemas["MediaInput"].Value; !slices.Equal(s.Required, []string{"key"}) {
		t.Errorf("MediaInput.required = %q", s.Required)
	}
	ts := newTestServer(t)
	loc := ts.Manifest.IDs["location"][0]
	ts.do(t, ts.bearer(), "POST", restclient.OpCreatePost.Route, map[string]any{"post": map[string]any{"locationRef": loc, "text": "hi",
		"media": []any{map[string]any{}}}}).wantError(t, 400, "invalid_request", "post.media[0].key: is required")
	ts.do(t, ts.bearer(), "PUT", "/feed/posts/v1/"+ts.Manifest.IDs["post"][0], map[string]any{"post": map[string]any{
		"media": []any{map[string]any{"key": ""}}}}).wantError(t, 400, "invalid_request", "post.media[0].key: is required")
}

// TestDocumentClosedRequestBodies: every object of every JSON request body
// is declared additionalProperties: false, and for each of them the service
// refuses a valid request with one unknown field added there (400 naming
// it), while accepting the same request without it.
func TestDocumentClosedRequestBodies(t *testing.T) {
	doc := loadDocument(t)
	ts := newTestServer(t)
	ids := ts.Manifest.IDs
	loc := ids["location"][0]
	// The rich invoice is paid: its credit notes may carry refunds of its
	// transaction.
	inv := ids["invoice"][0]
	var items struct {
		Invoice struct {
			Status      string `json:"status"`
			Transaction struct {
				ID string `json:"id"`
			} `json:"transaction"`
		} `json:"invoice"`
	}
	ts.ok(t, ts.basic(), 200, "GET", "/billing/invoices/v1/"+inv+"/items", nil).json(t, &items)
	if items.Invoice.Status != "paid" || items.Invoice.Transaction.ID == "" {
		t.Fatalf("the first demo invoice is %q with transaction %q, want a paid one", items.Invoice.Status, items.Invoice.Transaction.ID)
	}
	og := func() map[string]any {
		return map[string]any{"url": "https://workspace.example/", "title": "t", "description": "d", "image": "https://workspace.example/i.png",
			"type": "website", "videoUrl": "https://workspace.example/v.mp4"}
	}
	visitor := func() map[string]any {
		return map[string]any{"email": "ada@example.com", "name": "Ada", "surname": "L", "phoneNumber": "+1 555 0100"}
	}
	hour := 0
	// Each body sets every property its schema declares, so that every
	// object of the schema is reached; a booking takes a new hour each time.
	cases := []bodyCase{
		{"POST", restclient.OpListCreditNotes.Route, ts.basic(), 201, func() map[string]any {
			return map[string]any{"creditNote": map[string]any{"invoiceRef": inv, "reason": "other", "memo": "m", "internalNote": "n",
				"effectiveDate": "2026-01-10T00:00:00Z", "creditAmount": 0, "outOfBandAmount": 0,
				"lines":   []any{map[string]any{"invoiceItemRef": firstItem(t, ts, inv), "amount": 0.5, "quantity": 0.01}},
				"refunds": []any{map[string]any{"amount": 0.5, "transactionRef": items.Invoice.Transaction.ID, "id": items.Invoice.Transaction.ID}}}}
		}},
		{"POST", restclient.OpCreateBooking.Route, ts.basic(), 201, func() map[string]any {
			hour++
			start := fmt.Sprintf("2027-03-01T%02d:00:00Z", hour)
			end := fmt.Sprintf("2027-03-01T%02d:30:00Z", hour)
			return map[string]any{"booking": map[string]any{"resourceRef": ids["resource"][0], "startDate": start, "endDate": end,
				"memo": "m", "title": "t", "membershipRefOwner": ids["membership"][0]}}
		}},
		{"POST", restclient.OpCreateVisit.Route, ts.bearer(), 201, func() map[string]any {
			return map[string]any{"visit": map[string]any{"date": "2027-03-02T09:00:00Z", "locationRef": loc, "comment": "c", "visitor": visitor()}}
		}},
		{"PUT", "/visitors/visits/v1/" + ids["visit"][0], ts.basic(), 200, func() map[string]any {
			return map[string]any{"visit": map[string]any{"date": "2027-03-03T09:00:00Z", "comment": "c"}}
		}},
		{"POST", restclient.OpCreateVisitRequest.Route, ts.basic(), 201, func() map[string]any {
			return map[string]any{"request": map[string]any{"locationRef": loc, "userRefHost": ids["user"][1], "visitor": visitor()}}
		}},
		{"POST", restclient.OpCreatePost.Route, ts.bearer(), 201, func() map[string]any {
			return map[string]any{"post": map[string]any{"locationRef": loc, "text": "t", "media": []any{map[string]any{"key": "a.png"}}, "og": og()}}
		}},
		{"PUT", "/feed/posts/v1/" + ids["post"][0], ts.basic(), 200, func() map[string]any {
			return map[string]any{"post": map[string]any{"text": "t", "media": []any{map[string]any{"key": "a.png"}}, "og": og()}}
		}},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		name := c.method + " " + c.path
		op := findOperation(t, doc, c.method, c.path)
		schema := op.RequestBody.Value.Content.Get("application/json").Schema
		// The body is valid as it is.
		ts.ok(t, c.a, c.want, c.method, c.path, c.body())
		// Every object of the schema, with an unknown field added to it.
		var objects []string
		walkClosed(t, schema, c.body(), "", func(at string, obj map[string]any) {
			objects = append(objects, at)
		})
		if len(objects) == 0 {
			t.Errorf("%s: no object in the request body", name)
		}
		for _, at := range objects {
			body := c.body()
			field := "unknownAt" + strings.NewReplacer(".", "_", "[0]", "_0").Replace(at)
			walkClosed(t, schema, body, "", func(here string, obj map[string]any) {
				if here == at {
					obj[field] = 1
				}
			})
			ts.do(t, c.a, c.method, c.path, body).wantError(t, 400, "invalid_request", field+": unknown field")
			covered[name+" "+at] = true
		}
	}
	// Every operation with a JSON body was exercised.
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json") == nil {
				continue
			}
			if !slices.ContainsFunc(cases, func(c bodyCase) bool {
				return c.method == method && templateMatches(path, strings.SplitN(c.path, "?", 2)[0])
			}) {
				t.Errorf("%s %s: a JSON request body this test does not exercise", method, path)
			}
		}
	}
	if len(covered) < 15 {
		t.Errorf("only %d request objects checked", len(covered))
	}
}

// bodyCase is a write with a valid body (a new one at each call).
type bodyCase struct {
	method, path string
	a            auth
	want         int
	body         func() map[string]any
}

// walkClosed calls fn with every object of body that schema describes (at
// is its path: "" for the envelope, "post.og", "creditNote.lines[0]"),
// failing when such an object is not declared additionalProperties: false,
// or when the schema declares a property body lacks (so every object is
// reached).
func walkClosed(t *testing.T, s *openapi3.SchemaRef, v any, at string, fn func(at string, obj map[string]any)) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		if !s.Value.Type.Is("object") {
			t.Fatalf("%s: an object where the schema says %v", at, s.Value.Type)
		}
		if ap := s.Value.AdditionalProperties.Has; ap == nil || *ap {
			t.Errorf("request object %q (%s) is not declared additionalProperties: false", at, s.Ref)
		}
		fn(at, x)
		for name, p := range s.Value.Properties {
			pv, ok := x[name]
			if !ok {
				t.Fatalf("%s: the example body lacks %q", at, name)
			}
			walkClosed(t, p, pv, strings.TrimPrefix(at+"."+name, "."), fn)
		}
	case []any:
		for i, el := range x {
			walkClosed(t, s.Value.Items, el, fmt.Sprintf("%s[%d]", at, i), fn)
		}
	}
}

// findOperation is the documented operation serving method path.
func findOperation(t *testing.T, doc *openapi3.T, method, path string) *openapi3.Operation {
	t.Helper()
	for tmpl, item := range doc.Paths.Map() {
		if op := item.GetOperation(method); op != nil && templateMatches(tmpl, path) {
			return op
		}
	}
	t.Fatalf("no documented operation %s %s", method, path)
	return nil
}
