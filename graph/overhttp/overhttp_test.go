package overhttp_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/overhttp"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
)

const (
	gqlResp = overhttp.GraphQLResponseJSON
	appJSON = overhttp.JSON
)

// call is one HTTP request to the endpoint.
type call struct {
	method      string // default POST
	query       url.Values
	contentType string // sent when set
	accept      string // sent when set
	body        string
	header      http.Header // added
}

func send(t *testing.T, env *testenv.Env, c call) *testenv.Response {
	t.Helper()
	if c.method == "" {
		c.method = http.MethodPost
	}
	target := env.FacadeURL
	if c.query != nil {
		target += "?" + c.query.Encode()
	}
	req, err := http.NewRequestWithContext(t.Context(), c.method, target, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	}
	if c.accept != "" {
		req.Header.Set("Accept", c.accept)
	}
	r, err := env.GraphQL.Do(req)
	if err != nil && (r == nil || c.method != http.MethodOptions && c.method != http.MethodHead) { // answered without a body
		t.Fatalf("%s: %v", c.method, err)
	}
	return r
}

func jsonBody(query string, vars map[string]any) string {
	b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return string(b)
}

// mediaType is the media type of r's Content-Type, which must be UTF-8.
func mediaType(t *testing.T, r *testenv.Response) string {
	t.Helper()
	ct := r.Header.Get("Content-Type")
	if !strings.HasSuffix(ct, "; charset=utf-8") {
		t.Errorf("Content-Type %q does not say utf-8", ct)
	}
	mt, _, _ := strings.Cut(ct, ";")
	return mt
}

