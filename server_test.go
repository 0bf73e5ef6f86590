package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/restserver"
)

// started is a facade started by run in a test.
type started struct {
	base  string             // http://127.0.0.1:port
	lines []string           // what run printed before serving
	done  chan error         // run's result
	stop  context.CancelFunc // cancels run's context (graceful shutdown)
	// dataDir is the DATA_DIR run was given.
	dataDir string
}

// startRun calls run with env and waits until it prints its listening line.
func startRun(t *testing.T, env map[string]string, args ...string) *started {
	t.Helper()
	if _, ok := env["ADDR"]; !ok {
		env["ADDR"] = "127.0.0.1:0"
	}
	if _, ok := env["DATA_DIR"]; !ok {
		env["DATA_DIR"] = t.TempDir()
	}
	s0 := env["DATA_DIR"]
	if _, ok := env["METRICS_ADDR"]; !ok {
		env["METRICS_ADDR"] = "127.0.0.1:0" // not the demo default port: tests run side by side
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &started{done: make(chan error, 1), stop: cancel, dataDir: s0}
	go func() {
		err := run(ctx, args, func(k string) string { return env[k] }, pw, io.Discard)
		pw.Close()
		s.done <- err
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, pr)
	}()
	deadline := time.After(60 * time.Second)
	for s.base == "" || !strings.Contains(strings.Join(s.lines, "\n"), "Upstream:") || (env["UPSTREAM_URL"] == "" && !strings.Contains(strings.Join(s.lines, "\n"), "read-only")) {
		select {
		case l, ok := <-lines:
			if !ok {
				cancel()
				t.Fatalf("run exited before serving: %v; output:\n%s", <-s.done, strings.Join(s.lines, "\n"))
			}
			s.lines = append(s.lines, l)
			if m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(l); m != nil {
				s.base = m[1]
			}
		case <-deadline:
			cancel()
			t.Fatalf("run did not start within 60s; output:\n%s", strings.Join(s.lines, "\n"))
		}
	}
	go func() {
		for range lines {
		}
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			t.Error("run did not return after its context was cancelled")
		}
	})
	return s
}

// header returns the value after prefix on the first printed line holding it.
func (s *started) printed(t *testing.T, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	for _, l := range s.lines {
		if m := rx.FindStringSubmatch(l); m != nil {
			return m
		}
	}
	t.Fatalf("output has no line matching %s:\n%s", re, strings.Join(s.lines, "\n"))
	return nil
}

// graphQL is a GraphQL client of the facade at base.
func graphQL(base string) *gqlclient.Client { return &gqlclient.Client{URL: base + "/graphql"} }

