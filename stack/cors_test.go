package stack_test

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/workspacenet/facade/stack"
)

// TestCORSOriginsAndHeadersAreChecked: a value that can never match what a
// browser sends as Origin, or that is not a header name, stops the start
// with a message naming the value and the expected form.
func TestCORSOriginsAndHeadersAreChecked(t *testing.T) {
	parse := func(env map[string]string, args ...string) (stack.Config, error) {
		return stack.ParseFlags(append([]string{"-data-dir="}, args...), func(k string) string { return env[k] }, io.Discard)
	}
	for _, bad := range []struct{ value, want string }{
		{"localhost:3000", `"localhost:3000" is not an origin: want scheme://host[:port] with no path`},
		{"https://app.example.com/", `"https://app.example.com/" is not an origin: want scheme://host[:port] with no path, e.g. https://app.example.com or http://localhost:3000 (remove the path "/")`},
		{"https://app.example.com/graphql", `(remove the path "/graphql")`},
		{"app.example.com", `"app.example.com" is not an origin`},
		{"https://", `"https://" is not an origin`},
		{"https://app.example.com:99999", `(port "99999")`},
		{"https://app.example.com?x=1", `"https://app.example.com?x=1" is not an origin`},
		{"https://user@app.example.com", `"https://user@app.example.com" is not an origin`},
		{"https://*.example.com", `wildcards are refused`},
		{"null", `"null" is not an origin`},
		{"*", `'*' is refused`},
	} {
		_, err := parse(map[string]string{"CORS_ORIGINS": "https://ok.example, " + bad.value})
		if err == nil || !strings.HasPrefix(err.Error(), "-cors-origins: ") || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("CORS_ORIGINS %q: %v, want an error containing %q", bad.value, err, bad.want)
		}
		// Validate, for configurations built in Go, says the same.
		c := stack.DefaultConfig()
		c.CORSOrigins = []string{bad.value}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Validate(%q) = %v", bad.value, err)
		}
	}
	for _, bad := range []string{"*", "X Custom", "x-custom:", "x-é"} {
		if _, err := parse(nil, "-cors-headers", "traceparent,"+bad); err == nil || !strings.Contains(err.Error(), "-cors-headers: "+strconv.Quote(bad)) {
			t.Errorf("-cors-headers %q: %v", bad, err)
		}
	}
	c, err := parse(map[string]string{"CORS_ORIGINS": "https://app.example.com, http://localhost:3000, http://[::1]:8081, capacitor://localhost", "CORS_HEADERS": "X-Custom, x-tenant"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.CORSOrigins, []string{"https://app.example.com", "http://localhost:3000", "http://[::1]:8081", "capacitor://localhost"}) || !slices.Equal(c.CORSHeaders, []string{"X-Custom", "x-tenant"}) {
		t.Errorf("origins %q, headers %q", c.CORSOrigins, c.CORSHeaders)
	}
}

// TestCORSPreflightAllowsTheDefaultAndConfiguredHeaders: from an allowed
// origin, a preflight naming any default header (trace context, Apollo's
// client awareness and preflight headers, ...) or a configured one is
// answered with the origin and credentials; an unknown header or origin is
// not; and the actual request carries the CORS headers.
func TestCORSPreflightAllowsTheDefaultAndConfiguredHeaders(t *testing.T) {
	const origin = "http://localhost:3000"
	_, base := start(t, io.Discard, nil, "-cors-origins", origin+",https://app.example.com", "-cors-headers", "X-Tenant")
	preflight := func(t *testing.T, origin, headers string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodOptions, base+"/graphql", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", http.MethodPost)
		if headers != "" {
			req.Header.Set("Access-Control-Request-Headers", headers)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	allowed := func(t *testing.T, resp *http.Response, origin, headers string) {
		t.Helper()
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != origin {
			t.Errorf("headers %q: Access-Control-Allow-Origin %q, want %q", headers, got, origin)
		}
		if resp.Header.Get("Access-Control-Allow-Credentials") != "true" {
			t.Errorf("headers %q: credentials not allowed", headers)
		}
		if got := resp.Header.Get("Access-Control-Allow-Headers"); got != headers {
			t.Errorf("Access-Control-Allow-Headers %q, want %q", got, headers)
		}
	}
	wanted := []string{"traceparent", "tracestate", "baggage", "sentry-trace", "apollographql-client-name", "apollographql-client-version",
		"apollo-require-preflight", "x-apollo-operation-name", "graphql-require-preflight", "authorization", "service-network-id", "content-type", "x-upstream-trace"}
	for _, h := range stack.DefaultCORSHeaders {
		if !slices.Contains(wanted, strings.ToLower(h)) {
			wanted = append(wanted, strings.ToLower(h))
		}
	}
	for _, h := range append(wanted, "x-tenant") {
		allowed(t, preflight(t, origin, h), origin, h)
	}
	// What Apollo Client with trace propagation and client awareness sends
	// at once (browsers list the names sorted, lower case).
	all := "apollo-require-preflight,apollographql-client-name,apollographql-client-version,authorization,baggage,content-type,sentry-trace,service-network-id,traceparent,tracestate"
	allowed(t, preflight(t, "https://app.example.com", all), "https://app.example.com", all)

	for name, resp := range map[string]*http.Response{
		"an unknown header":                preflight(t, origin, "traceparent,x-not-allowed"),
		"another origin":                   preflight(t, "https://evil.example", "content-type"),
		"the origin with a trailing slash": preflight(t, origin+"/", "content-type"),
		"the origin on another port":       preflight(t, "http://localhost:3001", "content-type"),
		"the origin with another scheme":   preflight(t, "https://localhost:3000", "content-type"),
	} {
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("%s: Access-Control-Allow-Origin %q", name, got)
		}
	}

	// The actual request: the origin allowed, the request id readable.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/graphql", strings.NewReader(`{"query": "{ __typename }"}`))
	req.Header.Set("Origin", origin)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != origin || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "X-Request-Id") {
		t.Errorf("POST from %s: %d, CORS headers %v", origin, resp.StatusCode, resp.Header)
	}
}
