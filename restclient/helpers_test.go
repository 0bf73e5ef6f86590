package restclient

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// basePath is where the test upstream is mounted: a client that builds
// absolute paths instead of joining the base URL misses every route.
const basePath = "/api/v9"

const (
	testToken   = "tok-SECRET-7f3a9c"
	testNetwork = "0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"
)

// upstream is an httptest server whose mux lives under basePath.
type upstream struct {
	t    *testing.T
	mux  *http.ServeMux
	srv  *httptest.Server
	hits atomic.Int64
	// conns counts the connections the server accepted (set before it
	// starts: the server reads ConnState unsynchronised).
	conns atomic.Int64
	// connState, when set (onConnState), is told every connection state.
	connState atomic.Pointer[func(net.Conn, http.ConnState)]
}

// onConnState has f told of every connection's state change from now on.
func (u *upstream) onConnState(f func(net.Conn, http.ConnState)) { u.connState.Store(&f) }

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{t: t, mux: http.NewServeMux()}
	u.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s %s", r.Method, r.URL.EscapedPath())
		http.Error(w, `{"message":"no route","type":"not_found"}`, http.StatusNotFound)
	})
	u.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		u.mux.ServeHTTP(w, r)
	}))
	u.srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			u.conns.Add(1)
		}
		if f := u.connState.Load(); f != nil {
			(*f)(c, s)
		}
	}
	u.srv.Start()
	t.Cleanup(u.srv.Close)
	return u
}

// handle registers h for "METHOD /path" under basePath.
func (u *upstream) handle(pattern string, h http.HandlerFunc) {
	method, path, _ := strings.Cut(pattern, " ")
	u.mux.HandleFunc(method+" "+basePath+path, h)
}

// client returns a client of u with bearer credentials, no real sleeping
// between retries, and the given options on top.
func (u *upstream) client(opts ...Option) *Client {
	u.t.Helper()
	// The authentication gate is off: these fake upstreams answer any
	// credentials, and most tests start concurrent calls of a credential
	// never answered before, which the gate would send one by one. It is
	// tested on its own (authgate_test.go), and on in every test of the
	// facade; WithAuthGate in opts turns it on.
	all := append([]Option{WithBearerToken(testToken, testNetwork), WithAuthGate(AuthGate{})}, opts...)
	c, err := NewClient(u.srv.URL+basePath+"/", all...)
	if err != nil {
		u.t.Fatalf("NewClient: %v", err)
	}
	c.wait = func(ctx context.Context, d time.Duration) error { return ctx.Err() }
	return c
}

// wantRequest is what a handler expects to receive.
type wantRequest struct {
	method string
	path   string     // escaped path relative to basePath
	query  url.Values // exact query (nil = none)
	body   string     // JSON body, compared semantically ("" = no body)
	auth   string     // Authorization header; "" means the test bearer token
	netID  string     // service-network-id header; "" means testNetwork
}

// check asserts r against w.
func (w wantRequest) check(t *testing.T, r *http.Request) {
	t.Helper()
	if r.Method != w.method {
		t.Errorf("method = %s, want %s", r.Method, w.method)
	}
	if got := r.URL.EscapedPath(); got != basePath+w.path {
		t.Errorf("path = %s, want %s", got, basePath+w.path)
	}
	q := r.URL.Query()
	if len(q) == 0 {
		q = nil
	}
	if !reflect.DeepEqual(q, w.query) {
		t.Errorf("query = %v, want %v", q, w.query)
	}
	auth, netID := cmp.Or(w.auth, "Bearer "+testToken), cmp.Or(w.netID, testNetwork)
	if got := r.Header.Get("Authorization"); got != auth {
		t.Errorf("Authorization = %q, want %q", got, auth)
	}
	if got := r.Header.Get("service-network-id"); got != netID {
		t.Errorf("service-network-id = %q, want %q", got, netID)
	}
	if got := r.Header.Get("Accept"); got != "application/json" {
		t.Errorf("Accept = %q", got)
	}
	if got := r.Header.Get("User-Agent"); got == "" {
		t.Error("no User-Agent")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		t.Errorf("reading body: %v", err)
	}
	if w.body == "" {
		if len(body) != 0 {
			t.Errorf("unexpected body %s", body)
		}
		return
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	assertJSONEqual(t, body, []byte(w.body))
}

// serveJSON answers status and body after checking the request against want.
func (u *upstream) serveJSON(pattern string, want wantRequest, status int, body string) {
	u.handle(pattern, func(w http.ResponseWriter, r *http.Request) {
		want.check(u.t, r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	})
}

// fixture returns testdata/name: a complete example of one object of the spec.
func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSpace(b))
}

// assertJSONEqual compares two JSON texts semantically.
func assertJSONEqual(t testing.TB, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want invalid JSON %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON differs: %s", strings.Join(jsonDiff("$", g, w), "; "))
	}
}

// jsonDiff lists the paths where two decoded JSON values differ.
func jsonDiff(path string, got, want any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{path + ": not an object"}
		}
		var out []string
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				out = append(out, path+"."+k+": missing")
				continue
			}
			out = append(out, jsonDiff(path+"."+k, gv, wv)...)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				out = append(out, path+"."+k+": unexpected")
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{path + ": array differs"}
		}
		var out []string
		for i := range w {
			out = append(out, jsonDiff(fmt.Sprintf("%s[%d]", path, i), g[i], w[i])...)
		}
		return out
	}
	if !reflect.DeepEqual(got, want) {
		return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
	}
	return nil
}

