package stack_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// TestSecretMustLookRandom: a FACADE_SECRET of one repeated byte, or of
// fewer than 16 distinct byte values, stops the start with a message
// saying why and how to make one; 16 distinct values, and random secrets,
// pass. Validate says the same for a Config built in Go.
func TestSecretMustLookRandom(t *testing.T) {
	parse := func(secret []byte) error {
		_, err := stack.ParseFlags([]string{"-data-dir="}, func(k string) string {
			if k == "FACADE_SECRET" {
				return hex.EncodeToString(secret)
			}
			return ""
		}, io.Discard)
		return err
	}
	pattern := func(distinct, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i % distinct * 7)
		}
		return b
	}
	placeholder, _ := hex.DecodeString(strings.Repeat("0123456789abcdef", 4))
	for _, c := range []struct {
		name   string
		secret []byte
		want   string // "" = accepted
	}{
		{"all zero", make([]byte, 32), "FACADE_SECRET: 1 distinct byte values in its 32 bytes, want at least 16"},
		{"one byte repeated, 64 bytes", []byte(strings.Repeat("x", 64)), "1 distinct byte values in its 64 bytes"},
		{"a 0123456789abcdef placeholder", placeholder, "8 distinct byte values"},
		{"15 distinct values", pattern(15, 48), "15 distinct byte values"},
		{"16 distinct values", pattern(16, 32), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := parse(c.secret)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "openssl rand -hex 32") {
				t.Errorf("FACADE_SECRET %x: %v, want an error containing %q and how to make one", c.secret, err, c.want)
			}
			cfg := stack.DefaultConfig()
			cfg.Secret = c.secret
			if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate: %v", err)
			}
		})
	}
	for range 100 {
		secret := make([]byte, 32)
		_, _ = rand.Read(secret)
		if err := parse(secret); err != nil {
			t.Fatalf("a random secret %x is refused: %v", secret, err)
		}
	}
}

// TestDemoAddrIsLoopbackOnly: -demo-addr takes loopback addresses only (the
// embedded service serves the demo credentials and the test endpoints);
// anything else stops the start, and is not checked with -upstream (no
// embedded service).
func TestDemoAddrIsLoopbackOnly(t *testing.T) {
	parse := func(args ...string) error {
		_, err := stack.ParseFlags(append([]string{"-data-dir="}, args...), func(string) string { return "" }, io.Discard)
		return err
	}
	for _, ok := range []string{"127.0.0.1:0", "127.0.0.1:8083", "[::1]:8083", "localhost:8083", "127.0.0.2:9000"} {
		if err := parse("-demo-addr", ok); err != nil {
			t.Errorf("-demo-addr %s: %v", ok, err)
		}
	}
	for _, bad := range []struct{ addr, want string }{
		{"0.0.0.0:8083", "is not a loopback address"},
		{":8083", "is not a loopback address"},
		{"192.168.1.5:8083", "is not a loopback address"},
		{"example.com:8083", "is not a loopback address"},
		{"127.0.0.1", "is not host:port"},
		{"127.0.0.1:70000", `port "70000"`},
	} {
		if err := parse("-demo-addr", bad.addr); err == nil || !strings.HasPrefix(err.Error(), "-demo-addr: ") || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("-demo-addr %s: %v, want an error containing %q", bad.addr, err, bad.want)
		}
	}
	if err := parse("-upstream", "http://api.example", "-demo-addr", "0.0.0.0:8083"); err != nil {
		t.Errorf("-demo-addr is checked with -upstream: %v", err)
	}
}

// freePort returns a loopback address nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// TestDemoTestEndpointsNeverInProduction: the embedded REST service serves
// its unauthenticated test endpoints (a record copied by POST
// /_test/{table}/{id}/copy, the counters at /_stats) by default, on the
// address -demo-addr pins; with -production, or -demo-test-endpoints=false,
// they answer 404 and change nothing, while the REST API itself still
// answers the facade. (With -upstream there is no embedded service:
// TestRunTestEndpoints in the root package.)
func TestDemoTestEndpointsNeverInProduction(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*stack.Config)
		on   bool
	}{
		{"demo", func(*stack.Config) {}, true},
		{"production", func(c *stack.Config) { c.Production = true }, false},
		{"-demo-test-endpoints=false", func(c *stack.Config) { c.DemoTestEndpoints = false }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := stack.DefaultConfig()
			cfg.DataDir, cfg.MetricsAddr = "", ""
			cfg.DemoAddr = freePort(t)
			c.edit(&cfg)
			st, base := testenv.Serve(t, cfg, slog.New(slog.DiscardHandler))
			if st.UpstreamURL != "http://"+cfg.DemoAddr || st.Config.DemoTestEndpoints != c.on {
				t.Fatalf("embedded service at %s (test endpoints %t), want http://%s (%t)", st.UpstreamURL, st.Config.DemoTestEndpoints, cfg.DemoAddr, c.on)
			}
			m := st.Embedded.Manifest
			order := m.IDs["order"][0]
			count := func() int {
				n, err := st.Embedded.Server.Manifest()
				if err != nil {
					t.Fatal(err)
				}
				return len(n.IDs["order"])
			}
			orders := count()
			want := map[bool][2]int{true: {http.StatusCreated, http.StatusOK}, false: {http.StatusNotFound, http.StatusNotFound}}[c.on]
			resp, err := http.Post(st.UpstreamURL+"/_test/orders/"+order+"/copy", "application/json", strings.NewReader(`{"status":"new"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want[0] {
				t.Errorf("POST /_test/orders/{id}/copy: %d, want %d", resp.StatusCode, want[0])
			}
			if got, want := count(), orders+map[bool]int{true: 1}[c.on]; got != want {
				t.Errorf("%d orders after the copy, want %d", got, want)
			}
			resp, err = http.Get(st.UpstreamURL + "/_stats")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want[1] {
				t.Errorf("GET /_stats: %d, want %d", resp.StatusCode, want[1])
			}
			// The facade and the REST API behind it answer either way.
			h := http.Header{"Authorization": {"Bearer " + m.BearerToken}, "service-network-id": {m.NetworkID}, "Content-Type": {"application/json"}}
			req, _ := http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(fmt.Sprintf(`{"query":"{ resource(id: \"%s\") { id } }"}`, m.IDs["resource"][0])))
			req.Header = h
			resp, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), m.IDs["resource"][0]) {
				t.Errorf("a query: %d %s", resp.StatusCode, body)
			}
		})
	}
}