// postGraphQL posts query to the facade at base with hdr, failing t unless a
// JSON answer arrives.
func postGraphQL(t *testing.T, base string, hdr http.Header, query string) *gqlclient.Response {
	t.Helper()
	r, err := graphQL(base).Post(t.Context(), gqlclient.Request{Query: query}, hdr)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// getGraphQL sends query as a GET to the facade at base with hdr.
func getGraphQL(t *testing.T, base string, hdr http.Header, query string) *gqlclient.Response {
	t.Helper()
	r, err := graphQL(base).Get(t.Context(), gqlclient.Request{Query: query}, hdr)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// hasData reports whether r carries data that is not null.
func hasData(r *gqlclient.Response) bool { return len(r.Data) > 0 && string(r.Data) != "null" }

// health GETs a status route (/healthz, /readyz): its HTTP status and the
// "status" of its JSON body.
func health(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body struct{ Status string }
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("GET %s: not JSON (%d): %.300s", u, resp.StatusCode, raw)
	}
	return resp.StatusCode, body.Status
}

func TestRunEmbeddedDemo(t *testing.T) {
	s := startRun(t, map[string]string{})
	m := s.printed(t, `Authorization: Bearer (\S+)\s+\(with service-network-id: (\S+)\)`)
	token, network := m[1], m[2]
	basic := s.printed(t, `Authorization: (Basic \S+)`)[1]
	auth := gqlclient.Credentials("Bearer "+token, network)

	t.Run("the banner prints every credential of the README's table, and the data directory", func(t *testing.T) {
		raw, err := os.ReadFile("README.md")
		if err != nil {
			t.Fatal(err)
		}
		// The table that follows "the credentials (also printed by `go run .`)".
		_, after, _ := strings.Cut(string(raw), "the credentials (also printed by `go run .`)")
		table := regexp.MustCompile(`^[^|]*?\n\n((?:\|.*\n)+)`).FindStringSubmatch(after)
		if table == nil {
			t.Fatal("README has no credentials table after \"the credentials (also printed by `go run .`)\"")
		}
		creds := regexp.MustCompile("\\| `((?:Bearer|Basic) [^`]+)`").FindAllStringSubmatch(table[1], -1)
		if len(creds) != 3 {
			t.Fatalf("README's credentials table has %d Authorization values, want 3:\n%s", len(creds), table[1])
		}
		for _, c := range creds {
			s.printed(t, "Authorization: "+regexp.QuoteMeta(c[1])+`(\s|$)`)
		}
		s.printed(t, "read-only; with service-network-id: "+network)
		s.printed(t, "Demo data: +"+regexp.QuoteMeta(filepath.Clean(s.dataDir))+" ")
		s.printed(t, "Demo activity: +every 5s .* in location ")
	})

	t.Run("health and readiness", func(t *testing.T) {
		if code, status := health(t, s.base+"/healthz"); code != 200 || status != "ok" {
			t.Fatalf("/healthz = %d %v", code, status)
		}
		if code, status := health(t, s.base+"/readyz"); code != 200 || status != "ready" {
			t.Fatalf("/readyz = %d %v", code, status)
		}
	})

	t.Run("playground is prefilled with the demo headers and a query", func(t *testing.T) {
		resp, err := http.Get(s.base + "/")
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET / = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		for _, want := range []string{token, network, "query Dashboard", "service-network-id"} {
			if !strings.Contains(string(page), want) {
				t.Errorf("playground page lacks %q", want)
			}
		}
	})

	t.Run("the playground's query and variables answer with data over POST", func(t *testing.T) {
		page, err := http.Get(s.base + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(page.Body)
		page.Body.Close()
		m := regexp.MustCompile(`(?s)<script id="playground-config" type="application/json">(.*?)</script>`).FindSubmatch(b)
		if m == nil {
			t.Fatal("playground page has no config")
		}
		var pc struct{ Query, Variables string }
		if err := json.Unmarshal(m[1], &pc); err != nil {
			t.Fatal(err)
		}
		var vars map[string]any
		if err := json.Unmarshal([]byte(pc.Variables), &vars); err != nil || vars["location"] == nil {
			t.Fatalf("playground variables %q: %v", pc.Variables, err)
		}
		resp, err := graphQL(s.base).Post(t.Context(), gqlclient.Request{Query: pc.Query, Variables: vars}, auth)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != 200 || resp.Errors != nil {
			t.Fatalf("dashboard: %d %v", resp.Status, resp.Errors)
		}
		var d struct {
			Location struct {
				Products     []any
				Transactions struct{ Nodes []any }
			}
		}
		if err := json.Unmarshal(resp.Data, &d); err != nil || len(d.Location.Products) == 0 || len(d.Location.Transactions.Nodes) == 0 {
			t.Fatalf("dashboard has no products or transactions: %v %s", err, resp.Data)
		}
	})

	t.Run("Basic credentials printed work too", func(t *testing.T) {
		r := postGraphQL(t, s.base, gqlclient.Credentials(basic, network),
			`{ location(id: "00000000-0000-4000-8000-000000000000") { id } }`)
		if r.Errors != nil {
			t.Fatalf("errors: %v", r.Errors)
		}
	})

	t.Run("GET serves queries and refuses mutations", func(t *testing.T) {
		// A GET must force a CORS preflight (CSRF prevention).
		auth := auth.Clone()
		auth.Set("GraphQL-Require-Preflight", "1")
		r := getGraphQL(t, s.base, auth, `{ __typename }`)
		var d struct {
			Typename string `json:"__typename"`
		}
		if r.Status != 200 || json.Unmarshal(r.Data, &d) != nil || d.Typename != "Query" {
			t.Fatalf("GET query = %d %s", r.Status, r.Raw)
		}
		r = getGraphQL(t, s.base, auth, `mutation { updateVisit(id: "00000000-0000-4000-8000-000000000000", input: {date: "2026-01-01T00:00:00Z"}) { visit { id } } }`)
		if r.Errors == nil || hasData(r) || strings.Contains(string(r.Raw), "CSRF") {
			t.Fatalf("GET mutation was not refused for being a mutation: %s", r.Raw)
		}
	})

	t.Run("no credentials: UNAUTHENTICATED", func(t *testing.T) {
		r := postGraphQL(t, s.base, nil, `{ resource(id: "00000000-0000-4000-8000-000000000000") { id } }`)
		if len(r.Errors) != 1 || r.Errors[0].Code() != "UNAUTHENTICATED" {
			t.Fatalf("errors = %v", r.Errors)
		}
	})

	t.Run("upstream trace is on with the embedded demo", func(t *testing.T) {
		hdr := auth.Clone()
		hdr.Set("X-Upstream-Trace", "1")
		r := postGraphQL(t, s.base, hdr, `{ location(id: "00000000-0000-4000-8000-000000000000") { products { id } } }`)
		var up *struct{ Count float64 }
		if err := json.Unmarshal(r.Extensions["upstream"], &up); err != nil || up == nil || up.Count != 1 {
			t.Fatalf("extensions = %s", mustJSON(r.Extensions))
		}
		if strings.Contains(mustJSON(r.Extensions), token) {
			t.Fatal("the call report holds the token")
		}
	})

	t.Run("CORS: no origin allowed unless configured", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodOptions, s.base+"/graphql", nil)
		req.Header.Set("Origin", "https://evil.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Fatalf("Access-Control-Allow-Origin = %q", got)
		}
	})

	t.Run("graceful shutdown", func(t *testing.T) {
		s.stop()
		select {
		case err := <-s.done:
			if err != nil {
				t.Fatalf("run returned %v", err)
			}
			s.done <- nil // for the cleanup
		case <-time.After(20 * time.Second):
			t.Fatal("run did not return after cancellation")
		}
		if _, err := http.Get(s.base + "/healthz"); err == nil {
			t.Fatal("server still answers after shutdown")
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestRunWithUpstreamURLAndCORS(t *testing.T) {
	rs, err := restserver.New(context.Background(), restserver.Config{DBPath: ":memory:", DemoScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	man, err := rs.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(rs.Handler())
	s := startRun(t, map[string]string{
		"UPSTREAM_URL": up.URL,
		"CORS_ORIGINS": "https://app.example, https://admin.example",
	}, "-playground=false")

	if strings.Contains(strings.Join(s.lines, "\n"), "Bearer") {
		t.Error("demo credentials printed with an external upstream")
	}
	resp, err := http.Get(s.base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET / with -playground=false = %d, want 404", resp.StatusCode)
	}

	// Allowed origin: preflight answered with that origin and credentials.
	req, _ := http.NewRequest(http.MethodOptions, s.base+"/graphql", nil)
	req.Header.Set("Origin", "https://admin.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, service-network-id")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "https://admin.example" {
		t.Errorf("allowed origin: Access-Control-Allow-Origin = %q", got)
	}
	if resp.Header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Error("allowed origin: credentials not allowed")
	}

	// Trace is off by default with an external upstream.
	creds := gqlclient.Credentials(man.BasicAuth, man.NetworkID)
	traced := creds.Clone()
	traced.Set("X-Upstream-Trace", "1")
	r := postGraphQL(t, s.base, traced, `{ location(id: "`+man.IDs["location"][0]+`") { products { id } } }`)
	if r.Errors != nil {
		t.Fatalf("errors: %v", r.Errors)
	}
	if r.Extensions != nil {
		t.Errorf("call report returned with an external upstream: %s", mustJSON(r.Extensions))
	}

	// CSRF prevention: a bare GET and a text/plain POST are refused with a
	// GraphQL-shaped 400 and no upstream call; the request id is echoed.
	rs.Hooks().Reset()
	q := `{ location(id: "` + man.IDs["location"][0] + `") { products { id } } }`
	r = getGraphQL(t, s.base, creds, q)
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Raw), "CSRF_PREVENTED") {
		t.Errorf("bare GET = %d %s", r.Status, r.Raw)
	}
	withID := creds.Clone()
	withID.Set("X-Request-Id", "csrf-check-1")
	r, err = graphQL(s.base).PostBody(t.Context(), "text/plain", []byte(mustJSON(map[string]string{"query": q})), withID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Raw), `"code":"CSRF_PREVENTED"`) {
		t.Errorf("text/plain POST = %d %s", r.Status, r.Raw)
	}
	if got := r.Header.Get("X-Request-Id"); got != "csrf-check-1" {
		t.Errorf("X-Request-Id = %q", got)
	}
	if n := rs.Hooks().Total(); n != 0 {
		t.Errorf("refused requests made %d upstream calls", n)
	}

	// Ready whether or not the upstream answers: with it gone a query gets
	// a coded error, not a replica taken out of rotation.
	if code, _ := health(t, s.base+"/readyz"); code != 200 {
		t.Fatalf("/readyz = %d with the upstream up", code)
	}
	up.Close()
	if code, status := health(t, s.base+"/readyz"); code != http.StatusOK || status != "ready" {
		t.Fatalf("/readyz = %d %v with the upstream down, want 200 ready", code, status)
	}
	r = postGraphQL(t, s.base, creds, `{ resource(id: "`+man.IDs["resource"][0]+`") { id } }`)
	if r.Status != http.StatusOK || len(r.Errors) != 1 || r.Errors[0].Code() != "UPSTREAM_UNAVAILABLE" {
		t.Fatalf("a query with the upstream down: %d %s, want UPSTREAM_UNAVAILABLE", r.Status, r.Raw)
	}
}

func TestRunRejectsBadConfiguration(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"wildcard CORS", map[string]string{"CORS_ORIGINS": "*"}, nil, "'*' is refused"},
		{"CORS origin without a scheme", map[string]string{"CORS_ORIGINS": "localhost:3000"}, nil, `"localhost:3000" is not an origin: want scheme://host[:port]`},
		{"CORS origin with a trailing slash", nil, []string{"-cors-origins=https://app.example/"}, `"https://app.example/" is not an origin`},
		{"CORS header that is no name", map[string]string{"CORS_HEADERS": "x-a b"}, nil, `-cors-headers: "x-a b"`},
		{"bad duration", map[string]string{"REQUEST_TIMEOUT": "soon"}, nil, "REQUEST_TIMEOUT"},
		{"bad integer", map[string]string{"DEMO_SCALE": "many"}, nil, "DEMO_SCALE"},
		{"bad boolean", map[string]string{"PLAYGROUND": "maybe"}, nil, "PLAYGROUND"},
		{"bad trace mode", nil, []string{"-upstream-trace=sometimes"}, "upstream-trace"},
		{"stray argument", nil, []string{"serve"}, "unexpected arguments"},
		{"bad log level", map[string]string{"LOG_LEVEL": "loud"}, nil, "log-level"},
		{"bad limit", map[string]string{"MAX_DEPTH": "deep"}, nil, "MAX_DEPTH"},
		{"negative limit", nil, []string{"-max-cost=-5"}, "max-cost"},
		{"zero body limit", map[string]string{"MAX_BODY_BYTES": "0"}, nil, "max-body-bytes"},
		{"zero connection_init wait", nil, []string{"-live-init-timeout=0s"}, "-live-init-timeout: 0s must be positive"},
		{"bad production switch", map[string]string{"PRODUCTION": "sure"}, nil, "PRODUCTION"},
		{"missing trusted documents", nil, []string{"-trusted-documents=/nonexistent/docs.json"}, "trusted-documents"},
		{"bearer without network id", map[string]string{"UPSTREAM_AUTHORIZATION": "Bearer tok-1"}, nil, "UPSTREAM_NETWORK_ID"},
		{"network id not a uuid", map[string]string{"UPSTREAM_AUTHORIZATION": "Basic YTpi", "UPSTREAM_NETWORK_ID": "net-1"}, nil, "must be a uuid"},
		{"short router secret", map[string]string{"ROUTER_SECRET": "too-short"}, nil, "ROUTER_SECRET: want at least 32 characters"},
		{"router secret without its header", map[string]string{"ROUTER_SECRET": strings.Repeat("s", 32)}, []string{"-router-secret-header="}, "-router-secret-header"},
		{"all-zero secret", map[string]string{"FACADE_SECRET": strings.Repeat("00", 32)}, nil, "FACADE_SECRET: 1 distinct byte values in its 32 bytes, want at least 16"},
		{"placeholder secret", map[string]string{"FACADE_SECRET": strings.Repeat("0123456789abcdef", 4)}, nil, "FACADE_SECRET: 8 distinct byte values"},
		{"demo service on every interface", map[string]string{"DEMO_ADDR": "0.0.0.0:8083"}, nil, "-demo-addr: \"0.0.0.0:8083\" is not a loopback address"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			if env == nil {
				env = map[string]string{}
			}
			err := run(context.Background(), tc.args, func(k string) string { return env[k] }, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run = %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

// TestRunProduction: -production turns introspection, suggestions, the
// playground and the call report off even when their own switches say on;
// the operation limits and the trusted documents flag are wired.
func TestRunProduction(t *testing.T) {
	rs, err := restserver.New(context.Background(), restserver.Config{DBPath: ":memory:", DemoScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	man, err := rs.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(rs.Handler())
	defer up.Close()
	s := startRun(t, map[string]string{"UPSTREAM_URL": up.URL, "PRODUCTION": "true", "MAX_DEPTH": "3"},
		"-playground=true", "-introspection=true", "-upstream-trace=on")
	auth := gqlclient.Credentials(man.BasicAuth, man.NetworkID)
	auth.Set("X-Upstream-Trace", "1")

	if resp, err := http.Get(s.base + "/"); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusNotFound {
		t.Errorf("playground served in production: %d", resp.StatusCode)
	}
	r := postGraphQL(t, s.base, auth, `{ __schema { types { name } } }`)
	if r.Errors == nil || hasData(r) && strings.Contains(string(r.Data), "types") {
		t.Errorf("introspection answered in production: %s", r.Raw)
	}
	r = postGraphQL(t, s.base, auth, `{ resourc(id: "x") { id } }`)
	if r.Errors == nil || strings.Contains(string(r.Raw), "Did you mean") {
		t.Errorf("suggestions in production: %s", r.Raw)
	}
	r = postGraphQL(t, s.base, auth, `{ location(id: "`+man.IDs["location"][0]+`") { products { id } } }`)
	if r.Errors != nil || r.Extensions != nil {
		t.Errorf("production answer: errors %v, extensions %s", r.Errors, mustJSON(r.Extensions))
	}
	r = postGraphQL(t, s.base, auth, `{ resource(id: "`+man.IDs["resource"][0]+`") { parent { parent { id } } } }`)
	if !strings.Contains(mustJSON(r.Errors), `"limit":"depth"`) {
		t.Errorf("MAX_DEPTH=3 not applied: %v", r.Errors)
	}
}

// TestRunPrintsMetrics: the banner names the metrics endpoint (the address
// actually listened on), which counts the requests served.
func TestRunPrintsMetrics(t *testing.T) {
	s := startRun(t, map[string]string{})
	url := s.printed(t, `Metrics:\s+(http://\S+/metrics)$`)[1]
	postGraphQL(t, s.base, nil, "{ __typename }")
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	want := `facade_graphql_requests_total{code="ok",operation_name="anonymous",operation_type="query"} 1`
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(raw), want) {
		t.Fatalf("GET %s: %d, want a line %s:\n%.2000s", url, resp.StatusCode, want, raw)
	}
}

// TestRunTestEndpoints: the demo's banner prints where the embedded REST
// service's test endpoints are, on the address -demo-addr pins, and a change
// made there through them succeeds; with -production, or
// -demo-test-endpoints=false, the banner says they are off and they answer
// 404; with -upstream there is no embedded service, so no line, and the
// facade serves no /_test route of its own.
func TestRunTestEndpoints(t *testing.T) {
	post := func(t *testing.T, u string) int {
		t.Helper()
		resp, err := http.Post(u, "application/json", strings.NewReader(`{"status":"completed"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	t.Run("demo, pinned", func(t *testing.T) {
		addr := freeAddr(t)
		s := startRun(t, map[string]string{"DEMO_ADDR": addr, "DEMO_ACTIVITY": "0"})
		s.printed(t, `Upstream:\s+`+regexp.QuoteMeta("http://"+addr)+`$`)
		m := s.printed(t, `Test endpoints:\s+(http://\S+)/_test/\{table\}/\{id\}/set and \.\.\./copy, (http://\S+)/_stats `)
		if m[1] != "http://"+addr || m[2] != m[1] {
			t.Fatalf("test endpoints printed at %s and %s, want http://%s", m[1], m[2], addr)
		}
		// An order of the demo activity's location (docs/live-data.md's example).
		if code := post(t, m[1]+"/_test/orders/d192b8fc-fb4c-402a-a42e-83b7562dcdf3/set"); code != http.StatusOK {
			t.Errorf("POST /_test/orders/{id}/set: %d", code)
		}
	})
	for _, c := range []struct {
		name string
		env  map[string]string
	}{
		{"production", map[string]string{"PRODUCTION": "true"}},
		{"turned off", map[string]string{"DEMO_TEST_ENDPOINTS": "false"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := freeAddr(t)
			c.env["DEMO_ADDR"], c.env["DEMO_ACTIVITY"] = addr, "0"
			s := startRun(t, c.env)
			s.printed(t, `Test endpoints:\s+off$`)
			if code := post(t, "http://"+addr+"/_test/orders/d192b8fc-fb4c-402a-a42e-83b7562dcdf3/set"); code != http.StatusNotFound {
				t.Errorf("POST /_test/orders/{id}/set: %d, want 404", code)
			}
			if code, _ := health(t, "http://"+addr+"/healthz"); code != http.StatusOK {
				t.Errorf("the embedded REST service itself: /healthz %d", code)
			}
		})
	}
	t.Run("upstream", func(t *testing.T) {
		rs, err := restserver.New(context.Background(), restserver.Config{DBPath: ":memory:", DemoScale: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		up := httptest.NewServer(rs.Handler())
		defer up.Close()
		s := startRun(t, map[string]string{"UPSTREAM_URL": up.URL, "DEMO_TEST_ENDPOINTS": "true"})
		for _, l := range s.lines {
			if strings.Contains(l, "Test endpoints") {
				t.Errorf("with -upstream the banner says %q", l)
			}
		}
		if code := post(t, s.base+"/_test/orders/d192b8fc-fb4c-402a-a42e-83b7562dcdf3/set"); code != http.StatusNotFound {
			t.Errorf("the facade's POST /_test/...: %d, want 404", code)
		}
	})
}

// TestRunDemoActivityWithoutTestEndpoints: the demo activity goes on with
// the test endpoints off: new orders appear, through the facade, in the
// location the banner names.
func TestRunDemoActivityWithoutTestEndpoints(t *testing.T) {
	s := startRun(t, map[string]string{"DEMO_TEST_ENDPOINTS": "false", "DEMO_ACTIVITY": "20ms"})
	s.printed(t, `Test endpoints:\s+off$`)
	loc := s.printed(t, `Demo activity: +every 20ms .* in location (\S+), which no documented example reads`)[1]
	m := s.printed(t, `Authorization: Bearer (\S+)\s+\(with service-network-id: (\S+)\)`)
	auth := gqlclient.Credentials("Bearer "+m[1], m[2])
	newest := func() string {
		r := postGraphQL(t, s.base, auth, `{ location(id: "`+loc+`") { orders(first: 1) { nodes { number status } } } }`)
		if r.Errors != nil {
			t.Fatalf("orders: %v", r.Errors)
		}
		return string(r.Data)
	}
	first := newest()
	deadline := time.Now().Add(60 * time.Second) // a hang guard
	for newest() == first {
		if time.Now().After(deadline) {
			t.Fatalf("no new order in location %s: %s", loc, first)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := newest(); !strings.Contains(got, `"status":"NEW"`) {
		t.Errorf("the newest order of the activity's location: %s", got)
	}
}