// assertRoundTrip re-encodes v and compares it with the fixture it came from:
// every field of the fixture was decoded, with its value.
func assertRoundTrip(t testing.TB, v any, fixtureJSON string) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("re-encoding: %v", err)
	}
	assertJSONEqual(t, b, []byte(fixtureJSON))
}

var timestampType = reflect.TypeFor[Timestamp]()
var rawType = reflect.TypeFor[json.RawMessage]()

// assertComplete fails for every field of v left unset after decoding a
// complete fixture: nil pointers, empty slices, empty strings (ids), zero
// timestamps. Embedded summaries are listed in partial by field path
// (".Booking.Resource"): there exactly the named fields must be set and all
// others must be unset.
func assertComplete(t testing.TB, v any, partial map[string][]string) {
	t.Helper()
	seen := map[string]bool{}
	walkComplete(t, reflect.ValueOf(v), "", partial, seen)
	for p := range partial {
		if !seen[p] {
			t.Errorf("partial path %s never reached", p)
		}
	}
}

func isUnset(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Slice, reflect.Map, reflect.String:
		return v.Len() == 0
	}
	if v.Type() == timestampType {
		return v.Interface().(Timestamp).IsZero()
	}
	return v.IsZero()
}

func walkComplete(t testing.TB, v reflect.Value, path string, partial map[string][]string, seen map[string]bool) {
	t.Helper()
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			t.Errorf("%s is nil", cmp.Or(path, "value"))
			return
		}
		v = v.Elem()
	}
	switch {
	case v.Type() == timestampType:
		if v.Interface().(Timestamp).IsZero() {
			t.Errorf("%s is a zero timestamp", path)
		}
		return
	case v.Type() == rawType:
		if v.Len() == 0 {
			t.Errorf("%s is empty", path)
		}
		return
	}
	switch v.Kind() {
	case reflect.Slice:
		if v.Len() == 0 {
			t.Errorf("%s is empty", path)
		}
		for i := range v.Len() {
			walkComplete(t, v.Index(i), path, partial, seen)
		}
	case reflect.Struct:
		only, isPartial := partial[path]
		if isPartial {
			seen[path] = true
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue // not the wire's (Invoice's lazy decoding)
			}
			fv := v.Field(i)
			fp := path + "." + f.Name
			if isPartial && !slices.Contains(only, f.Name) {
				if !isUnset(fv) {
					t.Errorf("%s is set but the spec's summary has no such field", fp)
				}
				continue
			}
			walkComplete(t, fv, fp, partial, seen)
		}
	case reflect.String:
		if v.Len() == 0 {
			t.Errorf("%s is empty", path)
		}
	}
}

// observations collects CallInfos.
type observations struct {
	mu    sync.Mutex
	calls []CallInfo
}

func (o *observations) observe(_ context.Context, ci CallInfo) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, ci)
}

func (o *observations) last(t *testing.T) CallInfo {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.calls) == 0 {
		t.Fatal("no After hook saw a call")
	}
	return o.calls[len(o.calls)-1]
}

// checkCall asserts the After hook saw one call of method route with status.
func checkObserved(t *testing.T, o *observations, method, route string, status int) {
	t.Helper()
	ci := o.last(t)
	if ci.Method != method || ci.Route != route || ci.Status != status {
		t.Errorf("observed %s %s %d, want %s %s %d", ci.Method, ci.Route, ci.Status, method, route, status)
	}
}

// ctx returns a test context whose calls o observes (an After hook).
func (o *observations) ctx(t *testing.T) context.Context {
	return WithCallHooks(ctxT(t), CallHooks{After: o.observe})
}

// memUpstream is an upstream answered in memory, for tests in a synctest
// bubble, where fake time stands still while goroutines work (a network
// upstream runs outside the bubble, and the goroutines of its connections
// never block durably). status gives each answer's status: 200 answers an
// event, any other an error body, and 0 waits until the attempt's context
// ends, as an upstream that never answers. It returns a client of it with
// bearer credentials and opts, and the requests it received.
func memUpstream(t *testing.T, status func(*http.Request) int, opts ...Option) (*Client, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		n.Add(1)
		code := status(r)
		if code == 0 {
			<-r.Context().Done()
			return nil, r.Context().Err()
		}
		body := `{"event":{"id":"e"}}`
		if code != http.StatusOK {
			body = `{"message":"down","type":"unavailable"}`
		}
		return &http.Response{StatusCode: code, Header: http.Header{}, Request: r, Body: io.NopCloser(strings.NewReader(body))}, nil
	})}
	c, err := NewClient("http://upstream.test/api", append([]Option{WithHTTPClient(hc), WithBearerToken(testToken, testNetwork)}, opts...)...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	// Inside the bubble, before it waits for its goroutines: the idle
	// goroutine of a shared GET would otherwise wait out its idle time.
	t.Cleanup(c.CloseIdleConnections)
	return c, &n
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// testCreds are the test client's fixed credentials; testID their identity.
var (
	testCreds = Credentials{Authorization: "Bearer " + testToken, NetworkID: testNetwork}
	testID    = testCreds.Identity()
)
