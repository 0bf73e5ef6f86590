package restserver

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/workspacenet/facade/restclient"
)

// unreachable are the response properties no operation of the service can
// answer non-null, with the reason, named by component (an occurrence of
// one is exempt too). Keep it short and true: the test fails when one of
// them is seen after all.
var unreachable = map[string]string{
	// Bookings are answered only by POST /resources/bookings/v1, and a booking
	// being created is not deleted.
	"Booking.deleteDate": "no operation answers a deleted booking",
}

// TestDemoDataCoversEverySpecField walks the OpenAPI document the service
// serves against its live answers on the demo data: every GET operation
// with the credentials of both demo networks (lists through all their pages,
// every record by id), then each write once (bookings, visit requests and
// posts are answered only by writes). Two views, both must be complete:
//
//   - by component: every property of every response schema, named by the
//     component holding it (Discount.promocode.code,
//     Resource.plans.tiers[].plan.id), appears non-null in some answer;
//   - by occurrence: every property path of every GET answer (GET
//     /resources/v1/{id}: resource.credits.tiers[].from) appears non-null in
//     that operation's answers, so a component used in two places
//     (ResourcePricing under credits and money) is filled in both.
func TestDemoDataCoversEverySpecField(t *testing.T) {
	ts := newTestServer(t)
	raw := ts.ok(t, auth{}, 200, "GET", "/openapi.json", nil).body
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	cov := newCoverage(false)
	occ := newCoverage(true)
	for _, op := range documentedOperations(doc) {
		cov.expect(op)
		if op.method == "GET" {
			occ.expect(op)
		}
	}

	get := func(a auth, path string) map[string]any {
		t.Helper()
		var body map[string]any
		ts.ok(t, a, 200, "GET", path, nil).json(t, &body)
		cov.see(doc, "GET", path, body)
		occ.see(doc, "GET", path, body)
		return body
	}
	// pages walks an answer through every page (of the default size, so
	// that the page tokens appear).
	pages := func(a auth, path string) {
		t.Helper()
		next := ""
		for range 100 {
			p := path
			if next != "" {
				p += "&nextPageToken=" + url.QueryEscape(next)
			}
			tok, _ := get(a, p)["nextPageToken"].(string)
			if tok == "" {
				return
			}
			next = tok
		}
		t.Fatalf("%s: more than 100 pages", path)
	}

	networks := []struct {
		a   auth
		ids map[string][]string
	}{{ts.bearer(), ts.Manifest.IDs}}
	for _, o := range ts.Manifest.OtherNetworks {
		networks = append(networks, struct {
			a   auth
			ids map[string][]string
		}{auth{"Bearer " + o.BearerToken, o.NetworkID}, o.IDs})
	}
	// Every GET of restclient's table: a read by id for every demo record
	// of its kind, a list for every demo record its filters name.
	for _, op := range restclient.Operations() {
		if op.Method != "GET" {
			continue
		}
		for _, n := range networks {
			a, ids := n.a, n.ids
			if len(ids["location"]) == 0 {
				t.Fatal("a demo network without locations")
			}
			if kind := pathKind(op.Route); kind != "" {
				if len(ids[kind]) == 0 && n.a == ts.bearer() {
					t.Errorf("%s: no demo %s in the manifest (restserver's manifestKinds) to read", op, kind)
				}
				for _, id := range ids[kind] {
					pages(a, pathOf(op, id)+"?")
				}
				continue
			}
			if len(op.CacheTags) == 0 {
				t.Errorf("%s: a list without a path parameter or a filter (CacheTags) to walk", op)
			}
			for _, filter := range op.CacheTags {
				for _, id := range ids[strings.TrimSuffix(filter, "Ref")] {
					pages(a, op.Route+"?"+filter+"="+id)
				}
			}
		}
	}

	// The writes, once each, with the main network's credentials.
	ids := ts.Manifest.IDs
	a := ts.bearer()
	written := map[string]bool{}
	write := func(op restclient.Row, id string, want int, body any) map[string]any {
		t.Helper()
		var out map[string]any
		o := op.Row()
		ts.ok(t, a, want, o.Method, pathOf(*o, id), body).json(t, &out)
		cov.see(doc, o.Method, pathOf(*o, id), out)
		written[o.Pattern()] = true
		return out
	}
	loc := ids["location"][0]
	write(restclient.OpCreateBooking, "", 201, map[string]any{"booking": map[string]any{"resourceRef": ids["resource"][0],
		"startDate": "2026-07-01T09:00:00Z", "endDate": "2026-07-01T10:00:00Z", "memo": "coverage", "title": "Coverage"}})
	write(restclient.OpCreateVisit, "", 201, map[string]any{"visit": map[string]any{"date": "2026-07-02T09:00:00Z", "locationRef": loc,
		"comment": "coverage", "visitor": map[string]any{"email": "cov@example.com", "name": "Cov", "surname": "Erage", "phoneNumber": "+31 20 555 0000"}}})
	write(restclient.OpUpdateVisit, ids["visit"][0], 200, map[string]any{"visit": map[string]any{"date": "2026-07-03T09:00:00Z", "comment": "moved"}})
	// A visitor who is a member of the network (the email of a visit's host).
	var visit struct {
		Visit struct {
			UserHost struct{ Email string } `json:"userHost"`
		} `json:"visit"`
	}
	ts.ok(t, a, 200, "GET", pathOf(restclient.OpGetVisit.Operation, ids["visit"][0]), nil).json(t, &visit)
	write(restclient.OpCreateVisitRequest, "", 201, map[string]any{"request": map[string]any{"locationRef": loc, "userRefHost": ids["user"][1],
		"visitor": map[string]any{"email": strings.ToUpper(visit.Visit.UserHost.Email), "name": "Req", "surname": "Uest", "phoneNumber": "+31 20 555 0001"}}})
	post := write(restclient.OpCreatePost, "", 201, map[string]any{"post": map[string]any{"locationRef": loc, "text": "coverage",
		"media": []any{map[string]any{"key": "feed/coverage.png"}}, "og": map[string]any{"url": "https://workspace.example/", "title": "Workspace"}}})
	postID := post["post"].(map[string]any)["id"].(string)
	write(restclient.OpUpdatePost, postID, 200, map[string]any{"post": map[string]any{"text": "coverage, edited"}})
	// A demo post keeps its media (with their sizes) when only its text changes.
	write(restclient.OpUpdatePost, ids["post"][0], 200, map[string]any{"post": map[string]any{"text": "edited"}})
	write(restclient.OpCreateCreditNote, "", 201, map[string]any{"creditNote": map[string]any{"invoiceRef": ids["invoice"][0], "reason": "other",
		"memo": "coverage", "lines": []any{map[string]any{"invoiceItemRef": firstItem(t, ts, ids["invoice"][0]), "amount": 1}}}})
	tok := postForm(t, ts, "", url.Values{"grant_type": {"client_credentials"}, "client_id": {DemoClientID},
		"client_secret": {DemoClientSecret}, "scope": {"feed"}})
	if tok.status != 200 {
		t.Fatalf("token: %d %s", tok.status, tok.body)
	}
	var token map[string]any
	tok.json(t, &token)
	cov.see(doc, "POST", "/oauth2/token", token)
	for _, op := range restclient.Operations() {
		if op.Method != "GET" && !written[op.Pattern()] {
			t.Errorf("%s: no write of it in the walk: add one (write) with a body that sets every field", op)
		}
	}

	for p := range unreachable {
		if !cov.expected[p] {
			t.Errorf("unreachable %s is not a documented response property", p)
		}
		if cov.seen[p] {
			t.Errorf("%s is listed as unreachable (%s) but was seen: remove it from the list", p, unreachable[p])
		}
	}
	if missing := cov.missing(); len(missing) > 0 {
		t.Errorf("%d of %d documented response properties never seen non-null on the demo data:\n%s",
			len(missing), len(cov.expected), strings.Join(missing, "\n"))
	}
	if missing := occ.missing(); len(missing) > 0 {
		t.Errorf("%d of %d properties of GET answers never seen non-null there on the demo data:\n%s",
			len(missing), len(occ.expected), strings.Join(missing, "\n"))
	}
	if len(cov.expected) < 600 || len(occ.expected) < 800 {
		t.Errorf("only %d component properties, %d GET answer properties: the walk lost its way", len(cov.expected), len(occ.expected))
	}
	if !t.Failed() {
		t.Logf("%d component properties (%d unreachable), %d GET answer properties: all seen", len(cov.expected), len(unreachable), len(occ.expected))
	}
}

