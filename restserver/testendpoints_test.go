package restserver

import (
	"reflect"
	"strings"
	"testing"

	"github.com/workspacenet/facade/restclient"
)

// TestTestEndpointsAreOffByDefault: without Config.TestEndpoints, GET /_stats,
// DELETE /_stats and POST /_stats/reset answer 404 like any unknown path,
// expose no counter and reset nothing; with it they work.
func TestTestEndpointsAreOffByDefault(t *testing.T) {
	ts := newTestServer(t)
	res := "/resources/v1/" + ts.Manifest.IDs["resource"][0]
	ts.ok(t, ts.bearer(), 200, "GET", res, nil)
	before := ts.Hooks().Total()
	if before == 0 {
		t.Fatal("no request counted")
	}
	for _, m := range []struct{ method, path string }{{"GET", "/_stats"}, {"DELETE", "/_stats"}, {"POST", "/_stats/reset"}, {"GET", "/_stats/reset"}} {
		r := ts.do(t, auth{}, m.method, m.path, nil)
		r.wantError(t, 404, "not_found", m.path)
		for _, leak := range []string{`"routes"`, `"total"`, `"injected"`, restclient.OpGetResource.Route} {
			if strings.Contains(string(r.body), leak) {
				t.Errorf("%s %s body %s exposes %s", m.method, m.path, r.body, leak)
			}
		}
	}
	if got := ts.Hooks().Total(); got != before {
		t.Fatalf("counters changed from %d to %d: the 404s reset them", before, got)
	}

	on := newTestServerConfig(t, Config{DBPath: ":memory:", DemoScale: 1, TestEndpoints: true})
	on.ok(t, on.bearer(), 200, "GET", res, nil)
	var stats struct {
		Routes map[string]int64 `json:"routes"`
		Total  int64            `json:"total"`
	}
	on.ok(t, auth{}, 200, "GET", "/_stats", nil).json(t, &stats)
	if stats.Total != 1 || stats.Routes[restclient.OpGetResource.Pattern()] != 1 {
		t.Fatalf("/_stats = %+v", stats)
	}
	on.ok(t, auth{}, 204, "DELETE", "/_stats", nil)
	if n := on.Hooks().Total(); n != 0 {
		t.Fatalf("after DELETE /_stats total = %d", n)
	}
	on.ok(t, on.bearer(), 200, "GET", res, nil)
	on.ok(t, auth{}, 204, "POST", "/_stats/reset", nil)
	if n := on.Hooks().Total(); n != 0 {
		t.Fatalf("after POST /_stats/reset total = %d", n)
	}
}

// TestTestChangesRefuseWhatTheSpecLacks: the test changes hold to what the
// API serves today: a value an enumerated field does not have (an order
// status in the wrong spelling, a transaction type of the future), a field
// the object does not have, a value of the wrong JSON type, a timestamp that
// is not RFC 3339 and a change of id are each a 400 {message, type} naming
// the field, for set and copy alike, and change nothing; a change the spec
// allows is made.
func TestTestChangesRefuseWhatTheSpecLacks(t *testing.T) {
	ts := newTestServerConfig(t, Config{DBPath: ":memory:", DemoScale: 1, TestEndpoints: true})
	ids := ts.Manifest.IDs
	order := ids["order"][0]
	orderOf := func() map[string]any {
		t.Helper()
		var page struct{ Orders []map[string]any }
		ts.ok(t, ts.bearer(), 200, "GET", "/shop/orders/v1?limit=100&locationRef="+ids["location"][0], nil).json(t, &page)
		for _, o := range page.Orders {
			if o["id"] == order {
				return o
			}
		}
		t.Fatalf("order %s not in its location's newest 100", order)
		return nil
	}
	before := orderOf()
	var count struct{ Orders []any }
	ts.ok(t, ts.bearer(), 200, "GET", "/shop/orders/v1?limit=100&locationRef="+ids["location"][0], nil).json(t, &count)

	for _, c := range []struct {
		path    string
		body    string
		mention string
	}{
		{"/_test/orders/" + order + "/set", `{"status":"in_progress"}`, "orders.status: must be one of new, inProgress, completed, canceled"},
		{"/_test/orders/" + order + "/set", `{"status":"IN_PROGRESS"}`, "orders.status"},
		{"/_test/orders/" + order + "/copy", `{"status":"onHold"}`, "orders.status"},
		{"/_test/orders/" + order + "/set", `{"status":3}`, "orders.status"},
		{"/_test/orders/" + order + "/set", `{"status":"completed","priority":"high"}`, "orders.priority: unknown field"},
		{"/_test/orders/" + order + "/set", `{"product":{"title":"x","colour":"red"}}`, "colour"},
		{"/_test/orders/" + order + "/set", `{"quantity":"two"}`, "orders.quantity"},
		{"/_test/orders/" + order + "/set", `{"id":"` + ids["order"][1] + `"}`, "orders.id: cannot be changed"},
		{"/_test/transactions/" + ids["transaction"][0] + "/set", `{"type":"giftCard"}`, "transactions.type: must be one of booking,"},
		{"/_test/transactions/" + ids["transaction"][0] + "/set", `{"status":"refunded"}`, "transactions.status"},
		{"/_test/visits/" + ids["visit"][0] + "/set", `{"checkInDate":"yesterday"}`, "visits.checkInDate"},
		{"/_test/resources/" + ids["resource"][0] + "/set", `{"type":"spaceship"}`, "resources.type"},
		{"/_test/resources/" + ids["resource"][0] + "/set", `{"autoRelease":{"enabled":true,"interval":"never"}}`, "resources.autoRelease.interval"},
		{"/_test/credit_notes/" + ids["creditNote"][0] + "/set", `{"reason":"bored"}`, "credit_notes.reason"},
		{"/_test/orders/" + order + "/set", `["status"]`, "JSON object"},
	} {
		ts.do(t, auth{}, "POST", c.path, c.body).wantError(t, 400, "invalid_request", c.mention)
	}
	if after := orderOf(); !reflect.DeepEqual(after, before) {
		t.Fatalf("refused changes changed the order:\n%v\n%v", before, after)
	}
	var again struct{ Orders []any }
	ts.ok(t, ts.bearer(), 200, "GET", "/shop/orders/v1?limit=100&locationRef="+ids["location"][0], nil).json(t, &again)
	if len(again.Orders) != len(count.Orders) {
		t.Fatalf("%d orders after the refused copy, %d before", len(again.Orders), len(count.Orders))
	}

	ts.ok(t, auth{}, 200, "POST", "/_test/orders/"+order+"/set", `{"status":"inProgress","comment":"by the desk"}`)
	if after := orderOf(); after["status"] != "inProgress" || after["comment"] != "by the desk" {
		t.Fatalf("the allowed change was not made: %v", after)
	}
	ts.ok(t, auth{}, 201, "POST", "/_test/orders/"+order+"/copy", "")
	ts.ok(t, auth{}, 200, "POST", "/_test/visits/"+ids["visit"][0]+"/set", `{"checkInDate":"2026-01-02T10:00:00Z"}`)
	ts.ok(t, auth{}, 200, "POST", "/_test/resources/"+ids["resource"][0]+"/set", `{"type":"phoneBooth","autoRelease":{"enabled":true,"interval":"tenMinutes"}}`)
}
