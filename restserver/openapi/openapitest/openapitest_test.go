package openapitest

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver/hooks"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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
			srv, rep := newValidated(t, map[string]canned{restclient.OpGetResource.Pattern(): tc.answer}, nil)
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
		{"valid list", map[string]canned{restclient.OpListTransactions.Pattern(): okTx}, "GET",
			"/transactions/money/v1?locationRef=" + uuid1 + "&limit=100&status=failed&type=order&createDate%5Bgte%5D=2021-05-21T10:00:00Z", "", "", ""},
		{"missing required param accepted", map[string]canned{restclient.OpListTransactions.Pattern(): okTx}, "GET",
			restclient.OpListTransactions.Route, "", "", "locationRef"},
		{"missing required param rejected", map[string]canned{restclient.OpListTransactions.Pattern(): rejected}, "GET",
			restclient.OpListTransactions.Route, "", "", ""},
		{"limit out of range accepted", map[string]canned{restclient.OpListTransactions.Pattern(): okTx}, "GET",
			"/transactions/money/v1?locationRef=" + uuid1 + "&limit=101", "", "", "limit"},
		{"bad status enum accepted", map[string]canned{restclient.OpListTransactions.Pattern(): okTx}, "GET",
			"/transactions/money/v1?locationRef=" + uuid1 + "&status=done", "", "", "status"},
		{"bad date filter accepted", map[string]canned{restclient.OpListTransactions.Pattern(): okTx}, "GET",
			"/transactions/money/v1?locationRef=" + uuid1 + "&createDate%5Blte%5D=tomorrow", "", "", "createDate[lte]"},
		{"valid body", map[string]canned{restclient.OpCreateBooking.Pattern(): okBooking}, "POST", restclient.OpCreateBooking.Route,
			"application/json", `{"booking":{"resourceRef":"` + uuid2 + `","startDate":"2021-05-21T10:00:00Z","endDate":"2021-05-21T11:00:00Z"}}`, ""},
		{"body missing required field accepted", map[string]canned{restclient.OpCreateBooking.Pattern(): okBooking}, "POST", restclient.OpCreateBooking.Route,
			"application/json", `{"booking":{"resourceRef":"` + uuid2 + `","startDate":"2021-05-21T10:00:00Z"}}`, "endDate"},
		{"body missing required field rejected", map[string]canned{restclient.OpCreateBooking.Pattern(): {400, nil, `{"message":"endDate is required","type":"invalid_request"}`}},
			"POST", restclient.OpCreateBooking.Route, "application/json", `{"booking":{"resourceRef":"` + uuid2 + `"}}`, ""},
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
	h.SetFault(restclient.OpGetResource.Pattern(), hooks.Fault{Kind: hooks.FaultMalformed, Rate: 1})
	h.SetFault(restclient.OpGetEvent.Pattern(), hooks.Fault{Kind: hooks.FaultReset, Rate: 1})
	srv, rep := newValidated(t, nil, func(mux *http.ServeMux) {
		real := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("faulted handler ran") })
		mux.Handle(restclient.OpGetResource.Pattern(), h.Wrap(restclient.OpGetResource.Pattern(), real))
		mux.Handle(restclient.OpGetEvent.Pattern(), h.Wrap(restclient.OpGetEvent.Pattern(), real))
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
