package openapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"go.uber.org/goleak"

	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver/hooks"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func load(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestDocumentLoadsAndValidates(t *testing.T) {
	doc := load(t)
	if !strings.HasPrefix(doc.OpenAPI, "3.0.") {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	for _, name := range []string{"basic", "bearer"} {
		if doc.Components.SecuritySchemes[name] == nil {
			t.Errorf("security scheme %s missing", name)
		}
	}
	if !json.Valid(Document()) {
		t.Fatal("Document() is not JSON")
	}
}

func TestExactlyTheDocumentedOperations(t *testing.T) {
	want := []string{
		"POST /billing/credit_notes/v1",
		"GET /billing/credit_notes/v1",
		"GET /billing/invoices/v1/{id}/items",
		"POST /resources/bookings/v1",
		"GET /resources/v1/{id}",
		"POST /visitors/visits/v1",
		"GET /visitors/visits/v1/{id}",
		"PUT /visitors/visits/v1/{id}",
		"POST /visitors/requests/v1",
		"POST /feed/posts/v1",
		"PUT /feed/posts/v1/{id}",
		"GET /feed/posts/v1/{id}/comments",
		"GET /transactions/money/v1",
		"GET /shop/products/v1",
		"GET /shop/products/v1/{productId}",
		"GET /shop/orders/v1",
		"GET /discounts/redemptions/v1",
		"GET /events/v1/{id}",
		"POST /oauth2/token",
	}
	doc := load(t)
	var got []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			got = append(got, method+" "+path)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("operations:\n got %q\nwant %q", got, want)
	}
}

func TestEveryOperationDocumentsErrorsAndWrapping(t *testing.T) {
	doc := load(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			codes := []string{"400", "401", "429", "5XX"}
			if path != "/oauth2/token" {
				codes = append(codes, "403", "404", "409")
				hasNet := false
				for _, p := range op.Parameters {
					if p.Value.In == "header" && p.Value.Name == "service-network-id" {
						hasNet = true
						if p.Value.Required != (path == "/events/v1/{id}") {
							t.Errorf("%s: service-network-id required=%v", name, p.Value.Required)
						}
					}
				}
				if !hasNet {
					t.Errorf("%s: no service-network-id header parameter", name)
				}
			}
			for _, c := range codes {
				r := op.Responses.Value(c)
				if r == nil {
					t.Errorf("%s: no %s response", name, c)
					continue
				}
				s := r.Value.Content.Get("application/json").Schema.Value
				if _, ok := s.Properties["message"]; !ok || !slices.Contains(s.Required, "type") {
					t.Errorf("%s %s: not the error body", name, c)
				}
			}
			okCode := "200"
			if method == "POST" && path != "/oauth2/token" {
				okCode = "201"
			}
			r := op.Responses.Value(okCode)
			if r == nil {
				t.Errorf("%s: no %s response", name, okCode)
				continue
			}
			if path == "/oauth2/token" {
				continue
			}
			s := r.Value.Content.Get("application/json").Schema.Value
			wantKeys := 1
			if path == "/billing/invoices/v1/{id}/items" {
				wantKeys = 2 // invoice and invoiceItems
			}
			if len(s.Required) != wantKeys || s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has {
				t.Errorf("%s: success body must be closed and wrap a single required key, got required %v", name, s.Required)
			}
			for k := range s.Properties {
				if k != s.Required[0] && k != "nextPageToken" && k != "searchQueryNext" && !(k == "invoiceItems" && path == "/billing/invoices/v1/{id}/items") {
					t.Errorf("%s: unexpected top-level key %q", name, k)
				}
			}
		}
	}
}

