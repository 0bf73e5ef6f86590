package hooks

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// listFixture serves "GET /orders" through h.Wrap with a fixed answer of
// status code and body.
func listFixture(t *testing.T, h *Hooks, code int, body string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("GET /orders", h.Wrap("GET /orders", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Header().Set("X-Kept", "yes")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func getBody(t *testing.T, srv *httptest.Server) (*http.Response, []byte) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + "/orders")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(b)) {
		t.Fatalf("Content-Length %s for a body of %d bytes", cl, len(b))
	}
	return resp, b
}

const ordersBody = `{"orders":[{"id":"a","status":"new","number":1},{"id":"b","status":"new"},7],"nextPageToken":"t","order":{"id":"b"}}`

// TestRewriteChangesTheSelectedRecords: a rewrite sets its fields in the
// records its ID selects (in lists and single objects), leaves the rest of
// the answer as it was, marks and counts the answer; without ID every
// record changes.
func TestRewriteChangesTheSelectedRecords(t *testing.T) {
	h := New()
	srv := listFixture(t, h, 200, ordersBody)
	h.SetFault("GET /orders", Fault{Kind: FaultRewrite, Rate: 1, Rewrite: &Rewrite{ID: "b", Set: map[string]any{"status": "onHold", "extra": nil}}})
	resp, b := getBody(t, srv)
	var got struct {
		Orders        []any
		NextPageToken string
		Order         map[string]any
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	a, bb := got.Orders[0].(map[string]any), got.Orders[1].(map[string]any)
	if a["status"] != "new" || a["number"] != 1.0 || len(a) != 3 || bb["status"] != "onHold" || got.Order["status"] != "onHold" {
		t.Fatalf("rewritten answer %s", b)
	}
	if v, ok := bb["extra"]; !ok || v != nil || got.Orders[2] != 7.0 || got.NextPageToken != "t" {
		t.Fatalf("rewritten answer %s", b)
	}
	if resp.Header.Get(FaultHeader) != "rewrite" || resp.Header.Get("X-Kept") != "yes" || resp.StatusCode != 200 {
		t.Fatalf("headers %v, status %d", resp.Header, resp.StatusCode)
	}
	if n := h.Injected()["GET /orders"][FaultRewrite]; n != 1 {
		t.Fatalf("injected %v", h.Injected())
	}

	h.SetFault("GET /orders", Fault{Kind: FaultRewrite, Rate: 1, Rewrite: &Rewrite{Set: map[string]any{"status": "onHold"}}})
	_, b = getBody(t, srv)
	if err := json.Unmarshal(b, &got); err != nil || got.Orders[0].(map[string]any)["status"] != "onHold" || got.Orders[1].(map[string]any)["status"] != "onHold" {
		t.Fatalf("rewrite of every record: %s", b)
	}
}

// TestRewriteLeavesOtherAnswers: an answer the rewrite cannot or need not
// change (an error, not JSON, no selected record) is sent as it came,
// unmarked and uncounted.
func TestRewriteLeavesOtherAnswers(t *testing.T) {
	for _, c := range []struct {
		name string
		code int
		body string
		rw   *Rewrite
	}{
		{"error answer", 404, `{"message":"no order","type":"not_found"}`, &Rewrite{Set: map[string]any{"type": "x"}}},
		{"not JSON", 200, `orders`, &Rewrite{Set: map[string]any{"status": "x"}}},
		{"no record with the id", 200, ordersBody, &Rewrite{ID: "zz", Set: map[string]any{"status": "x"}}},
		{"nothing to set", 200, ordersBody, &Rewrite{}},
		{"no rewrite", 200, ordersBody, nil},
		{"a value JSON cannot hold", 200, ordersBody, &Rewrite{Set: map[string]any{"status": func() {}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := New()
			srv := listFixture(t, h, c.code, c.body)
			h.SetFault("GET /orders", Fault{Kind: FaultRewrite, Rate: 1, Rewrite: c.rw})
			resp, b := getBody(t, srv)
			if string(b) != c.body || resp.StatusCode != c.code || resp.Header.Get(FaultHeader) != "" || len(h.Injected()) != 0 {
				t.Fatalf("%d %s (%s), injected %v: want the answer as it came", resp.StatusCode, b, resp.Header.Get(FaultHeader), h.Injected())
			}
			if h.Counts()["GET /orders"] != 1 {
				t.Fatalf("counts %v", h.Counts())
			}
		})
	}
}

// TestRewriteSpec: the flag form sets one field of every record to a JSON
// value or, when VALUE is not JSON, to the string VALUE.
func TestRewriteSpec(t *testing.T) {
	for spec, want := range map[string]any{
		"GET /orders=rewrite:status:onHold":     "onHold",
		"GET /orders=rewrite@1:status:null":     nil,
		`GET /orders=rewrite:status:"inFlight"`: "inFlight",
		"GET /orders=rewrite:status:12":         12.0,
	} {
		rules, err := ParseSpec(spec)
		if err != nil || len(rules) != 1 || rules[0].Fault == nil || rules[0].Fault.Rewrite == nil {
			t.Fatalf("%s: %+v %v", spec, rules, err)
		}
		h := New()
		srv := listFixture(t, h, 200, ordersBody)
		h.Apply(rules...)
		_, b := getBody(t, srv)
		var got struct{ Orders []any }
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if st, ok := got.Orders[1].(map[string]any)["status"]; !ok || st != want {
			t.Errorf("%s: %s", spec, b)
		}
	}
}
