package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/stack"
	"github.com/workspacenet/facade/internal/testenv"
)

// requiredEnv, when set, turns the skip of a test that cannot find node or
// the npm packages into a failure (CI sets it, as REDIS_REQUIRED for Redis).
const requiredEnv = "E2E_REQUIRED"

// startDemo starts the facade as `go run .` does (stack.DefaultConfig: the
// embedded demo REST service, its demo data, rate limit, response cache and
// CSRF prevention), with the demo data in a temporary directory, serves it
// on a loopback port until t ends, and returns its base URL
// (http://127.0.0.1:port; the endpoint is base + "/graphql") and the stack
// (its Embedded.Manifest holds the demo credentials and ids).
func startDemo(t testing.TB) (baseURL string, st *stack.Stack) {
	t.Helper()
	cfg := stack.DefaultConfig()
	cfg.DataDir = t.TempDir()
	st, baseURL = testenv.Serve(t, cfg, nil)
	if st.Embedded == nil {
		t.Fatal("the default configuration started no embedded demo upstream")
	}
	return baseURL, st
}

// requireNode returns the path of node when it and the npm packages of
// e2e/package-lock.json (npm ci) are installed; otherwise it skips t with how
// to install them, or fails it under E2E_REQUIRED.
func requireNode(t testing.TB) string {
	t.Helper()
	unavailable := func(why string) {
		t.Helper()
		msg := why + ": install Node.js (apt-get install nodejs) and run `cd e2e && npm ci`"
		if os.Getenv(requiredEnv) != "" {
			t.Fatal(msg + " (" + requiredEnv + " is set)")
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable("no node on the PATH")
	}
	if _, err := os.Stat(filepath.Join("node_modules", ".package-lock.json")); err != nil {
		unavailable("e2e/node_modules is missing")
	}
	return node
}

// runNode runs node on script (a file of e2e/) with args and returns its
// standard output; it fails t, with the standard error, when node fails.
// The 10-minute bound only stops a script that would hang.
func runNode(t testing.TB, node, script string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.Bytes())
	}
	return stdout.Bytes()
}
