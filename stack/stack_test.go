package stack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/internal/base/accesslog"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// start parses args as the program does, lets adjust change the result,
// and serves the stack on a loopback port.
func start(t *testing.T, log io.Writer, adjust func(*stack.Config), args ...string) (*stack.Stack, string) {
	t.Helper()
	cfg, err := stack.ParseFlags(append([]string{"-data-dir=", "-metrics-addr="}, args...), func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if adjust != nil {
		adjust(&cfg)
	}
	if log == nil {
		log = io.Discard
	}
	return testenv.Serve(t, cfg, slog.New(slog.NewJSONHandler(log, nil)))
}

// TestEveryRouteIsLogged: the request id and the access log line are the
// router's, so health, readiness and the playground get them as /graphql does.
func TestEveryRouteIsLogged(t *testing.T) {
	var buf testenv.LogBuffer
	st, base := start(t, &buf, nil)
	m := st.Embedded.Manifest
	hc := &http.Client{}
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/healthz", 200}, {"GET", "/readyz", 200}, {"GET", "/", 200}, {"POST", "/graphql", 200}, {"GET", "/nowhere", 404},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(`{"query":"{ __typename }"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+m.BearerToken)
		req.Header.Set(accesslog.RequestIDHeader, "id-"+strings.Trim(strings.ReplaceAll(tc.path, "/", "-"), "-"))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get(accesslog.RequestIDHeader) != req.Header.Get(accesslog.RequestIDHeader) {
			t.Errorf("%s %s: %d, request id %q", tc.method, tc.path, resp.StatusCode, resp.Header.Get(accesslog.RequestIDHeader))
		}
	}
	var lines []map[string]any
	for ln := range strings.SplitSeq(buf.String(), "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(ln), &l) == nil && l["msg"] == accesslog.Message {
			lines = append(lines, l)
		}
	}
	got := make([]string, len(lines))
	for i, l := range lines {
		got[i] = fmt.Sprintf("%s %s %v %s", l["method"], l["path"], l["status"], l["request_id"])
	}
	want := []string{"GET /healthz 200 id-healthz", "GET /readyz 200 id-readyz", "GET / 200 id-", "POST /graphql 200 id-graphql", "GET /nowhere 404 id-nowhere"}
	if !slices.Equal(got, want) {
		t.Errorf("access log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(buf.String(), m.BearerToken) {
		t.Error("the log holds the bearer token")
	}
}

