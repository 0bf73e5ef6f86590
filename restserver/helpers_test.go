package restserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/restserver/openapi/openapitest"
)

// testServer is a Server behind a real HTTP listener, with the demo data at
// scale 1 and its manifest.
type testServer struct {
	*Server
	URL      string
	Manifest *DemoManifest
	client   *http.Client
}

// newTestServer starts a server on a private in-memory database with demo
// data; everything is closed when the test ends.
func newTestServer(t testing.TB) *testServer {
	t.Helper()
	return newTestServerConfig(t, Config{DBPath: ":memory:", DemoScale: 1})
}

// newTestServerConfig starts a server with cfg.
func newTestServerConfig(t testing.TB, cfg Config) *testServer {
	t.Helper()
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	// Every response of every test is checked against the OpenAPI document.
	v, err := openapitest.NewValidator()
	if err != nil {
		t.Fatalf("openapitest.NewValidator: %v", err)
	}
	h := v.Wrap(s.Handler(), func(err error) { t.Errorf("OpenAPI violation: %v", err) })
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		hs.Close()
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	ts := &testServer{Server: s, URL: hs.URL, client: &http.Client{Timeout: 30 * time.Second}}
	if cfg.DemoScale > 0 {
		m, err := s.Manifest()
		if err != nil {
			t.Fatalf("Manifest: %v", err)
		}
		ts.Manifest = m
	}
	return ts
}

// auth is the credentials of one request.
type auth struct {
	header  string // Authorization
	network string // service-network-id, "" = none
}

func (ts *testServer) basic() auth { return auth{ts.Manifest.BasicAuth, ""} }
func (ts *testServer) bearer() auth {
	return auth{"Bearer " + ts.Manifest.BearerToken, ts.Manifest.NetworkID}
}
func (ts *testServer) readonly() auth {
	return auth{"Bearer " + ts.Manifest.ReadonlyBearerToken, ts.Manifest.NetworkID}
}
func (ts *testServer) other() auth {
	o := ts.Manifest.OtherNetworks[0]
	return auth{"Bearer " + o.BearerToken, o.NetworkID}
}

// response is a decoded HTTP response.
type response struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into v, failing the test on error.
func (r response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// errBody decodes an error body and checks its status and type.
func (r response) wantError(t testing.TB, status int, typ string, msgContains string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	var e errorBody
	r.json(t, &e)
	if e.Type != typ || e.Message == "" {
		t.Fatalf("error body = %+v, want type %q", e, typ)
	}
	if !strings.Contains(e.Message, msgContains) {
		t.Fatalf("error message %q does not mention %q", e.Message, msgContains)
	}
}

// do sends a request; body is JSON-encoded unless it is a string or nil.
func (ts *testServer) do(t testing.TB, a auth, method, path string, body any) response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.header != "" {
		req.Header.Set("Authorization", a.header)
	}
	if a.network != "" {
		req.Header.Set("service-network-id", a.network)
	}
	res, err := ts.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// ok sends a request and fails unless the status is want.
func (ts *testServer) ok(t testing.TB, a auth, want int, method, path string, body any) response {
	t.Helper()
	r := ts.do(t, a, method, path, body)
	if r.status != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.status, want, r.body)
	}
	return r
}

// outsideContract sends a GET the OpenAPI document calls invalid, straight
// to the service's handler (not through the validating listener), for tests
// of the service's leniency beyond the contract (a limit it coerces).
func (ts *testServer) outsideContract(t testing.TB, a auth, path string) response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if a.header != "" {
		req.Header.Set("Authorization", a.header)
	}
	if a.network != "" {
		req.Header.Set("service-network-id", a.network)
	}
	rec := httptest.NewRecorder()
	ts.Handler().ServeHTTP(rec, req)
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}
