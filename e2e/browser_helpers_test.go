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

	"github.com/workspacenet/facade/internal/stack"
	"github.com/workspacenet/facade/internal/testenv"
)

// browserChromium is Debian's chromium, the only browser the browser tests
// use (.ci/run installs it; nothing downloads a browser of its own).
const browserChromium = "/usr/bin/chromium"

// browserRequire skips t unless node, e2e/node_modules (playwright-core,
// esbuild, @apollo/client) and chromium are installed; with E2E_REQUIRED=1
// (set by .ci/run) it fails instead. It returns the e2e directory (the
// test's working directory) as an absolute path.
func browserRequire(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	var missing string
	switch {
	case !browserHas(exec.LookPath("node")):
		missing = "node is not on the PATH (install Node.js 20+, then `cd e2e && npm ci`)"
	case !browserExists(filepath.Join(dir, "node_modules", "playwright-core", "package.json")) ||
		!browserExists(filepath.Join(dir, "node_modules", "@apollo", "client", "package.json")) ||
		!browserExists(filepath.Join(dir, "node_modules", ".bin", "esbuild")):
		missing = "e2e/node_modules is not installed: run `cd e2e && npm ci`"
	case !browserExists(browserChromium):
		missing = browserChromium + " is missing: `apt-get install -y chromium`"
	}
	if missing != "" {
		if os.Getenv("E2E_REQUIRED") == "1" {
			t.Fatalf("E2E_REQUIRED=1: %s", missing)
		}
		t.Skip(missing)
	}
	return dir
}

func browserHas(_ string, err error) bool { return err == nil }

func browserExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// browserStartDemo starts the stack `go run .` starts (stack.DefaultConfig:
// the embedded REST service on demo data, the playground, the upstream call
// report on auto) on a loopback port, with its data in a temp dir and edit
// applied to the config (nil: none). It returns the stack and its base URL.
func browserStartDemo(t *testing.T, edit func(*stack.Config)) (*stack.Stack, string) {
	t.Helper()
	cfg := stack.DefaultConfig()
	cfg.DataDir = t.TempDir()
	if edit != nil {
		edit(&cfg)
	}
	return testenv.Serve(t, cfg, slog.New(slog.DiscardHandler))
}

// browserNode runs `node script args...` in the e2e directory and decodes
// the one JSON object it prints into out. The deadline only stops a hung
// browser; no assertion depends on time.
func browserNode(t *testing.T, dir, script string, out any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CHROMIUM_PATH="+browserChromium)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil || json.Unmarshal(stdout.Bytes(), out) != nil {
		t.Fatalf("node %s: %v\nstdout:\n%.4000s\nstderr:\n%.4000s", script, err, stdout.String(), stderr.String())
	}
}

// browserEsbuild bundles entry (a file in dir) for the browser with
// node_modules/.bin/esbuild into a temp dir and returns the bundle's bytes.
func browserEsbuild(t *testing.T, dir, entry string) []byte {
	t.Helper()
	outFile := filepath.Join(t.TempDir(), "bundle.js")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "node_modules", ".bin", "esbuild"), entry,
		"--bundle", "--format=esm", "--platform=browser", "--target=es2022", "--log-level=warning",
		"--define:process.env.NODE_ENV=\"production\"", "--outfile="+outFile)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("esbuild %s: %v\n%s", entry, err, out)
	}
	b, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
