package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// requiredEnv, when set, turns the skip of a test that cannot find node, the
// npm packages or chromium into a failure (CI sets it, as REDIS_REQUIRED for
// Redis).
const requiredEnv = "E2E_REQUIRED"

// chromium is Debian's chromium, the only browser the browser tests use
// (.ci/run installs it; nothing downloads a browser of its own).
const chromium = "/usr/bin/chromium"

// startDemo starts the facade as `go run .` does (stack.DefaultConfig: the
// embedded demo REST service, its demo data, rate limit, response cache,
// CSRF prevention, the playground and the upstream call report on auto),
// with the demo data in a temporary directory and edit applied to the config
// (nil: none), serves it on a loopback port until t ends, and returns its
// base URL (http://127.0.0.1:port; the endpoint is base + "/graphql") and the
// stack (its Embedded.Manifest holds the demo credentials and ids).
func startDemo(t testing.TB, edit func(*stack.Config)) (baseURL string, st *stack.Stack) {
	t.Helper()
	cfg := stack.DefaultConfig()
	cfg.DataDir = t.TempDir()
	if edit != nil {
		edit(&cfg)
	}
	st, baseURL = testenv.Serve(t, cfg, slog.New(slog.DiscardHandler))
	if st.Embedded == nil {
		t.Fatal("the default configuration started no embedded demo upstream")
	}
	return baseURL, st
}

// unavailable skips t with why and how to install what is missing, or fails
// it under E2E_REQUIRED.
func unavailable(t testing.TB, why string) {
	t.Helper()
	msg := why + ": install Node.js 20+ (apt-get install nodejs npm) and chromium (apt-get install chromium), then run `cd e2e && npm ci`"
	if os.Getenv(requiredEnv) != "" {
		t.Fatal(msg + " (" + requiredEnv + " is set)")
	}
	t.Skip(msg)
}

// requireNode returns the path of node when it and the npm packages of
// e2e/package-lock.json (npm ci) are installed; otherwise see unavailable.
func requireNode(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, "no node on the PATH")
	}
	if _, err := os.Stat(filepath.Join("node_modules", ".package-lock.json")); err != nil {
		unavailable(t, "e2e/node_modules is missing")
	}
	return node
}

// requireBrowser is requireNode, and chromium installed.
func requireBrowser(t testing.TB) string {
	t.Helper()
	node := requireNode(t)
	if _, err := os.Stat(chromium); err != nil {
		unavailable(t, chromium+" is missing")
	}
	return node
}

// runNode runs node on script (a file of e2e/, the tests' working
// directory) with args and returns its standard output; it fails t, with
// the standard error, when node fails. Scripts that drive a browser find it
// in CHROMIUM_PATH. The 10-minute bound only stops a script that would hang;
// no assertion depends on time.
func runNode(t testing.TB, node, script string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "CHROMIUM_PATH="+chromium)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstdout:\n%.4000s\nstderr:\n%.4000s", script, err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

// runNodeJSON is runNode decoding the one JSON value the script prints into out.
func runNodeJSON(t testing.TB, node, script string, out any, args ...string) {
	t.Helper()
	stdout := runNode(t, node, script, args...)
	if err := json.Unmarshal(stdout, out); err != nil {
		t.Fatalf("node %s printed no JSON (%v):\n%.4000s", script, err, stdout)
	}
}

// esbuild bundles entry (a file of e2e/) for the browser with
// node_modules/.bin/esbuild into a temp dir and returns the bundle's bytes.
func esbuild(t testing.TB, entry string) []byte {
	t.Helper()
	outFile := filepath.Join(t.TempDir(), "bundle.js")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join("node_modules", ".bin", "esbuild"), entry,
		"--bundle", "--format=esm", "--platform=browser", "--target=es2022", "--log-level=warning",
		"--define:process.env.NODE_ENV=\"production\"", "--outfile="+outFile)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("esbuild %s: %v\n%s", entry, err, out)
	}
	b, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
