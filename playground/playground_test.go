package playground

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
)

const evil = `</script><script>alert(1)</script>`

func do(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, req)
	return rr
}

func getPage(t *testing.T, h http.Handler) string {
	t.Helper()
	rr := do(t, h, http.MethodGet, "/", nil)
	if rr.Code != http.StatusOK {
		t.Fatalf("GET / = %d, want 200", rr.Code)
	}
	if ct := rr.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("GET / Content-Type = %q, want text/html", ct)
	}
	return rr.Body.String()
}

var (
	attrRE   = regexp.MustCompile(`\s(?:src|href)="([^"]*)"`)
	scriptRE = regexp.MustCompile(`(?s)<script([^>]*)>(.*?)</script>`)
	configRE = regexp.MustCompile(`(?s)<script id="playground-config" type="application/json">(.*?)</script>`)
)

// pageConfigOf extracts and decodes the JSON config element of page.
func pageConfigOf(t *testing.T, page string) pageConfig {
	t.Helper()
	m := configRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("page has no config element:\n%s", page)
	}
	var c pageConfig
	if err := json.Unmarshal([]byte(m[1]), &c); err != nil {
		t.Fatalf("config element is not JSON: %v\n%s", err, m[1])
	}
	return c
}

func TestPageHeadersAndNoExternalURLs(t *testing.T) {
	h := Handler(Config{Title: "Workspace Network", DefaultQuery: "{ hello }"})
	rr := do(t, h, http.MethodGet, "/", nil)
	if rr.Code != http.StatusOK {
		t.Fatalf("GET / = %d", rr.Code)
	}
	page := rr.Body.String()
	if ct := rr.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	csp := rr.Header().Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self';", "connect-src 'self';", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if rr.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("missing nosniff")
	}
	for _, scheme := range []string{"http://", "https://", "//cdn", "unpkg", "jsdelivr"} {
		if strings.Contains(page, scheme) {
			t.Errorf("page contains %q", scheme)
		}
	}
	if !strings.Contains(page, "<title>Workspace Network</title>") {
		t.Errorf("title missing:\n%s", page)
	}
	// The only inline script is the JSON config; CSP forbids inline code.
	scripts := scriptRE.FindAllStringSubmatch(page, -1)
	if len(scripts) != len(jsFiles)+1 {
		t.Fatalf("page has %d scripts, want %d", len(scripts), len(jsFiles)+1)
	}
	for _, s := range scripts {
		if strings.Contains(s[1], "src=") {
			if strings.TrimSpace(s[2]) != "" {
				t.Errorf("script with src has a body: %q", s[0])
			}
		} else if !strings.Contains(s[1], `type="application/json"`) {
			t.Errorf("inline executable script: %q", s[0])
		}
	}
}

func TestEveryReferencedAssetIsServed(t *testing.T) {
	h := Handler(Config{})
	page := getPage(t, h)
	refs := attrRE.FindAllStringSubmatch(page, -1)
	if len(refs) != len(jsFiles)+len(cssFiles) {
		t.Fatalf("page references %d assets, want %d", len(refs), len(jsFiles)+len(cssFiles))
	}
	for _, m := range refs {
		u := m[1]
		if !strings.HasPrefix(u, AssetPrefix) {
			t.Errorf("asset URL %q outside %s", u, AssetPrefix)
			continue
		}
		rr := do(t, h, http.MethodGet, u, nil)
		if rr.Code != http.StatusOK {
			t.Errorf("GET %s = %d", u, rr.Code)
			continue
		}
		name := path.Base(u)
		want, err := os.ReadFile("assets/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if rr.Body.String() != string(want) {
			t.Errorf("GET %s: body differs from assets/%s", u, name)
		}
		// The path carries a prefix of the content's sha256.
		sum := sha256.Sum256(want)
		if hash := path.Base(path.Dir(u)); !strings.HasPrefix(hex.EncodeToString(sum[:]), hash) || len(hash) < 8 {
			t.Errorf("GET %s: path hash %q is not a content hash", u, hash)
		}
		wantCT := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}[path.Ext(name)]
		if ct := rr.Header().Get("Content-Type"); ct != wantCT {
			t.Errorf("GET %s Content-Type = %q, want %q", u, ct, wantCT)
		}
		if cc := rr.Header().Get("Cache-Control"); !strings.Contains(cc, "immutable") || !strings.Contains(cc, "max-age=31536000") {
			t.Errorf("GET %s Cache-Control = %q", u, cc)
		}
		etag := rr.Header().Get("ETag")
		if etag == "" {
			t.Errorf("GET %s has no ETag", u)
			continue
		}
		if rr := do(t, h, http.MethodGet, u, map[string]string{"If-None-Match": etag}); rr.Code != http.StatusNotModified {
			t.Errorf("conditional GET %s = %d, want 304", u, rr.Code)
		}
		if rr := do(t, h, http.MethodHead, u, nil); rr.Code != http.StatusOK || rr.Body.Len() != 0 {
			t.Errorf("HEAD %s = %d with %d body bytes", u, rr.Code, rr.Body.Len())
		}
	}
}

