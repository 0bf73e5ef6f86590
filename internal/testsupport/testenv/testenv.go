// Package testenv starts the whole product for a test, through the same
// stack the program uses: the local REST service on SQLite (in
// memory, demo data) behind a real HTTP listener, and the facade's router in
// front of it, talking over loopback HTTP exactly as in production. It is a
// thin testing.TB wrapper: the demo credentials, a GraphQL client
// (internal/testsupport/gqlclient), and the upstream's per-route counters and fault hooks.
package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/base/counts"
	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver"
	"github.com/workspacenet/facade/restserver/hooks"
	"github.com/workspacenet/facade/stack"
)

// Options adjust an Env. The facade starts from stack.DefaultConfig with the
// REST service in memory and the upstream call report on.
type Options struct {
	DemoScale   int // default 1
	ClientOpts  []restclient.Option
	GraphOpts   func(*graph.Options) // the facade's GraphQL options, after the rest
	Config      func(*stack.Config)  // last word on the whole configuration
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
	Stack       *stack.Stack
	Upstream    *restserver.Server
	UpstreamURL string
	BaseURL     string // the facade's root, http://127.0.0.1:port
	FacadeURL   string // BaseURL + "/graphql"
	Manifest    *restserver.DemoManifest
	HTTP        *http.Client
	// GraphQL is a client of FacadeURL sending no credentials by itself.
	GraphQL *gqlclient.Client
}

// New starts an Env and registers its shutdown with tb.Cleanup.
func New(tb testing.TB, o Options) *Env {
	tb.Helper()
	cfg := stack.DefaultConfig()
	cfg.DataDir = "" // in memory
	if o.DemoScale > 0 {
		cfg.DemoScale = o.DemoScale
	}
	// The upstream's rate limit, the facade's budget and its response cache
	// are off unless a test turns them on (Options.Config): most tests count
	// the calls of one request, not time.
	cfg.Budget, cfg.DemoRateLimit, cfg.CacheTTL = budget.Config{}, 0, ""
	cfg.UpstreamTrace = "on"
	if o.NoTrace {
		cfg.UpstreamTrace = "off"
	}
	cfg.ClientOptions = o.ClientOpts
	cfg.Graph.ServerCredentials = o.ServerCreds
	if f := o.OnUpstreamRequest; f != nil {
		cfg.UpstreamMiddleware = func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				f(r)
				next.ServeHTTP(w, r)
			})
		}
	}
	if o.GraphOpts != nil {
		o.GraphOpts(&cfg.Graph)
	}
	if o.Config != nil {
		o.Config(&cfg)
	}
	st, base := Serve(tb, cfg, o.Logger)
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	hc := &http.Client{Transport: tr}
	tb.Cleanup(tr.CloseIdleConnections)
	if st.Embedded == nil {
		tb.Fatal("testenv: the stack has no local REST service")
	}
	st.Embedded.Server.Hooks().Reset()
	return &Env{
		Stack:       st,
		Upstream:    st.Embedded.Server,
		UpstreamURL: st.UpstreamURL,
		BaseURL:     base,
		FacadeURL:   base + "/graphql",
		Manifest:    st.Embedded.Manifest,
		HTTP:        hc,
		GraphQL:     &gqlclient.Client{URL: base + "/graphql", HTTP: hc},
	}
}

// Serve starts the stack of cfg as the program does and serves it on a
// loopback port until tb's cleanup; it returns the stack and its base URL
// (http://127.0.0.1:port). For tests that need a stack of their own beside
// an Env (another replica) or without one.
func Serve(tb testing.TB, cfg stack.Config, logger *slog.Logger) (*stack.Stack, string) {
	tb.Helper()
	st, err := stack.Start(context.Background(), cfg, logger)
	if err != nil {
		tb.Fatalf("stack: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.Close()
		tb.Fatal(err)
	}
	go func() { _ = st.Serve(ln) }()
	tb.Cleanup(func() {
		if err := st.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			tb.Errorf("stack close: %v", err)
		}
	})
	return st, "http://" + ln.Addr().String()
}

// WaitFor polls cond every 5 ms until it holds, for at most 30 s, and
// fails tb after that. Tests wait on events and counts with it, never on a
// duration: the bound only stops a test that would hang.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
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
type Response = gqlclient.Response

// Error is one GraphQL error.
type Error = gqlclient.Error

// Header returns c as request headers.
func (c Creds) Header() http.Header { return gqlclient.Credentials(c.Authorization, c.NetworkID) }

// Query posts a GraphQL request with creds (zero Creds sends none) and
// decodes the response. It fails tb on transport errors only.
func (e *Env) Query(tb testing.TB, c Creds, query string, vars map[string]any) *Response {
	tb.Helper()
	return e.Do(tb, c, query, vars, nil)
}

// Do is Query with extra request headers.
func (e *Env) Do(tb testing.TB, c Creds, query string, vars map[string]any, headers map[string]string) *Response {
	tb.Helper()
	h := c.Header()
	for k, v := range headers {
		h.Set(k, v)
	}
	resp, err := e.GraphQL.Post(context.Background(), gqlclient.Request{Query: query, Variables: vars}, h)
	if err != nil {
		tb.Fatalf("POST /graphql: %v", err)
	}
	return resp
}

// MustData fails tb if the response has errors, and decodes data into v.
func MustData(tb testing.TB, r *Response, v any) {
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
func FormatCalls(m map[string]int64) string { return counts.Format(m, "  %s: %d\n", "") }

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
