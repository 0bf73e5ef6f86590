package restserver

import (
	"strings"
	"testing"
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
		for _, leak := range []string{`"routes"`, `"total"`, `"injected"`, "/resources/v1/{id}"} {
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
	if stats.Total != 1 || stats.Routes["GET /resources/v1/{id}"] != 1 {
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
