// Package testenv starts the whole product for a test or a benchmark: the
// local REST service on SQLite (in memory, demo data) behind a real HTTP
// listener, and the GraphQL facade in front of it, talking to each other over
// loopback HTTP exactly as in production. It hands the caller a way to query,
// the demo credentials, and the upstream's per-route call counters and fault
// hooks.
package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver"
	"github.com/workspacenet/facade/restserver/hooks"
)

// Options adjust an Env.
type Options struct {
	DemoScale   int // default 1
	Loaders     loaders.Config
	ClientOpts  []restclient.Option
	GraphOpts   func(*graph.Options) // last word on the facade's options
	Logger      *slog.Logger
	NoTrace     bool // disable the upstream call report
	ServerCreds *restclient.Credentials
	// OnUpstreamRequest, when set, sees every request the upstream receives
	// (headers included) before it is served. It must be safe for concurrent
	// use.
	OnUpstreamRequest func(*http.Request)
}

// Env is a running upstream plus facade.
type Env struct {
	Upstream    *restserver.Server
	UpstreamURL string
	FacadeURL   string // .../graphql
	Manifest    *restserver.DemoManifest
	HTTP        *http.Client
}

// New starts an Env and registers its shutdown with tb.Cleanup.
func New(tb testing.TB, o Options) *Env {
	tb.Helper()
	if o.DemoScale == 0 {
		o.DemoScale = 1
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	rs, err := restserver.New(context.Background(), restserver.Config{DBPath: ":memory:", DemoScale: o.DemoScale, Logger: o.Logger})
	if err != nil {
		tb.Fatalf("restserver: %v", err)
	}
	var uh http.Handler = rs.Handler()
	if f := o.OnUpstreamRequest; f != nil {
		next := uh
		uh = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			f(r)
			next.ServeHTTP(w, r)
		})
	}
	up := httptest.NewServer(uh)
	man, err := rs.Manifest()
	if err != nil {
		tb.Fatalf("manifest: %v", err)
	}
	client, err := restclient.NewClient(up.URL, o.ClientOpts...)
	if err != nil {
		tb.Fatalf("restclient: %v", err)
	}
	gopts := graph.Options{
		Client:            client,
		Loaders:           o.Loaders,
		Logger:            o.Logger,
		Introspection:     true,
		UpstreamTrace:     !o.NoTrace,
		ServerCredentials: o.ServerCreds,
	}
	if o.GraphOpts != nil {
		o.GraphOpts(&gopts)
	}
	mux := http.NewServeMux()
	mux.Handle("/graphql", graph.NewHandler(gopts))
	fs := httptest.NewServer(mux)
	tb.Cleanup(func() {
		fs.Close()
		up.Close()
		rs.Close()
	})
	rs.Hooks().Reset()
	return &Env{
		Upstream:    rs,
		UpstreamURL: up.URL,
		FacadeURL:   fs.URL + "/graphql",
		Manifest:    man,
		HTTP:        fs.Client(),
	}
}

// Hooks are the upstream's counters and fault injection.
func (e *Env) Hooks() *hooks.Hooks { return e.Upstream.Hooks() }

// Creds are request headers identifying a caller.
type Creds struct {
	Authorization string
	NetworkID     string
}

// Bearer returns the demo bearer credentials with every scope.
func (e *Env) Bearer() Creds {
	return Creds{Authorization: "Bearer " + e.Manifest.BearerToken, NetworkID: e.Manifest.NetworkID}
}

// ReadOnly returns the demo bearer credentials with only .readonly scopes.
func (e *Env) ReadOnly() Creds {
	return Creds{Authorization: "Bearer " + e.Manifest.ReadonlyBearerToken, NetworkID: e.Manifest.NetworkID}
}

// Basic returns the demo Basic credentials (every scope).
func (e *Env) Basic() Creds {
	return Creds{Authorization: e.Manifest.BasicAuth, NetworkID: e.Manifest.NetworkID}
}

// Other returns the bearer credentials of the demo's second network.
func (e *Env) Other(tb testing.TB) Creds {
	if len(e.Manifest.OtherNetworks) == 0 {
		tb.Fatal("demo data has no second network")
	}
	o := e.Manifest.OtherNetworks[0]
	return Creds{Authorization: "Bearer " + o.BearerToken, NetworkID: o.NetworkID}
}