// requestError checks that r is a request error: the status, the media type,
// no data entry, and one error whose extensions.code is code.
func requestError(t *testing.T, r *testenv.Response, status int, mt, code string) {
	t.Helper()
	if r.Status != status {
		t.Errorf("status %d, want %d: %s", r.Status, status, r.Raw)
	}
	if got := mediaType(t, r); got != mt {
		t.Errorf("media type %q, want %q", got, mt)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(r.Raw, &raw); err != nil {
		t.Fatalf("body is not a JSON object: %s", r.Raw)
	}
	if _, ok := raw["data"]; ok {
		t.Errorf("a request error has a data entry: %s", r.Raw)
	}
	if len(r.Errors) != 1 || r.Errors[0].Code() != code || r.Errors[0].Message == "" {
		t.Errorf("want one %s error with a message: %s", code, r.Raw)
	}
}

// TestStatusesAndMediaTypes: the rules of the GraphQL over HTTP spec for both
// response media types, over HTTP against the whole stack.
func TestStatusesAndMediaTypes(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	creds := env.Bearer().Header()
	res := env.ID(t, "resource", 0)
	okQuery := jsonBody(`query($id: ID!) { resource(id: $id) { id } }`, map[string]any{"id": res})

	t.Run("negotiation", func(t *testing.T) {
		for _, tc := range []struct{ accept, want string }{
			{"", appJSON},
			{appJSON, appJSON},
			{gqlResp, gqlResp},
			{"*/*", appJSON},
			{"application/*", appJSON},
			{"text/html,application/xhtml+xml,*/*;q=0.8", appJSON},
			{gqlResp + ",application/json;q=0.9", gqlResp}, // Apollo Client 4
			{"application/json;q=0.5, " + gqlResp, gqlResp},
			{appJSON + ", " + gqlResp, appJSON},
			{gqlResp + ";q=0, */*", appJSON},
			{"*/*;q=0.1, " + gqlResp + ";q=0.2", gqlResp},
		} {
			env.ResetCalls()
			r := send(t, env, call{contentType: "application/json", accept: tc.accept, body: okQuery, header: creds})
			if r.Status != http.StatusOK || len(r.Errors) > 0 || !strings.Contains(string(r.Data), res) {
				t.Fatalf("Accept %q: %d %s", tc.accept, r.Status, r.Raw)
			}
			if got := mediaType(t, r); got != tc.want {
				t.Errorf("Accept %q: answered %q, want %q", tc.accept, got, tc.want)
			}
			if calls, _ := env.Calls(); calls[restclient.OpGetResource.Pattern()] != 1 {
				t.Errorf("Accept %q: upstream calls %v, want one resource", tc.accept, calls)
			}
		}
	})

	t.Run("an Accept admitting neither is 406", func(t *testing.T) {
		for _, accept := range []string{"text/html", "application/xml, text/*", gqlResp + ";q=0, application/json;q=0"} {
			env.ResetCalls()
			r := send(t, env, call{contentType: "application/json", accept: accept, body: okQuery, header: creds})
			requestError(t, r, http.StatusNotAcceptable, appJSON, errcode.NotAcceptable)
			env.ExpectNoCalls(t)
		}
	})

	// Request errors: 200 in application/json, 400 in
	// application/graphql-response+json, never a data entry.
	requestErrors := []struct{ name, body, code string }{
		{"parse failure", `{"query": "{"}`, errcode.ParseFailed},
		{"validation failure", `{"query": "{ noSuchField }"}`, errcode.ValidationFailed},
		{"variable coercion failure", jsonBody(`query($id: ID!) { resource(id: $id) { id } }`, map[string]any{"id": nil}), errcode.ValidationFailed},
		{"operation not in the document", `{"query": "query A { __typename }", "operationName": "B"}`, errcode.ValidationFailed},
		{"an operation limit", jsonBody(`{ resource(id: "`+res+`") { `+strings.Repeat("parent { ", 14)+"id"+strings.Repeat(" }", 14)+` } }`, nil), errcode.QueryTooComplex},
		{"a persisted query unknown", `{"extensions": {"persistedQuery": {"version": 1, "sha256Hash": "` + strings.Repeat("ab", 32) + `"}}}`, errcode.PersistedQueryNotFound},
	}
	for _, tc := range requestErrors {
		for _, accept := range []string{"", appJSON, gqlResp} {
			t.Run(tc.name+", Accept "+accept, func(t *testing.T) {
				env.ResetCalls()
				r := send(t, env, call{contentType: "application/json", accept: accept, body: tc.body, header: creds})
				status, mt := http.StatusOK, appJSON
				if accept == gqlResp {
					status, mt = http.StatusBadRequest, gqlResp
				}
				requestError(t, r, status, mt, tc.code)
				env.ExpectNoCalls(t)
			})
		}
	}

	t.Run("field errors: 200 with data in both media types", func(t *testing.T) {
		for _, accept := range []string{appJSON, gqlResp} {
			for name, hdr := range map[string]http.Header{"no credentials": nil, "unknown id": creds} {
				r := send(t, env, call{contentType: "application/json", accept: accept, header: hdr,
					body: jsonBody(`{ resource(id: "00000000-0000-4000-8000-000000000000") { id } }`, nil)})
				if r.Status != http.StatusOK || string(r.Data) != `{"resource":null}` || len(r.Errors) != 1 || r.Errors[0].Code() == "" || mediaType(t, r) != accept {
					t.Errorf("%s, Accept %s: %d %s", name, accept, r.Status, r.Raw)
				}
			}
		}
	})

	// Requests that are not well-formed, and refusals: their own status in
	// both media types, in the media type asked for, with a code.
	refusals := []struct {
		name   string
		c      call
		status int
		code   string
		allow  string
	}{
		{"malformed JSON", call{contentType: "application/json", body: `{"query": "{ __typename }"`}, 400, errcode.BadRequest, ""},
		{"no body", call{contentType: "application/json"}, 400, errcode.BadRequest, ""},
		{"no query", call{contentType: "application/json", body: `{"variables": {}}`}, 400, errcode.BadRequest, ""},
		{"a misspelt query", call{contentType: "application/json", body: `{"qeury": "{ __typename }"}`}, 400, errcode.BadRequest, ""},
		{"query not a string", call{contentType: "application/json", body: `{"query": ["{ __typename }"]}`}, 400, errcode.BadRequest, ""},
		{"variables not an object", call{contentType: "application/json", body: `{"query": "{ __typename }", "variables": "{}"}`}, 400, errcode.BadRequest, ""},
		{"extensions not an object", call{contentType: "application/json", body: `{"query": "{ __typename }", "extensions": 0}`}, 400, errcode.BadRequest, ""},
		{"operationName not a string", call{contentType: "application/json", body: `{"query": "{ __typename }", "operationName": false}`}, 400, errcode.BadRequest, ""},
		{"a batch", call{contentType: "application/json", body: `[{"query": "{ __typename }"}]`}, 400, errcode.BadRequest, ""},
		{"GET variables that are not JSON", call{method: http.MethodGet, query: url.Values{"query": {"{ __typename }"}, "variables": {"{nope"}}, header: http.Header{"Apollo-Require-Preflight": {"true"}}}, 400, errcode.BadRequest, ""},
		{"GET extensions that are not an object", call{method: http.MethodGet, query: url.Values{"query": {"{ __typename }"}, "extensions": {"[1]"}}, header: http.Header{"Apollo-Require-Preflight": {"true"}}}, 400, errcode.BadRequest, ""},
		{"GET without a query", call{method: http.MethodGet, header: http.Header{"Apollo-Require-Preflight": {"true"}}}, 400, errcode.BadRequest, ""},
		{"PUT", call{method: http.MethodPut, contentType: "application/json", body: `{"query": "{ __typename }"}`}, 405, errcode.MethodNotAllowed, "GET, POST, OPTIONS"},
		{"DELETE", call{method: http.MethodDelete}, 405, errcode.MethodNotAllowed, "GET, POST, OPTIONS"},
		{"HEAD", call{method: http.MethodHead}, 405, "", "GET, POST, OPTIONS"}, // no body to a HEAD
		{"GET mutation", call{method: http.MethodGet, query: url.Values{"query": {`mutation { updateVisit(id: "00000000-0000-4000-8000-000000000000", input: {date: "2026-01-01T00:00:00Z"}) { visit { id } } }`}}, contentType: "application/json"}, 405, errcode.MethodNotAllowed, "POST"},
		{"application/graphql", call{contentType: "application/graphql", body: `{ __typename }`}, 415, errcode.UnsupportedMediaType, ""},
		{"JSON in Latin-1", call{contentType: "application/json; charset=iso-8859-1", body: `{"query": "{ __typename }"}`}, 415, errcode.UnsupportedMediaType, ""},
		{"text/plain with a preflight header", call{contentType: "text/plain", body: `{"query": "{ __typename }"}`, header: http.Header{"Apollo-Require-Preflight": {"true"}}}, 415, errcode.UnsupportedMediaType, ""},
		{"text/plain", call{contentType: "text/plain", body: `{"query": "{ __typename }"}`}, 400, errcode.CSRFPrevented, ""},
		{"bare GET", call{method: http.MethodGet, query: url.Values{"query": {"{ __typename }"}}}, 400, errcode.CSRFPrevented, ""},
	}
	for _, tc := range refusals {
		for _, accept := range []string{"", gqlResp} {
			t.Run(tc.name+", Accept "+accept, func(t *testing.T) {
				env.ResetCalls()
				c := tc.c
				c.accept = accept
				c.header = c.header.Clone()
				if c.header == nil {
					c.header = http.Header{}
				}
				for k, v := range creds {
					c.header[k] = v
				}
				r := send(t, env, c)
				mt := appJSON
				if accept == gqlResp {
					mt = gqlResp
				}
				if tc.code == "" { // HEAD: the status and headers only
					if r.Status != tc.status || mediaType(t, r) != mt {
						t.Errorf("%d %q", r.Status, r.Header.Get("Content-Type"))
					}
				} else {
					requestError(t, r, tc.status, mt, tc.code)
				}
				if got := r.Header.Get("Allow"); got != tc.allow {
					t.Errorf("Allow %q, want %q", got, tc.allow)
				}
				env.ExpectNoCalls(t)
			})
		}
	}

	t.Run("OPTIONS: 204 with Allow", func(t *testing.T) {
		r := send(t, env, call{method: http.MethodOptions})
		if r.Status != http.StatusNoContent || r.Header.Get("Allow") != "GET, POST, OPTIONS" {
			t.Errorf("%d Allow %q", r.Status, r.Header.Get("Allow"))
		}
	})
}

// TestGETAndCSRFPrevention: a GET query runs when it carries a
// preflight-forcing header or a non-simple Content-Type (Apollo Router's
// convention, what Apollo Client sends), in both media types; without, it
// is refused before any upstream call.
func TestGETAndCSRFPrevention(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	res := env.ID(t, "resource", 0)
	q := url.Values{"query": {`query R($id: ID!) { resource(id: $id) { id } }`}, "variables": {`{"id": "` + res + `"}`}, "operationName": {"R"}}
	passing := map[string]http.Header{
		"Apollo-Require-Preflight":                        {"Apollo-Require-Preflight": {"true"}},
		"X-Apollo-Operation-Name":                         {"X-Apollo-Operation-Name": {"R"}},
		"GraphQL-Require-Preflight":                       {"GraphQL-Require-Preflight": {"1"}},
		"X-Requested-With":                                {"X-Requested-With": {"XMLHttpRequest"}},
		"an empty Apollo-Require-Preflight":               {"Apollo-Require-Preflight": {""}},
		"Content-Type: application/json":                  {"Content-Type": {"application/json"}},
		"Content-Type: application/graphql-response+json": {"Content-Type": {gqlResp}},
	}
	for name, h := range passing {
		for _, accept := range []string{appJSON, gqlResp} {
			t.Run(name+", Accept "+accept, func(t *testing.T) {
				env.ResetCalls()
				h := h.Clone()
				for k, v := range env.Bearer().Header() {
					h[k] = v
				}
				r := send(t, env, call{method: http.MethodGet, query: q, accept: accept, header: h})
				if r.Status != http.StatusOK || len(r.Errors) > 0 || !strings.Contains(string(r.Data), res) || mediaType(t, r) != accept {
					t.Fatalf("%d %q %s", r.Status, r.Header.Get("Content-Type"), r.Raw)
				}
				if calls, total := env.Calls(); total != 1 || calls[restclient.OpGetResource.Pattern()] != 1 {
					t.Errorf("upstream calls %v, want the one resource", calls)
				}
			})
		}
	}
	refused := map[string]http.Header{
		"no header":                  nil,
		"text/plain":                 {"Content-Type": {"text/plain;charset=UTF-8"}},
		"form":                       {"Content-Type": {"application/x-www-form-urlencoded"}},
		"multipart":                  {"Content-Type": {"multipart/form-data; boundary=x"}},
		"an unparsable Content-Type": {"Content-Type": {"application/json; ;"}},
	}
	for name, h := range refused {
		for _, accept := range []string{appJSON, gqlResp} {
			t.Run("refused: "+name+", Accept "+accept, func(t *testing.T) {
				env.ResetCalls()
				h := h.Clone()
				if h == nil {
					h = http.Header{}
				}
				for k, v := range env.Bearer().Header() {
					h[k] = v
				}
				r := send(t, env, call{method: http.MethodGet, query: q, accept: accept, header: h})
				requestError(t, r, http.StatusBadRequest, accept, errcode.CSRFPrevented)
				env.ExpectNoCalls(t)
			})
		}
	}
}

// The incremental formats each Accept header gets.
func TestAcceptsIncremental(t *testing.T) {
	for accept, want := range map[string]overhttp.Incremental{
		"":                 {},
		"application/json": {},
		"multipart/mixed; deferSpec=20220824, application/json":                       {Format: overhttp.Defer20220824},
		"multipart/mixed;deferSpec=20220824":                                          {Format: overhttp.Defer20220824},
		"multipart/mixed; incrementalSpec=v0.2":                                       {Format: overhttp.IncrementalV02},
		"multipart/mixed,multipart/mixed;incrementalSpec=v0.2,application/json;q=0.9": {Format: overhttp.IncrementalV02},
		"multipart/mixed":                          {Format: overhttp.Defer20220824},
		"multipart/mixed; incrementalSpec=v9":      {},
		"multipart/mixed; deferSpec=20220824; q=0": {},
		"text/event-stream":                        {Format: overhttp.Defer20220824, SSE: true},
		"text/event-stream; incrementalSpec=v0.2":  {Format: overhttp.IncrementalV02, SSE: true},
		// Quality values decide between JSON and the incremental types,
		// and among the incremental ranges; a tie goes to the incremental
		// one, a range naming its spec wins over a bare one, then the first.
		"application/graphql-response+json, multipart/mixed;q=0.1":                             {},
		"application/json;q=0.5, multipart/mixed;q=0.4":                                        {},
		"*/*, text/event-stream;q=0.9":                                                         {},
		"*/*;q=0.1, multipart/mixed;q=0.2":                                                     {Format: overhttp.Defer20220824},
		"multipart/mixed;q=0.1, application/json;q=0.05":                                       {Format: overhttp.Defer20220824},
		"application/json, multipart/mixed":                                                    {Format: overhttp.Defer20220824},
		"multipart/mixed;incrementalSpec=v0.2;q=0.2, multipart/mixed;deferSpec=20220824;q=0.9": {Format: overhttp.Defer20220824},
		"text/event-stream;q=0.5, multipart/mixed;incrementalSpec=v0.2":                        {Format: overhttp.IncrementalV02},
		"multipart/mixed;incrementalSpec=v0.2, multipart/mixed;deferSpec=20220824":             {Format: overhttp.IncrementalV02},
		"multipart/mixed;q=2":                                                                  {},
	} {
		h := http.Header{}
		if accept != "" {
			h.Set("Accept", accept)
		}
		if got := overhttp.AcceptsIncremental(h); got != want {
			t.Errorf("Accept %q: %+v, want %+v", accept, got, want)
		}
	}
}
