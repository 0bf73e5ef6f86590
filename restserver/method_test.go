package restserver

import (
	"testing"

	"github.com/workspacenet/facade/restclient"
)

// TestUnknownMethodOnAKnownPath: a known path with a method it does not
// serve answers 405 with Allow listing the path's methods and a JSON
// {message, type: "method_not_allowed"} body; an unknown path stays 404.
func TestUnknownMethodOnAKnownPath(t *testing.T) {
	ts := newTestServer(t)
	ids := ts.Manifest.IDs
	for _, c := range []struct{ method, path, allow string }{
		{"DELETE", "/resources/v1/" + ids["resource"][0], "GET"},
		{"POST", "/resources/v1/" + ids["resource"][0], "GET"},
		{"DELETE", "/visitors/visits/v1/" + ids["visit"][0], "GET, PUT"},
		{"PATCH", "/feed/posts/v1/" + ids["post"][0], "PUT"},
		{"DELETE", restclient.OpListCreditNotes.Route, "GET, POST"},
		{"GET", "/oauth2/token", "POST"},
		{"POST", "/healthz", "GET"},
	} {
		r := ts.do(t, ts.bearer(), c.method, c.path, nil)
		r.wantError(t, 405, "method_not_allowed", c.method)
		if got := r.header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
	r := ts.do(t, ts.bearer(), "DELETE", "/no/such/path", nil)
	r.wantError(t, 404, "not_found", "no operation")
	if a := r.header.Get("Allow"); a != "" {
		t.Errorf("404 with Allow %q", a)
	}
}