// firstItem is the first item of invoice inv that still has an amount to
// credit.
func firstItem(t *testing.T, ts *testServer, inv string) string {
	t.Helper()
	var out struct {
		InvoiceItems []struct {
			ID          string  `json:"id"`
			TotalAmount float64 `json:"totalAmount"`
		} `json:"invoiceItems"`
	}
	ts.ok(t, ts.basic(), 200, "GET", pathOf(restclient.OpListInvoiceItems.Operation, inv), nil).json(t, &out)
	for _, it := range out.InvoiceItems {
		if it.TotalAmount > 5 {
			return it.ID
		}
	}
	t.Fatalf("invoice %s has no item to credit", inv)
	return ""
}

// documented is one operation's success response schema.
type documented struct {
	method, path string
	schema       *openapi3.SchemaRef
}

// documentedOperations lists every operation's 2xx JSON response schema.
func documentedOperations(doc *openapi3.T) []documented {
	var out []documented
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for code, r := range op.Responses.Map() {
				if !strings.HasPrefix(code, "2") || r.Value == nil {
					continue
				}
				if mt := r.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
					out = append(out, documented{method, path, mt.Schema})
				}
			}
		}
	}
	return out
}

// coverage is the set of documented response properties and of those seen
// non-null. By component, a property is named by the nearest component
// schema holding it and the path inside it (Tax.rate,
// Resource.plans.tiers[].plan.id; the envelope of an answer is not a
// record's field). By occurrence, it is named by operation and its whole
// path in the answer (GET /resources/v1/{id}: resource.plans.tiers[].id).
type coverage struct {
	byOccurrence bool
	expected     map[string]bool
	seen         map[string]bool
	walked       map[string]bool   // by component: components already expected
	component    map[string]string // by occurrence: each property's name by component
}

