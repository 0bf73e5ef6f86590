package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/restserver"
)

// started is a facade started by run in a test.
type started struct {
	base  string             // http://127.0.0.1:port
	lines []string           // what run printed before serving
	done  chan error         // run's result
	stop  context.CancelFunc // cancels run's context (graceful shutdown)
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
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &started{done: make(chan error, 1), stop: cancel}
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
	for s.base == "" || !strings.Contains(strings.Join(s.lines, "\n"), "Upstream:") || (env["UPSTREAM_URL"] == "" && !strings.Contains(strings.Join(s.lines, "\n"), "Bearer")) {
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

// doJSON sends a request with hdr and decodes the JSON object it answers.
func doJSON(t *testing.T, method, u string, hdr map[string]string, body io.Reader) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, u, body)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: not JSON (%d): %.300s", method, u, resp.StatusCode, raw)
	}
	return resp.StatusCode, m
}

func getJSON(t *testing.T, u string, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	return doJSON(t, http.MethodGet, u, hdr, nil)
}

func postGraphQL(t *testing.T, base string, hdr map[string]string, query string) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	h := map[string]string{"Content-Type": "application/json"}
	for k, v := range hdr {
		h[k] = v
	}
	return doJSON(t, http.MethodPost, base+"/graphql", h, bytes.NewReader(body))
}

