package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restserver"
)

// addrWriter collects output and reports the address of "listening on".
type addrWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	addr chan string
	sent bool
}

var listening = regexp.MustCompile(`listening on (http://\S+)`)

func (w *addrWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := listening.FindSubmatch(w.buf.Bytes()); m != nil && !w.sent {
		w.sent = true
		w.addr <- string(m[1])
	}
	return len(p), nil
}

func TestRunServesDemoData(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"RESTSERVER_DB": filepath.Join(dir, "sub", "rs.db"), "RESTSERVER_ADDR": "127.0.0.1:0", "RESTSERVER_LATENCY": "*=1ms",
		"RESTSERVER_TEST_ENDPOINTS": "true"}
	getenv := func(k string) string { return env[k] }

	var manifest bytes.Buffer
	if err := run(context.Background(), []string{"restserver", "-demo-manifest"}, getenv, &manifest, io.Discard); err != nil {
		t.Fatal(err)
	}
	var m restserver.DemoManifest
	if err := json.Unmarshal(manifest.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m.BearerToken != restserver.DemoBearerToken || len(m.IDs["resource"]) == 0 || len(m.OtherNetworks) != 1 {
		t.Fatalf("manifest = %s", manifest.Bytes()[:200])
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &addrWriter{addr: make(chan string, 1)}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"restserver", "-fault", "GET /events/v1/{id}=503"}, getenv, io.Discard, stderr)
	}()
	var base string
	select {
	case base = <-stderr.addr:
	case err := <-done:
		t.Fatalf("run: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("server did not start")
	}
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(path string, auth string) int {
		req, _ := http.NewRequest("GET", base+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
			req.Header.Set("service-network-id", m.NetworkID)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if st := get("/healthz", ""); st != 200 {
		t.Fatalf("healthz %d", st)
	}
	if st := get("/resources/v1/"+m.IDs["resource"][0], "Bearer "+m.BearerToken); st != 200 {
		t.Fatalf("resource %d", st)
	}
	if st := get("/resources/v1/"+m.IDs["resource"][0], m.BasicAuth); st != 200 {
		t.Fatalf("resource with Basic %d", st)
	}
	if st := get("/events/v1/"+m.IDs["event"][0], "Bearer "+m.BearerToken); st != 503 {
		t.Fatalf("event with injected fault %d", st)
	}
	if st := get("/openapi.json", ""); st != 200 {
		t.Fatalf("openapi %d", st)
	}
	var stats struct{ Total int64 }
	res, err := client.Get(base + "/_stats")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(res.Body).Decode(&stats)
	res.Body.Close()
	if stats.Total != 3 {
		t.Fatalf("stats total %d", stats.Total)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run returned %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	getenv := func(string) string { return "" }
	if err := run(context.Background(), []string{"restserver", "-fault", "GET /x=explode"}, getenv, io.Discard, io.Discard); err == nil {
		t.Fatal("bad -fault accepted")
	}
	bad := func(k string) string {
		if k == "RESTSERVER_DEMO_SCALE" {
			return "many"
		}
		return ""
	}
	if err := run(context.Background(), []string{"restserver"}, bad, io.Discard, io.Discard); err == nil {
		t.Fatal("bad RESTSERVER_DEMO_SCALE accepted")
	}
}

// TestRunRateLimit: -rate-limit N answers 429 (with Retry-After, or without
// it under -rate-limit-no-retry-after) to a client's request beyond N in one
// second.
func TestRunRateLimit(t *testing.T) {
	for _, omit := range []bool{false, true} {
		t.Run(fmt.Sprint("no-retry-after=", omit), func(t *testing.T) {
			env := map[string]string{"RESTSERVER_DB": ":memory:", "RESTSERVER_ADDR": "127.0.0.1:0", "RESTSERVER_RATE_LIMIT": "1"}
			args := []string{"restserver"}
			if omit {
				args = append(args, "-rate-limit-no-retry-after")
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stderr := &addrWriter{addr: make(chan string, 1)}
			done := make(chan error, 1)
			go func() { done <- run(ctx, args, func(k string) string { return env[k] }, io.Discard, stderr) }()
			var base string
			select {
			case base = <-stderr.addr:
			case err := <-done:
				t.Fatalf("run: %v", err)
			}
			get := func() *http.Response {
				req, _ := http.NewRequest("GET", base+"/resources/v1/"+restserver.DemoBearerToken, nil)
				req.Header.Set("Authorization", "Bearer "+restserver.DemoBearerToken)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				return res
			}
			start := time.Now()
			if res := get(); res.StatusCode == http.StatusTooManyRequests {
				t.Fatalf("first request: %d", res.StatusCode)
			}
			res := get()
			if time.Since(start) >= 900*time.Millisecond {
				t.Skip("the two requests were more than a second apart on this machine; the limit is checked in restserver/hooks")
			}
			if res.StatusCode != http.StatusTooManyRequests || (res.Header.Get("Retry-After") == "") != omit {
				t.Fatalf("second request: %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
			}
			cancel()
			<-done
		})
	}
}

// TestRunTestEndpoints: /_stats answers 404 unless -test-endpoints (or
// RESTSERVER_TEST_ENDPOINTS=true) turns it on.
func TestRunTestEndpoints(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		env  string
		want int
	}{
		{"default", nil, "", http.StatusNotFound},
		{"flag", []string{"-test-endpoints"}, "", http.StatusOK},
		{"env", nil, "true", http.StatusOK},
		{"env off", nil, "false", http.StatusNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"RESTSERVER_DB": ":memory:", "RESTSERVER_ADDR": "127.0.0.1:0", "RESTSERVER_DEMO_SCALE": "0",
				"RESTSERVER_TEST_ENDPOINTS": c.env}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stderr := &addrWriter{addr: make(chan string, 1)}
			done := make(chan error, 1)
			go func() {
				done <- run(ctx, append([]string{"restserver"}, c.args...), func(k string) string { return env[k] }, io.Discard, stderr)
			}()
			var base string
			select {
			case base = <-stderr.addr:
			case err := <-done:
				t.Fatalf("run: %v", err)
			}
			res, err := http.Get(base + "/_stats")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != c.want {
				t.Fatalf("GET /_stats: %d %s, want %d", res.StatusCode, body, c.want)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("run returned %v", err)
			}
		})
	}
	bad := func(k string) string {
		if k == "RESTSERVER_TEST_ENDPOINTS" {
			return "maybe"
		}
		return ""
	}
	if err := run(context.Background(), []string{"restserver"}, bad, io.Discard, io.Discard); err == nil {
		t.Fatal("bad RESTSERVER_TEST_ENDPOINTS accepted")
	}
}

// TestDocsStateEveryFlagAndTheDefaultDatabase: docs/local-rest-service.md
// has a row for every flag with its environment variable and default, and
// the directory it tells a reader to delete to reset the demo is the
// program's.
func TestDocsStateEveryFlagAndTheDefaultDatabase(t *testing.T) {
	const page = "../../docs/local-rest-service.md"
	var usage bytes.Buffer
	noEnv := func(string) string { return "" }
	if err := run(context.Background(), []string{"restserver", "-h"}, noEnv, io.Discard, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run -h: %v", err)
	}
	testenv.CheckFlagTables(t, testenv.UsageFlags(t, usage.String()), page)
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if want := "delete `" + defaultDB[:strings.LastIndex(defaultDB, "/")+1] + "`"; !bytes.Contains(raw, []byte(want)) {
		t.Errorf("%s does not say %s", page, want)
	}
}

// TestRunMetrics: -metrics-addr serves the service's request metrics on a
// listener of its own, by route template and status class, linting clean.
func TestRunMetrics(t *testing.T) {
	env := map[string]string{"RESTSERVER_DB": ":memory:", "RESTSERVER_ADDR": "127.0.0.1:0", "RESTSERVER_METRICS_ADDR": "127.0.0.1:0"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &addrWriter{addr: make(chan string, 1)}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"restserver"}, func(k string) string { return env[k] }, io.Discard, stderr)
	}()
	var base string
	select {
	case base = <-stderr.addr:
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	stderr.mu.Lock()
	m := regexp.MustCompile(`metrics (http://\S+/metrics)`).FindStringSubmatch(stderr.buf.String())
	stderr.mu.Unlock()
	if m == nil {
		t.Fatalf("no metrics URL printed: %s", stderr.buf.String())
	}
	for _, path := range []string{"/resources/v1/" + restserver.DemoBearerToken, "/resources/v1/x", "/nowhere"} {
		res, err := http.Get(base + path) // no credentials: 401; unknown path: 404
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	res, err := http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{
		`restserver_http_requests_total{method="GET",route="/resources/v1/{id}",status_class="4xx"} 2`,
		`restserver_http_requests_total{method="GET",route="unmatched",status_class="4xx"} 1`,
		"go_goroutines ", "process_cpu_seconds_total ",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
	if strings.Contains(string(body), restserver.DemoBearerToken) {
		t.Error("a path's id is in a label")
	}
	if problems, err := promlint.New(bytes.NewReader(body)).Lint(); err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %v", err, problems)
	}
	cancel()
	<-done
}