func newCoverage(byOccurrence bool) *coverage {
	return &coverage{byOccurrence: byOccurrence, expected: map[string]bool{}, seen: map[string]bool{}, walked: map[string]bool{},
		component: map[string]string{}}
}

func componentName(ref string) string { return ref[strings.LastIndex(ref, "/")+1:] }

// root is where the names of op's answer start.
func (c *coverage) root(op documented) string {
	if c.byOccurrence {
		return op.method + " " + op.path + ": "
	}
	return ""
}

// expect records every property reachable from op's answer schema.
func (c *coverage) expect(op documented) { c.expectAt(op.schema, c.root(op), "", map[string]bool{}) }

// expectAt records the properties under s, named from at (and, by
// occurrence, from comp by component); refs holds the components on the way
// (a component inside itself is not walked again).
func (c *coverage) expectAt(s *openapi3.SchemaRef, at, comp string, refs map[string]bool) {
	if s == nil || s.Value == nil {
		return
	}
	if s.Ref != "" {
		name := componentName(s.Ref)
		comp = name
		switch {
		case c.byOccurrence && refs[name]:
			return
		case c.byOccurrence:
			refs[name] = true
			defer delete(refs, name)
		case c.walked[name]:
			return
		default:
			c.walked[name] = true
			at = name
		}
	}
	v := s.Value
	if v.Items != nil {
		c.expectAt(v.Items, at+"[]", comp+"[]", refs)
	}
	for name, p := range v.Properties {
		key := join(at, name)
		if at != "" { // by component, the envelope's keys are not counted
			c.expected[key] = true
			c.component[key] = join(comp, name)
		}
		c.expectAt(p, key, join(comp, name), refs)
	}
}

// join names property name under at.
func join(at, name string) string {
	if at == "" || strings.HasSuffix(at, " ") {
		return at + name
	}
	return at + "." + name
}

// see marks the properties of body, the answer of method path.
func (c *coverage) see(doc *openapi3.T, method, path string, body any) {
	p, _, _ := strings.Cut(path, "?")
	for _, op := range documentedOperations(doc) {
		if op.method == method && templateMatches(op.path, p) {
			c.seeAt(op.schema, c.root(op), body)
			return
		}
	}
	panic(fmt.Sprintf("no documented operation for %s %s", method, p))
}

func (c *coverage) seeAt(s *openapi3.SchemaRef, at string, v any) {
	if s == nil || s.Value == nil || v == nil {
		return
	}
	if s.Ref != "" && !c.byOccurrence {
		at = componentName(s.Ref)
	}
	switch x := v.(type) {
	case []any:
		if s.Value.Items != nil {
			for _, el := range x {
				c.seeAt(s.Value.Items, at+"[]", el)
			}
		}
	case map[string]any:
		for name, p := range s.Value.Properties {
			pv, ok := x[name]
			if !ok || pv == nil {
				continue
			}
			key := join(at, name)
			if at != "" {
				c.seen[key] = true
			}
			c.seeAt(p, key, pv)
		}
	}
}

// missing lists, sorted, the expected properties never seen, but for the
// unreachable ones (by occurrence, those whose name by component is).
func (c *coverage) missing() []string {
	var out []string
	for p := range c.expected {
		_, exempt := unreachable[p]
		if _, ok := unreachable[c.component[p]]; ok && c.byOccurrence {
			exempt = true
		}
		if !c.seen[p] && !exempt {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// pathKind is the manifest kind of the record a GET route's path parameter
// names: the collection before the version, singular ("invoice" of
// /billing/invoices/v1/{id}/items); "" for a route without one.
func pathKind(route string) string {
	segs := strings.Split(route, "/")
	for i, seg := range segs {
		if strings.HasPrefix(seg, "{") && i >= 2 {
			return strings.TrimSuffix(segs[i-2], "s")
		}
	}
	return ""
}

// pathOf is op's route with id in its path parameter.
func pathOf(op restclient.Operation, id string) string {
	i := strings.IndexByte(op.Route, '{')
	if i < 0 {
		return op.Route
	}
	return op.Route[:i] + id + op.Route[i+strings.IndexByte(op.Route[i:], '}')+1:]
}

// templateMatches reports whether path matches the template
// (/resources/v1/{id} matches /resources/v1/5f...).
func templateMatches(template, path string) bool {
	ts, ps := strings.Split(template, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i, seg := range ts {
		if !strings.HasPrefix(seg, "{") && seg != ps[i] {
			return false
		}
	}
	return true
}