// TestZeroTurnsOff: every flag documented "0 = off" lets through, set to 0,
// a request its default refuses.
func TestZeroTurnsOff(t *testing.T) {
	repeat := func(format string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, format, i)
		}
		return b.String()
	}
	type probe func(t *testing.T, st *stack.Stack, c *gqlclient.Client) (refused bool)
	// byCode sends q and reports whether an error carries code.
	byCode := func(code, q string, extra map[string]any) probe {
		return func(t *testing.T, st *stack.Stack, c *gqlclient.Client) bool {
			m := st.Embedded.Manifest
			q = strings.ReplaceAll(q, "$LOC", m.IDs["location"][0])
			q = strings.ReplaceAll(q, "$RES", m.IDs["resource"][0])
			r, err := c.Post(t.Context(), gqlclient.Request{Query: q, Extensions: extra}, nil)
			if err != nil {
				t.Fatal(err)
			}
			return slices.Contains(r.Codes(), code)
		}
	}
	manyCalls := func(n int) string {
		q := "{ "
		for i := range n {
			q += fmt.Sprintf(`r%d: resource(id: "00000000-0000-4000-8000-%012d") { id } `, i, i)
		}
		return q + "}"
	}
	for _, tc := range []struct {
		flag  string
		probe probe
		args  []string // besides the flag; the pacing of both sides is off unless a case turns it on
	}{
		{"max-depth", byCode(errcode.QueryTooComplex, `{ resource(id: "$RES") { `+strings.Repeat("parent { ", 12)+"id"+strings.Repeat(" }", 12)+" } }", nil), nil},
		{"max-aliases", byCode(errcode.QueryTooComplex, `{ location(id: "$LOC") { `+repeat("a%d: id ", 31)+` } }`, nil), nil},
		{"max-root-fields", byCode(errcode.QueryTooComplex, `{ `+repeat(`r%d: resource(id: "$RES") { id } `, 21)+` }`, nil), nil},
		{"max-cost", byCode(errcode.QueryTooComplex, `{ location(id: "$LOC") { transactions(first: 500) { nodes { invoice { creditNotes(first: 100) { nodes { id } } } } } } }`, nil), nil},
		{"max-tokens", byCode(errcode.QueryTooComplex, `query Q(`+repeat("$v%d: Int ", 3751)+`) { __typename }`, nil), nil},
		{"max-selections", byCode(errcode.QueryTooComplex, `{ location(id: "$LOC") { `+strings.Repeat("id ", 1001)+`} }`, nil), nil},
		{"max-directives", byCode(errcode.QueryTooComplex, `{ __typename `+strings.Repeat("@include(if: true) ", 51)+`}`, nil), nil},
		{"max-representations", byCode(errcode.QueryTooComplex, `{ _entities(representations: [`+strings.Repeat(`{__typename: "Location", id: "$LOC"} `, 501)+`]) { ... on Location { id } } }`, nil), nil},
		{"apq-cache-size", byCode(errcode.PersistedQueryNotFound, ``, map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": strings.Repeat("ab", 32)}}), nil},
		{"max-upstream-calls", func(t *testing.T, st *stack.Stack, c *gqlclient.Client) bool {
			// 201 distinct resources: one call each, one more than the default cap.
			q := "{ "
			for i := range 201 {
				q += fmt.Sprintf(`r%d: resource(id: "00000000-0000-4000-8000-%012d") { id } `, i, i)
			}
			return byCode(errcode.RequestLimitExceeded, q+"}", nil)(t, st, c)
		}, nil},
		// 30 calls at about 8.6 a second need more than the 1 s deadline.
		{"upstream-rps", byCode(errcode.RateLimited, manyCalls(30), nil), []string{"-request-timeout=1s", "-max-root-fields=0", "-max-aliases=0", "-upstream-rps=10", "-upstream-burst=2"}},
		// 60 calls at once: the demo service refuses those past 10 in a
		// second, and their Retry-After outlasts the 500 ms deadline.
		{"demo-rate-limit", byCode(errcode.RateLimited, manyCalls(60), nil), []string{"-request-timeout=500ms", "-max-root-fields=0", "-max-aliases=0", "-demo-rate-limit=10"}},
		// 5 aliases of a 10202-cost operation (the cost limit off) hold the
		// whole default bound while the upstream holds its first call; a
		// cost-1 operation then finds no room and is refused at once.
		{"max-cost-in-flight", func(t *testing.T, st *stack.Stack, c *gqlclient.Client) bool {
			m := st.Embedded.Manifest
			heavy := "{ "
			for i := range 5 {
				heavy += fmt.Sprintf(`h%d: location(id: %q) { transactions(first: 100) { nodes { invoice { creditNotes(first: 100) { nodes { id } } } } } } `, i, m.IDs["location"][0])
			}
			hold.arm()
			arrived, release := hold.arrived, hold.release
			done := make(chan struct{})
			go func() {
				defer close(done)
				if _, err := c.Post(t.Context(), gqlclient.Request{Query: heavy + "}"}, nil); err != nil {
					t.Error(err)
				}
			}()
			select {
			case <-arrived:
			case <-done:
				t.Fatal("the heavy operation answered without an upstream call")
			}
			refused := byCode(errcode.Overloaded, `{ resource(id: "$RES") { id } }`, nil)(t, st, c)
			close(release)
			<-done
			return refused
		}, []string{"-max-cost=0", "-admission-wait=0"}},
		// 100 introspections of the schema's types: about 12 MB of data, no
		// upstream call, above the default 8 MiB (and far above the cost
		// limit, turned off here).
		{"max-response-bytes", byCode(errcode.ResponseTooLarge, `{ `+repeat(`s%d: __schema { types { name description fields { name description args { name description } type { name kind ofType { name kind } } } } } `, 100)+`}`, nil),
			[]string{"-max-aliases=0", "-max-root-fields=0", "-max-selections=0", "-max-cost=0"}},
		{"request-timeout", func(t *testing.T, st *stack.Stack, c *gqlclient.Client) bool {
			q := `{ resource(id: "` + st.Embedded.Manifest.IDs["resource"][0] + `") { id } }`
			_, err := c.Post(t.Context(), gqlclient.Request{Query: q}, nil)
			if err != nil {
				t.Fatal(err)
			}
			return deadlineSeen.Load()
		}, nil},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			run := func(flags ...string) bool {
				args := append([]string{"-upstream-rps=0", "-demo-rate-limit=0"}, tc.args...)
				args = append(args, flags...)
				st, base := start(t, nil, func(c *stack.Config) {
					if tc.flag == "max-cost-in-flight" {
						c.UpstreamMiddleware = hold.middleware
					}
					if tc.flag == "max-upstream-calls" { // let the 201 fields through the other limits
						c.Graph.Limits.MaxRootFields, c.Graph.Limits.MaxAliases = 0, 0
					}
					c.Graph.Extensions = append(c.Graph.Extensions, testenv.FieldInterceptor(watchDeadline))
				}, args...)
				m := st.Embedded.Manifest
				c := &gqlclient.Client{URL: base + "/graphql", Header: gqlclient.Credentials("Bearer "+m.BearerToken, m.NetworkID)}
				deadlineSeen.Store(false)
				return tc.probe(t, st, c)
			}
			if !run() {
				t.Fatalf("-%s: the default does not refuse the probe", tc.flag)
			}
			if run("-" + tc.flag + "=0") {
				t.Errorf("-%s=0 still refuses", tc.flag)
			}
		})
	}
}

// hold, once armed, holds the first upstream request it sees until release
// is closed (the max-cost-in-flight probe; tests in this file run one
// request at a time).
var hold = &holder{}

type holder struct {
	mu      sync.Mutex
	armed   bool
	arrived chan struct{}
	release chan struct{}
}

// arm makes the next upstream request wait for release.
func (h *holder) arm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed, h.arrived, h.release = true, make(chan struct{}), make(chan struct{})
}

func (h *holder) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		held := h.armed
		h.armed = false
		arrived, release := h.arrived, h.release
		h.mu.Unlock()
		if held {
			close(arrived)
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineSeen records whether a resolver ran with a deadline (tests in this
// file run one request at a time).
var deadlineSeen atomic.Bool

func watchDeadline(ctx context.Context, next graphql.Resolver) (any, error) {
	if _, ok := ctx.Deadline(); ok {
		deadlineSeen.Store(true)
	}
	return next(ctx)
}