// ID returns the i-th demo id of kind ("location", "resource", ...).
func (e *Env) ID(tb testing.TB, kind string, i int) string {
	tb.Helper()
	ids := e.Manifest.IDs[kind]
	if i >= len(ids) {
		tb.Fatalf("demo data has %d %s ids, want index %d", len(ids), kind, i)
	}
	return ids[i]
}

// REST returns a client of the upstream that calls it directly (not through
// the facade), and a context carrying c, to compare the facade's answers with
// what the REST service holds. Its calls count in the upstream counters.
func (e *Env) REST(tb testing.TB, c Creds) (*restclient.Client, context.Context) {
	tb.Helper()
	client, err := restclient.NewClient(e.UpstreamURL, restclient.WithRetry(restclient.RetryPolicy{}))
	if err != nil {
		tb.Fatalf("restclient: %v", err)
	}
	ctx := restclient.WithCredentials(tb.Context(), restclient.Credentials{Authorization: c.Authorization, NetworkID: c.NetworkID})
	return client, ctx
}

// Response is a decoded GraphQL response.
type Response struct {
	Status     int
	Data       json.RawMessage `json:"data"`
	Errors     []Error         `json:"errors"`
	Extensions map[string]json.RawMessage
}

// Error is one GraphQL error.
type Error struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Code returns extensions.code.
func (e Error) Code() string { s, _ := e.Extensions["code"].(string); return s }

// PathString renders the path as "a.0.b".
func (e Error) PathString() string {
	var b bytes.Buffer
	for i, p := range e.Path {
		if i > 0 {
			b.WriteByte('.')
		}
		fmt.Fprint(&b, p)
	}
	return b.String()
}

// Query posts a GraphQL request with creds (zero Creds sends none) and
// decodes the response. It fails tb on transport errors only.
func (e *Env) Query(tb testing.TB, c Creds, query string, vars map[string]any) *Response {
	tb.Helper()
	return e.Do(tb, c, query, vars, nil)
}

// Do is Query with extra request headers.
func (e *Env) Do(tb testing.TB, c Creds, query string, vars map[string]any, headers map[string]string) *Response {
	tb.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, e.FacadeURL, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if c.Authorization != "" {
		req.Header.Set("Authorization", c.Authorization)
	}
	if c.NetworkID != "" {
		req.Header.Set("service-network-id", c.NetworkID)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := e.HTTP.Do(req)
	if err != nil {
		tb.Fatalf("POST /graphql: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Data       json.RawMessage            `json:"data"`
		Errors     []Error                    `json:"errors"`
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		tb.Fatalf("response is not JSON (%d): %s", resp.StatusCode, raw)
	}
	return &Response{Status: resp.StatusCode, Data: out.Data, Errors: out.Errors, Extensions: out.Extensions}
}

// MustData fails tb if the response has errors, and decodes data into v.
func (r *Response) MustData(tb testing.TB, v any) {
	tb.Helper()
	if len(r.Errors) > 0 {
		tb.Fatalf("unexpected errors: %+v", r.Errors)
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		tb.Fatalf("decode data: %v (%s)", err, r.Data)
	}
}

// Calls returns the upstream calls counted since the last Reset, by route,
// and their total.
func (e *Env) Calls() (map[string]int64, int64) {
	return e.Hooks().Counts(), e.Hooks().Total()
}

// ResetCalls zeroes the upstream counters.
func (e *Env) ResetCalls() { e.Hooks().Reset() }

// FormatCalls renders counts sorted, for failure messages.
func FormatCalls(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s: %d\n", k, m[k])
	}
	return b.String()
}

// ExpectNoCalls fails tb if the upstream was called since the last reset.
func (e *Env) ExpectNoCalls(tb testing.TB) {
	tb.Helper()
	if m, n := e.Calls(); n != 0 {
		tb.Fatalf("%d upstream calls, want none:\n%s", n, FormatCalls(m))
	}
}

// LogBuffer is a log sink safe for concurrent use, for asserting on what a
// run logged.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