func TestRunEmbeddedDemo(t *testing.T) {
	s := startRun(t, map[string]string{})
	m := s.printed(t, `Authorization: Bearer (\S+)\s+\(with service-network-id: (\S+)\)`)
	token, network := m[1], m[2]
	basic := s.printed(t, `Authorization: (Basic \S+)`)[1]
	auth := map[string]string{"Authorization": "Bearer " + token, "service-network-id": network}
	auth0 := auth

	t.Run("health and readiness", func(t *testing.T) {
		if code, body := getJSON(t, s.base+"/healthz", nil); code != 200 || body["status"] != "ok" {
			t.Fatalf("/healthz = %d %v", code, body)
		}
		if code, body := getJSON(t, s.base+"/readyz", nil); code != 200 || body["status"] != "ready" {
			t.Fatalf("/readyz = %d %v", code, body)
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
		body, _ := json.Marshal(map[string]any{"query": pc.Query, "variables": vars})
		code, resp := doJSON(t, http.MethodPost, s.base+"/graphql", map[string]string{"Content-Type": "application/json",
			"Authorization": auth["Authorization"], "service-network-id": auth["service-network-id"]}, bytes.NewReader(body))
		if code != 200 || resp["errors"] != nil {
			t.Fatalf("dashboard: %d %v", code, resp["errors"])
		}
		loc2 := resp["data"].(map[string]any)["location"].(map[string]any)
		if len(loc2["products"].([]any)) == 0 || len(loc2["transactions"].(map[string]any)["nodes"].([]any)) == 0 {
			t.Fatalf("dashboard has no products or transactions: %v", loc2)
		}
	})

	t.Run("Basic credentials printed work too", func(t *testing.T) {
		_, body := postGraphQL(t, s.base, map[string]string{"Authorization": basic, "service-network-id": network},
			`{ location(id: "00000000-0000-4000-8000-000000000000") { id } }`)
		if body["errors"] != nil {
			t.Fatalf("errors: %v", body["errors"])
		}
	})

	t.Run("GET serves queries and refuses mutations", func(t *testing.T) {
		// A GET must force a CORS preflight (CSRF prevention).
		auth := map[string]string{"GraphQL-Require-Preflight": "1"}
		for k, v := range auth0 {
			auth[k] = v
		}
		q := url.QueryEscape(`{ __typename }`)
		code, body := getJSON(t, s.base+"/graphql?query="+q, auth)
		if code != 200 || body["data"].(map[string]any)["__typename"] != "Query" {
			t.Fatalf("GET query = %d %v", code, body)
		}
		mq := url.QueryEscape(`mutation { updateVisit(id: "00000000-0000-4000-8000-000000000000", input: {date: "2026-01-01T00:00:00Z"}) { visit { id } } }`)
		_, body = getJSON(t, s.base+"/graphql?query="+mq, auth)
		if body["errors"] == nil || body["data"] != nil || strings.Contains(mustJSON(body), "CSRF") {
			t.Fatalf("GET mutation was not refused for being a mutation: %v", body)
		}
	})

	t.Run("no credentials: UNAUTHENTICATED", func(t *testing.T) {
		_, body := postGraphQL(t, s.base, nil, `{ resource(id: "00000000-0000-4000-8000-000000000000") { id } }`)
		errs, _ := body["errors"].([]any)
		if len(errs) != 1 || errs[0].(map[string]any)["extensions"].(map[string]any)["code"] != "UNAUTHENTICATED" {
			t.Fatalf("errors = %v", body["errors"])
		}
	})

	t.Run("upstream trace is on with the embedded demo", func(t *testing.T) {
		hdr := map[string]string{"X-Upstream-Trace": "1"}
		for k, v := range auth {
			hdr[k] = v
		}
		_, body := postGraphQL(t, s.base, hdr, `{ location(id: "00000000-0000-4000-8000-000000000000") { products { id } } }`)
		ext, _ := body["extensions"].(map[string]any)
		up, _ := ext["upstream"].(map[string]any)
		if up == nil || up["count"].(float64) != 1 {
			t.Fatalf("extensions = %v", body["extensions"])
		}
		if strings.Contains(mustJSON(body["extensions"]), token) {
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
	_, body := postGraphQL(t, s.base, map[string]string{
		"Authorization": man.BasicAuth, "service-network-id": man.NetworkID, "X-Upstream-Trace": "1",
	}, `{ location(id: "`+man.IDs["location"][0]+`") { products { id } } }`)
	if body["errors"] != nil {
		t.Fatalf("errors: %v", body["errors"])
	}
	if body["extensions"] != nil {
		t.Errorf("call report returned with an external upstream: %v", body["extensions"])
	}

	// CSRF prevention: a bare GET and a text/plain POST are refused with a
	// GraphQL-shaped 400 and no upstream call; the request id is echoed.
	rs.Hooks().Reset()
	q := `{ location(id: "` + man.IDs["location"][0] + `") { products { id } } }`
	creds := map[string]string{"Authorization": man.BasicAuth, "service-network-id": man.NetworkID}
	code, body := getJSON(t, s.base+"/graphql?query="+url.QueryEscape(q), creds)
	if code != http.StatusBadRequest || !strings.Contains(mustJSON(body), "CSRF_PREVENTED") {
		t.Errorf("bare GET = %d %v", code, body)
	}
	req, _ = http.NewRequest(http.MethodPost, s.base+"/graphql", strings.NewReader(mustJSON(map[string]string{"query": q})))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("X-Request-Id", "csrf-check-1")
	for k, v := range creds {
		req.Header.Set(k, v)
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(raw), `"code":"CSRF_PREVENTED"`) {
		t.Errorf("text/plain POST = %d %s", resp.StatusCode, raw)
	}
	if got := resp.Header.Get("X-Request-Id"); got != "csrf-check-1" {
		t.Errorf("X-Request-Id = %q", got)
	}
	if n := rs.Hooks().Total(); n != 0 {
		t.Errorf("refused requests made %d upstream calls", n)
	}

	// Ready while the upstream answers; not ready once it is gone.
	if code, _ := getJSON(t, s.base+"/readyz", nil); code != 200 {
		t.Fatalf("/readyz = %d with the upstream up", code)
	}
	up.Close()
	if code, body := getJSON(t, s.base+"/readyz", nil); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz = %d %v with the upstream down", code, body)
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
		{"bad duration", map[string]string{"REQUEST_TIMEOUT": "soon"}, nil, "REQUEST_TIMEOUT"},
		{"bad integer", map[string]string{"DEMO_SCALE": "many"}, nil, "DEMO_SCALE"},
		{"bad boolean", map[string]string{"PLAYGROUND": "maybe"}, nil, "PLAYGROUND"},
		{"bad trace mode", nil, []string{"-upstream-trace=sometimes"}, "upstream-trace"},
		{"stray argument", nil, []string{"serve"}, "unexpected arguments"},
		{"bad log level", map[string]string{"LOG_LEVEL": "loud"}, nil, "log-level"},
		{"bad limit", map[string]string{"MAX_DEPTH": "deep"}, nil, "MAX_DEPTH"},
		{"negative limit", nil, []string{"-max-cost=-5"}, "max-cost"},
		{"zero body limit", map[string]string{"MAX_BODY_BYTES": "0"}, nil, "max-body-bytes"},
		{"bad production switch", map[string]string{"PRODUCTION": "sure"}, nil, "PRODUCTION"},
		{"missing trusted documents", nil, []string{"-trusted-documents=/nonexistent/docs.json"}, "trusted-documents"},
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
	auth := map[string]string{"Authorization": man.BasicAuth, "service-network-id": man.NetworkID, "X-Upstream-Trace": "1"}

	if resp, err := http.Get(s.base + "/"); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusNotFound {
		t.Errorf("playground served in production: %d", resp.StatusCode)
	}
	_, body := postGraphQL(t, s.base, auth, `{ __schema { types { name } } }`)
	if body["errors"] == nil || body["data"] != nil && strings.Contains(mustJSON(body["data"]), "types") {
		t.Errorf("introspection answered in production: %v", body)
	}
	_, body = postGraphQL(t, s.base, auth, `{ resourc(id: "x") { id } }`)
	if body["errors"] == nil || strings.Contains(mustJSON(body), "Did you mean") {
		t.Errorf("suggestions in production: %v", body)
	}
	_, body = postGraphQL(t, s.base, auth, `{ location(id: "`+man.IDs["location"][0]+`") { products { id } } }`)
	if body["errors"] != nil || body["extensions"] != nil {
		t.Errorf("production answer: errors %v, extensions %v", body["errors"], body["extensions"])
	}
	_, body = postGraphQL(t, s.base, auth, `{ resource(id: "`+man.IDs["resource"][0]+`") { parent { parent { id } } } }`)
	if !strings.Contains(mustJSON(body["errors"]), `"limit":"depth"`) {
		t.Errorf("MAX_DEPTH=3 not applied: %v", body["errors"])
	}
}