// TestSchemasMatchRestclient checks that every documented property exists,
// with a compatible type, in the restclient wire type of the same object, and
// that the full objects document every field restclient has.
func TestSchemasMatchRestclient(t *testing.T) {
	doc := load(t)
	pairs := map[string]any{
		"Tax": restclient.Tax{}, "User": restclient.User{}, "Visitor": restclient.Visitor{}, "Address": restclient.Address{},
		"Discount": restclient.Discount{}, "ItemPayment": restclient.ItemPayment{}, "Company": restclient.Company{},
		"PriceSplit": restclient.PriceSplit{}, "CreditNote": restclient.CreditNote{}, "CreditNoteLine": restclient.CreditNoteLine{},
		"Booking": restclient.Booking{}, "Resource": restclient.Resource{}, "Visit": restclient.Visit{},
		"VisitRequest": restclient.VisitRequest{}, "Post": restclient.Post{}, "Comment": restclient.Comment{},
		"Invoice": restclient.Invoice{}, "InvoiceItem": restclient.InvoiceItem{}, "Transaction": restclient.Transaction{},
		"Product": restclient.Product{}, "ProductOption": restclient.ProductOption{}, "Order": restclient.Order{},
		"Redemption": restclient.Redemption{}, "Event": restclient.Event{},
		"CreditNoteCreate": restclient.CreditNoteCreateRequest{}, "BookingCreate": restclient.BookingCreateRequest{},
		"VisitCreate": restclient.VisitCreateRequest{}, "VisitUpdate": restclient.VisitUpdateRequest{},
		"VisitRequestCreate": restclient.VisitRequestCreateRequest{}, "PostCreate": restclient.PostCreateRequest{},
		"PostUpdate": restclient.PostUpdateRequest{},
	}
	for name, v := range pairs {
		ref := doc.Components.Schemas[name]
		if ref == nil {
			t.Errorf("schema %s missing", name)
			continue
		}
		typ := reflect.TypeOf(v)
		// Both directions at the top level.
		fields := jsonFields(typ)
		for f := range fields {
			if _, ok := ref.Value.Properties[f]; !ok {
				t.Errorf("%s: restclient field %q not documented", name, f)
			}
		}
		// Documented -> decodable, recursively.
		compareSchema(t, name, ref.Value, typ)
	}
}

func jsonFields(typ reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = f.Type
	}
	return out
}

var (
	timestampType = reflect.TypeOf(restclient.Timestamp{})
	rawType       = reflect.TypeOf(json.RawMessage{})
)

func compareSchema(t *testing.T, where string, s *openapi3.Schema, typ reflect.Type) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch {
	case typ == timestampType:
		if s.Format != "date-time" || !s.Nullable {
			t.Errorf("%s: timestamp schema is %q nullable=%v", where, s.Format, s.Nullable)
		}
		return
	case typ == rawType:
		if !s.Type.Is("object") {
			t.Errorf("%s: free object documented as %v", where, s.Type)
		}
		return
	}
	switch typ.Kind() {
	case reflect.String:
		if !s.Type.Is("string") {
			t.Errorf("%s: string in restclient, %v documented", where, s.Type)
		}
	case reflect.Float64:
		if !s.Type.Is("number") {
			t.Errorf("%s: number in restclient, %v documented", where, s.Type)
		}
	case reflect.Bool:
		if !s.Type.Is("boolean") {
			t.Errorf("%s: boolean in restclient, %v documented", where, s.Type)
		}
	case reflect.Slice:
		if !s.Type.Is("array") {
			t.Errorf("%s: array in restclient, %v documented", where, s.Type)
			return
		}
		compareSchema(t, where+"[]", s.Items.Value, typ.Elem())
	case reflect.Struct:
		if !s.Type.Is("object") {
			t.Errorf("%s: object in restclient, %v documented", where, s.Type)
			return
		}
		fields := jsonFields(typ)
		for name, p := range s.Properties {
			ft, ok := fields[name]
			if !ok {
				t.Errorf("%s: documented property %q is not in restclient.%s", where, name, typ.Name())
				continue
			}
			compareSchema(t, where+"."+name, p.Value, ft)
		}
	default:
		t.Errorf("%s: unexpected Go kind %s", where, typ.Kind())
	}
}

func TestHandler(t *testing.T) {
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" || rec.Body.String() != string(Document()) {
		t.Fatalf("GET: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	rec = httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/openapi.json", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", rec.Code)
	}
}

// ---- Validator ----

const (
	uuid1 = "3f1c2b9e-6a4d-4e3b-9c1a-2b7d8e9f0a1b"
	uuid2 = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
)

type reports struct {
	mu   sync.Mutex
	errs []string
}

func (r *reports) add(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err.Error())
}

func (r *reports) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.errs
	r.errs = nil
	return e
}

// canned answers every request with the status, content type and body set
// by the test for the request's path (the mux pattern decides nothing else).
type canned struct {
	status int
	header map[string]string
	body   string
}

func newValidated(t *testing.T, answers map[string]canned, extra func(*http.ServeMux)) (*httptest.Server, *reports) {
	t.Helper()
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for pattern, a := range answers {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			for k, v := range a.header {
				w.Header().Set(k, v)
			}
			w.WriteHeader(a.status)
			_, _ = io.WriteString(w, a.body)
		})
	}
	if extra != nil {
		extra(mux)
	}
	rep := &reports{}
	srv := httptest.NewServer(v.Wrap(mux, rep.add))
	t.Cleanup(srv.Close)
	return srv, rep
}