func TestDefaultsAreJSONEncoded(t *testing.T) {
	headers := map[string]string{"Authorization": "Bearer abc", "X-Workspace": "ws-1"}
	query := "query Me {\n  me { id \"quoted\" }\n}"
	page := getPage(t, Handler(Config{Endpoint: "/api/graphql", DefaultHeaders: headers, DefaultQuery: query, DefaultVariables: map[string]any{"location": "loc-1"}}))
	c := pageConfigOf(t, page)
	if c.Endpoint != "/api/graphql" || c.Query != query {
		t.Errorf("config = %+v", c)
	}
	var vars map[string]any
	if err := json.Unmarshal([]byte(c.Vars), &vars); err != nil || len(vars) != 1 || vars["location"] != "loc-1" {
		t.Errorf("variables %q: %v", c.Vars, err)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(c.Headers), &got); err != nil {
		t.Fatalf("headers %q are not a JSON object: %v", c.Headers, err)
	}
	if len(got) != len(headers) || got["Authorization"] != "Bearer abc" || got["X-Workspace"] != "ws-1" {
		t.Errorf("headers = %v, want %v", got, headers)
	}

	empty := pageConfigOf(t, getPage(t, Handler(Config{})))
	if empty != (pageConfig{Endpoint: DefaultEndpoint}) {
		t.Errorf("zero Config gives %+v", empty)
	}
}

// TestUpstreamTraceReachesThePage: Config.UpstreamTrace is the page's
// upstreamTrace (playground.js then sends X-Upstream-Trace: 1 and opens the
// Upstream calls panel; e2e's browser tests check that), absent otherwise.
func TestUpstreamTraceReachesThePage(t *testing.T) {
	if c := pageConfigOf(t, getPage(t, Handler(Config{UpstreamTrace: true}))); !c.Trace {
		t.Errorf("UpstreamTrace: true gives %+v", c)
	}
	if page := getPage(t, Handler(Config{})); strings.Contains(page, "upstreamTrace") {
		t.Errorf("UpstreamTrace: false still names it in the page: %s", page)
	}
}

func TestMaliciousValuesCannotBreakOut(t *testing.T) {
	cfg := Config{
		Title:          evil,
		Endpoint:       "/graphql?x=" + evil,
		DefaultHeaders: map[string]string{evil: evil, "X-Amp": "a&b<c>d'e\"f\u2028"},
		DefaultQuery:   "# " + evil + "\n<!-- <script> -->{ a }",
	}
	page := getPage(t, Handler(cfg))
	// Exactly the page's own script elements exist.
	if n, want := strings.Count(page, "<script"), len(jsFiles)+1; n != want {
		t.Errorf("page has %d <script openings, want %d:\n%s", n, want, page)
	}
	if n, want := strings.Count(page, "</script>"), len(jsFiles)+1; n != want {
		t.Errorf("page has %d </script>, want %d", n, want)
	}
	if strings.Contains(page, "<!--") || strings.Contains(page, "alert(1)</") {
		t.Errorf("unescaped markup in page:\n%s", page)
	}
	if !strings.Contains(page, "<title>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>") {
		t.Errorf("title not HTML-escaped:\n%s", page)
	}
	// Values still round-trip exactly.
	c := pageConfigOf(t, page)
	if c.Query != cfg.DefaultQuery || c.Endpoint != cfg.Endpoint {
		t.Errorf("config = %+v", c)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(c.Headers), &got); err != nil {
		t.Fatal(err)
	}
	if got[evil] != evil || got["X-Amp"] != cfg.DefaultHeaders["X-Amp"] {
		t.Errorf("headers = %q", got)
	}
	// Shown to the user verbatim, not as \u003c escapes.
	if !strings.Contains(c.Headers, evil) {
		t.Errorf("headers editor text is escaped: %q", c.Headers)
	}
}

