package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// minimalIntrospection is a valid introspection result for `type Query { hello: String }`.
const minimalIntrospection = `{"data":{"__schema":{
 "description":null,
 "queryType":{"name":"Query"},"mutationType":null,"subscriptionType":null,
 "types":[
  {"kind":"OBJECT","name":"Query","description":null,"specifiedByURL":null,
   "fields":[{"name":"hello","description":"Greets.","args":[],
     "type":{"kind":"SCALAR","name":"String","ofType":null},
     "isDeprecated":false,"deprecationReason":null}],
   "inputFields":null,"interfaces":[],"enumValues":null,"possibleTypes":null},
  {"kind":"SCALAR","name":"String","description":null,"specifiedByURL":null,
   "fields":null,"inputFields":null,"interfaces":null,"enumValues":null,"possibleTypes":null}
 ],
 "directives":[]}}}`

// seenRequest is what the fake GraphQL endpoint records of each request.
type seenRequest struct {
	contentType string
	demoToken   string
	query       string
}

// fakeGraphQL answers introspection with minimalIntrospection and anything
// else with {"data":{"hello":"world"}}, recording every request.
type fakeGraphQL struct {
	mu   sync.Mutex
	seen []seenRequest
}

func (f *fakeGraphQL) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Query string `json:"query"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	f.mu.Lock()
	f.seen = append(f.seen, seenRequest{
		contentType: r.Header.Get("Content-Type"),
		demoToken:   r.Header.Get("X-Demo-Token"),
		query:       body.Query,
	})
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if strings.Contains(body.Query, "__schema") {
		_, _ = w.Write([]byte(minimalIntrospection))
		return
	}
	_, _ = w.Write([]byte(`{"data":{"hello":"world"}}`))
}

func (f *fakeGraphQL) requests() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.seen...)
}

func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// runChromium runs headless chromium with a fresh profile and extra args on
// url and returns its stdout and stderr (which carries the page's console
// messages: it runs with --enable-logging=stderr).
func runChromium(t *testing.T, bin, url string, extra ...string) (stdout, stderr []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--enable-logging=stderr", "--v=0",
		"--user-data-dir=" + t.TempDir(),
		"--window-size=1280,800", "--virtual-time-budget=8000",
	}
	args = append(append(args, extra...), url)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\nstderr:\n%s", extra, err, errOut.String())
	}
	return out.Bytes(), errOut.Bytes()
}

// TestBrowserRendersGraphiQL loads the page in headless Chromium. It runs only
// with PLAYGROUND_BROWSER_TEST=1 and a chromium binary on PATH; the screenshot
// goes to $PLAYGROUND_SCREENSHOT if set (else a temp dir).
func TestBrowserRendersGraphiQL(t *testing.T) {
	if os.Getenv("PLAYGROUND_BROWSER_TEST") != "1" {
		t.Skip("set PLAYGROUND_BROWSER_TEST=1 to run the headless browser check")
	}
	bin := findChromium()
	if bin == "" {
		t.Skip("chromium not installed")
	}

	fake := &fakeGraphQL{}
	mux := http.NewServeMux()
	pg := Handler(Config{
		Title:          "Playground browser test",
		Endpoint:       "/graphql",
		DefaultHeaders: map[string]string{"X-Demo-Token": "demo-123"},
		DefaultQuery:   "query BrowserCheck {\n  hello\n}\n",
	})
	mux.Handle("/", pg)
	mux.Handle(AssetPrefix, pg)
	mux.Handle("/graphql", fake)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	domOut, console := runChromium(t, bin, srv.URL+"/", "--dump-dom")
	dom := string(domOut)
	// A CSP violation or a script error is logged to the console.
	for _, line := range strings.Split(string(console), "\n") {
		if strings.Contains(line, "Content Security Policy") || strings.Contains(line, "Uncaught") {
			t.Errorf("browser console: %.300s", line)
		}
	}
	for _, want := range []string{"graphiql-container", "graphiql-editor", "BrowserCheck", "X-Demo-Token", "demo-123"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("DOM (first 3000 bytes):\n%.3000s", dom)
	}

	// GraphiQL introspects on load through our fetcher: that request must carry
	// the headers-editor headers and a JSON content type.
	var introspected bool
	for _, r := range fake.requests() {
		if strings.Contains(r.query, "__schema") {
			introspected = true
			if !strings.HasPrefix(r.contentType, "application/json") {
				t.Errorf("introspection Content-Type = %q, want application/json", r.contentType)
			}
			if r.demoToken != "demo-123" {
				t.Errorf("introspection X-Demo-Token = %q, want demo-123 from the headers editor", r.demoToken)
			}
		}
	}
	if !introspected {
		t.Errorf("GraphiQL sent no introspection request; saw %+v", fake.requests())
	}

	shot := os.Getenv("PLAYGROUND_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "playground.png")
	} else if abs, err := filepath.Abs(shot); err == nil {
		shot = abs
	}
	_ = os.Remove(shot)
	runChromium(t, bin, srv.URL+"/", "--screenshot="+shot)
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 10_000 {
		t.Fatalf("screenshot %s is not a plausible PNG (%d bytes)", shot, len(png))
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))
}