func send(t *testing.T, srv *httptest.Server, method, path, contentType, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", "Basic eDp5")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestValidatorResponses(t *testing.T) {
	good := `{"resource":{"id":"` + uuid1 + `","title":"Desk 1","capacity":4,"createDate":"2021-05-21T10:00:00Z",` +
		`"autoRelease":{"enabled":true,"interval":"fiveMinutes"},"credits":{"enabled":true,"price":1.5,` +
		`"tiers":[{"from":0,"upTo":10,"unitAmount":1}]}}}`
	for _, tc := range []struct {
		name   string
		answer canned
		want   []string // substrings, one per expected report; none = conforming
	}{
		{"conforming", canned{200, nil, good}, nil},
		{"null timestamp", canned{200, nil, `{"resource":{"id":"` + uuid1 + `","createDate":null}}`}, nil},
		{"conforming error", canned{404, nil, `{"message":"no such resource","type":"not_found"}`}, nil},
		{"conforming 429 with Retry-After", canned{429, map[string]string{"Retry-After": "2"}, `{"message":"slow down","type":"rate_limited"}`}, nil},
		{"conforming 503", canned{503, nil, `{"message":"down","type":"unavailable"}`}, nil},
		{"undocumented field", canned{200, nil, `{"resource":{"id":"` + uuid1 + `","bogus":1}}`}, []string{"bogus"}},
		{"undocumented nested field", canned{200, nil, `{"resource":{"id":"` + uuid1 + `","autoRelease":{"enabled":true,"x":1}}}`}, []string{"/resource/autoRelease"}},
		{"wrong type", canned{200, nil, `{"resource":{"id":"` + uuid1 + `","capacity":"4"}}`}, []string{"/resource/capacity"}},
		{"bad timestamp", canned{200, nil, `{"resource":{"id":"` + uuid1 + `","createDate":"yesterday"}}`}, []string{"/resource/createDate"}},
		{"bad uuid", canned{200, nil, `{"resource":{"id":"r-1"}}`}, []string{"/resource/id"}},
		{"missing id", canned{200, nil, `{"resource":{"title":"x"}}`}, []string{"id"}},
		{"unwrapped", canned{200, nil, `{"id":"` + uuid1 + `"}`}, []string{"resource", "id"}},
		{"undocumented status", canned{418, nil, `{"message":"teapot","type":"teapot"}`}, []string{"status is not supported"}},
		{"error body without type", canned{404, nil, `{"message":"gone"}`}, []string{"type"}},
		{"not JSON", canned{200, nil, `{"resource":`}, []string{"decode"}},
		{"wrong content type", canned{200, map[string]string{"Content-Type": "text/plain"}, good}, []string{"text/plain"}},
		{"two violations", canned{200, nil, `{"resource":{"id":"` + uuid1 + `","capacity":"4","title":5}}`}, []string{"capacity", "title"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, rep := newValidated(t, map[string]canned{"GET /resources/v1/{id}": tc.answer}, nil)
			resp, body := send(t, srv, "GET", "/resources/v1/"+uuid2, "", "")
			// The response reaches the client unchanged.
			if resp.StatusCode != tc.answer.status || body != tc.answer.body {
				t.Fatalf("client got %d %s", resp.StatusCode, body)
			}
			got := rep.take()
			if len(got) < len(tc.want) || (len(tc.want) == 0) != (len(got) == 0) {
				t.Fatalf("reports %q, want %d matching %q", got, len(tc.want), tc.want)
			}
			all := strings.Join(got, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("no report mentions %q: %q", w, got)
				}
			}
		})
	}
}