func TestNotFoundAndMethods(t *testing.T) {
	h := Handler(Config{})
	page := getPage(t, h)
	served := attrRE.FindStringSubmatch(page)[1] // some served asset
	hash := path.Base(path.Dir(served))
	for _, target := range []string{
		AssetPrefix + "000000000000/graphiql.min.js",
		AssetPrefix + "graphiql.min.js",
		AssetPrefix + hash + "/nope.js",
		AssetPrefix + hash + "/../" + hash + "/" + path.Base(served) + "x",
		AssetPrefix,
		AssetPrefix + "README.md",
		AssetPrefix + "LICENSE.graphiql",
		"/index.html",
		"/graphiql",
	} {
		if rr := do(t, h, http.MethodGet, target, nil); rr.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", target, rr.Code)
		}
	}
	for _, target := range []string{"/", served} {
		rr := do(t, h, http.MethodPost, target, nil)
		if rr.Code != http.StatusMethodNotAllowed || rr.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("POST %s = %d Allow %q, want 405", target, rr.Code, rr.Header().Get("Allow"))
		}
	}
}

func TestAbsoluteEndpointIsAllowedByCSP(t *testing.T) {
	rr := do(t, Handler(Config{Endpoint: "https://api.example.test:8443/graphql"}), http.MethodGet, "/", nil)
	csp := rr.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "connect-src 'self' https://api.example.test:8443;") {
		t.Errorf("CSP = %q", csp)
	}
	if !strings.Contains(csp, "script-src 'self';") {
		t.Errorf("CSP = %q", csp)
	}
}

func TestServesThroughRealServer(t *testing.T) {
	pg := Handler(Config{})
	mux := http.NewServeMux()
	mux.Handle("/", pg)
	mux.Handle(AssetPrefix, pg)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET / = %d", res.StatusCode)
	}
	for _, m := range attrRE.FindAllStringSubmatch(string(body), -1) {
		res, err := srv.Client().Get(srv.URL + m[1])
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || n == 0 {
			t.Errorf("GET %s via mux = %d (%d bytes)", m[1], res.StatusCode, n)
		}
	}
}

func TestAssetsGzipWhenAccepted(t *testing.T) {
	h := Handler(Config{})
	u := attrRE.FindStringSubmatch(getPage(t, h))[1]
	want, err := os.ReadFile("assets/" + path.Base(u))
	if err != nil {
		t.Fatal(err)
	}
	plain := do(t, h, http.MethodGet, u, nil)
	if plain.Header().Get("Content-Encoding") != "" || plain.Body.String() != string(want) {
		t.Errorf("identity response: encoding %q, body equal %v", plain.Header().Get("Content-Encoding"), plain.Body.String() == string(want))
	}
	for _, ae := range []string{"gzip", "br, gzip;q=0.8", "GZIP; q=1", "deflate, gzip"} {
		rr := do(t, h, http.MethodGet, u, map[string]string{"Accept-Encoding": ae})
		if rr.Header().Get("Content-Encoding") != "gzip" {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q", ae, rr.Header().Get("Content-Encoding"))
			continue
		}
		if rr.Header().Get("ETag") == plain.Header().Get("ETag") {
			t.Errorf("gzip and identity share ETag %s", rr.Header().Get("ETag"))
		}
		zr, err := gzip.NewReader(bytes.NewReader(rr.Body.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("Accept-Encoding %q: gunzipped body differs (err %v)", ae, err)
		}
	}
	for _, ae := range []string{"br", "gzip;q=0", "gzip; q=0.000", "identity"} {
		rr := do(t, h, http.MethodGet, u, map[string]string{"Accept-Encoding": ae})
		if rr.Header().Get("Content-Encoding") != "" {
			t.Errorf("Accept-Encoding %q: got Content-Encoding %q", ae, rr.Header().Get("Content-Encoding"))
		}
	}
	if v := plain.Header().Get("Vary"); v != "Accept-Encoding" {
		t.Errorf("Vary = %q", v)
	}
}