func TestValidatorRequestsReportedOnlyWhenAccepted(t *testing.T) {
	okTx := canned{200, nil, `{"transactions":[{"id":"` + uuid1 + `","status":"succeeded","type":"booking","amount":3.5}]}`}
	rejected := canned{400, nil, `{"message":"locationRef is required","type":"invalid_request"}`}
	okBooking := canned{201, nil, `{"booking":{"id":"` + uuid1 + `","resourceRef":"` + uuid2 + `"}}`}

	for _, tc := range []struct {
		name                   string
		answers                map[string]canned
		method, path, ct, body string
		want                   string // "" = no report
	}{
		{"valid list", map[string]canned{"GET /transactions/money/v1": okTx}, "GET",
			"/transactions/money/v1?locationRef=" + uuid1 + "&limit=100&status=failed&type=order&createDate%5Bgte%5D=2021-05-21T10:00:00Z", "", "", ""},
		{"missing required param accepted", map[string]canned{"GET /transactions/money/v1": okTx}, "GET",
			"/transactions/money/v1", "", "", "locationRef"},
		{"missing required param rejected", map[string]canned{"GET /transactions/money/v1": rejected}, "GET",
			"/transactions/money/v1", "", "", ""},
		{"limit out of range accepted", map[string]canned{"GET /transactions/money/v1": okTx}, "GET",
			"/transactions/money/v1?locationRef=" + uuid1 + "&limit=101", "", "", "limit"},
		{"bad status enum accepted", map[string]canned{"GET /transactions/money/v1": okTx}, "GET",
			"/transactions/money/v1?locationRef=" + uuid1 + "&status=done", "", "", "status"},
		{"bad date filter accepted", map[string]canned{"GET /transactions/money/v1": okTx}, "GET",
			"/transactions/money/v1?locationRef=" + uuid1 + "&createDate%5Blte%5D=tomorrow", "", "", "createDate[lte]"},
		{"valid body", map[string]canned{"POST /resources/bookings/v1": okBooking}, "POST", "/resources/bookings/v1",
			"application/json", `{"booking":{"resourceRef":"` + uuid2 + `","startDate":"2021-05-21T10:00:00Z","endDate":"2021-05-21T11:00:00Z"}}`, ""},
		{"body missing required field accepted", map[string]canned{"POST /resources/bookings/v1": okBooking}, "POST", "/resources/bookings/v1",
			"application/json", `{"booking":{"resourceRef":"` + uuid2 + `","startDate":"2021-05-21T10:00:00Z"}}`, "endDate"},
		{"body missing required field rejected", map[string]canned{"POST /resources/bookings/v1": {400, nil, `{"message":"endDate is required","type":"invalid_request"}`}},
			"POST", "/resources/bookings/v1", "application/json", `{"booking":{"resourceRef":"` + uuid2 + `"}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, rep := newValidated(t, tc.answers, nil)
			send(t, srv, tc.method, tc.path, tc.ct, tc.body)
			got := rep.take()
			if tc.want == "" {
				if len(got) != 0 {
					t.Fatalf("unexpected reports %q", got)
				}
				return
			}
			if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), tc.want) {
				t.Fatalf("reports %q, want one mentioning %q", got, tc.want)
			}
		})
	}
}

func TestValidatorTokenEndpoint(t *testing.T) {
	srv, rep := newValidated(t, map[string]canned{
		"POST /oauth2/token": {200, nil, `{"access_token":"a","expires_in":3600,"refresh_token":"r","scope":"feed events","token_type":"Bearer"}`},
	}, nil)
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"r"}, "client_id": {"c"}, "client_secret": {"s"}}
	send(t, srv, "POST", "/oauth2/token", "application/x-www-form-urlencoded", form.Encode())
	if got := rep.take(); len(got) != 0 {
		t.Fatalf("reports %q", got)
	}
	form.Set("grant_type", "password")
	send(t, srv, "POST", "/oauth2/token", "application/x-www-form-urlencoded", form.Encode())
	if got := rep.take(); len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), "grant_type") {
		t.Fatalf("reports %q, want grant_type", got)
	}
}

func TestValidatorSkips(t *testing.T) {
	h := hooks.New()
	h.SetFault("GET /resources/v1/{id}", hooks.Fault{Kind: hooks.FaultMalformed, Rate: 1})
	h.SetFault("GET /events/v1/{id}", hooks.Fault{Kind: hooks.FaultReset, Rate: 1})
	srv, rep := newValidated(t, nil, func(mux *http.ServeMux) {
		real := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("faulted handler ran") })
		mux.Handle("GET /resources/v1/{id}", h.Wrap("GET /resources/v1/{id}", real))
		mux.Handle("GET /events/v1/{id}", h.Wrap("GET /events/v1/{id}", real))
		mux.Handle("/_stats", h.StatsHandler())
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	})

	// Undocumented paths pass through unchecked.
	if resp, body := send(t, srv, "GET", "/healthz", "", ""); resp.StatusCode != 200 || body != "ok" {
		t.Fatalf("healthz %d %q", resp.StatusCode, body)
	}
	if resp, body := send(t, srv, "GET", "/_stats", "", ""); resp.StatusCode != 200 || !strings.Contains(body, `"total"`) {
		t.Fatalf("_stats %d %q", resp.StatusCode, body)
	}
	// Injected faults are not reported.
	if resp, _ := send(t, srv, "GET", "/resources/v1/"+uuid1, "", ""); resp.Header.Get(hooks.FaultHeader) != "malformed" {
		t.Fatalf("fault header %q", resp.Header.Get(hooks.FaultHeader))
	}
	// Hijacking works through the validator's recorder.
	req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/events/v1/"+uuid1, nil)
	resp, err := srv.Client().Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("reset fault answered %d", resp.StatusCode)
	}
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("reset fault: %v", err)
	}
	if got := rep.take(); len(got) != 0 {
		t.Fatalf("unexpected reports %q", got)
	}
}
