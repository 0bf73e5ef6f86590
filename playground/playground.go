// Package playground serves a GraphiQL page whose scripts and styles are
// embedded in the binary, so it works without access to any CDN.
//
// Mount the handler without stripping prefixes, at "/" and AssetPrefix:
//
//	h := playground.Handler(playground.Config{Title: "Workspace Network", Endpoint: "/graphql"})
//	mux.Handle("/", h)
//	mux.Handle(playground.AssetPrefix, h)
package playground

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// AssetPrefix is the URL path under which the embedded assets are served, as
// AssetPrefix + "<content hash>/<file name>".
const AssetPrefix = "/playground/assets/"

// DefaultEndpoint is the GraphQL endpoint used when Config.Endpoint is empty.
const DefaultEndpoint = "/graphql"

//go:embed assets/*.js assets/*.css
var assetFS embed.FS

// Config configures the playground page.
type Config struct {
	// Title is the page title; "GraphiQL" when empty.
	Title string
	// Endpoint is the URL GraphQL requests are POSTed to; DefaultEndpoint when
	// empty. A relative path is expected; an absolute http(s) URL is allowed and
	// its origin is added to the page's connect-src.
	Endpoint string
	// DefaultHeaders pre-fill the headers editor (as a JSON object) when the
	// browser has no saved tab state. Headers are never persisted by GraphiQL.
	DefaultHeaders map[string]string
	// DefaultQuery pre-fills the query editor when the browser has no saved
	// tab state; GraphiQL's own welcome text when empty.
	DefaultQuery string
	// DefaultVariables pre-fill the variables editor (as a JSON object) along
	// with DefaultQuery.
	DefaultVariables map[string]any
	// ExampleSubscription, when set, is a second tab of the first visit
	// (with ExampleSubscriptionVariables, else DefaultVariables, and
	// DefaultHeaders): a subscription the page runs over a WebSocket
	// (graphql-transport-ws) to Endpoint.
	ExampleSubscription string
	// ExampleSubscriptionVariables pre-fill the second tab's variables
	// editor; none: DefaultVariables.
	ExampleSubscriptionVariables map[string]any
	// UpstreamTrace makes the page send X-Upstream-Trace: 1 with every
	// request (unless the headers editor sets that header) and show the
	// "Upstream calls" panel, open, drawing the extensions.upstream report of
	// the last response as a waterfall. Set it only where the endpoint
	// answers the report (graph.Options.UpstreamTrace).
	UpstreamTrace bool
}

// asset is one embedded file, immutable once Handler has built it.
type asset struct {
	body        []byte
	gzipped     []byte // body gzip-compressed
	contentType string
	etag        string // of body; gzipped has etag with a -gz suffix inside the quotes
}

// pageConfig is the JSON read by assets/playground.js.
type pageConfig struct {
	Endpoint string `json:"endpoint"`
	Query    string `json:"query,omitempty"`
	Headers  string `json:"headers,omitempty"`
	Vars     string `json:"variables,omitempty"`
	Sub      string `json:"subscription,omitempty"`
	SubVars  string `json:"subscriptionVariables,omitempty"`
	Trace    bool   `json:"upstreamTrace,omitempty"`
}

type pageData struct {
	Title  string
	Config pageConfig
	CSS    []string
	JS     []string
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.Title}}</title>
{{range .CSS}}<link rel="stylesheet" href="{{.}}">
{{end}}</head>
<body>
<div id="graphiql"><p class="playground-loading">Loading GraphiQL…</p></div>
<noscript>GraphiQL needs JavaScript.</noscript>
<script id="playground-config" type="application/json">{{.Config}}</script>
{{range .JS}}<script src="{{.}}"></script>
{{end}}</body>
</html>
`))

// Order matters: React before ReactDOM before GraphiQL before the bootstrap.
var (
	cssFiles = []string{"graphiql.min.css", "playground.css"}
	jsFiles  = []string{"react.production.min.js", "react-dom.production.min.js", "graphiql.min.js", "playground.js"}
)

type handler struct {
	page   []byte
	csp    string
	assets map[string]asset // keyed by "<hash>/<name>"
}

// Handler returns the playground: GET/HEAD "/" is the GraphiQL page and
// GET/HEAD AssetPrefix+"<hash>/<file>" the embedded assets (cached as
// immutable); any other path is 404, any other method 405. It expects the
// request's full URL path (no http.StripPrefix). It panics only if the
// embedded files are missing, which is a build error.
func Handler(cfg Config) http.Handler {
	if cfg.Title == "" {
		cfg.Title = "GraphiQL"
	}
	if cfg.Endpoint == "" {
		cfg.Endpoint = DefaultEndpoint
	}
	h := &handler{assets: map[string]asset{}, csp: contentSecurityPolicy(cfg.Endpoint)}
	urls := map[string]string{}
	entries, err := fs.ReadDir(assetFS, "assets")
	if err != nil {
		panic("playground: embedded assets: " + err.Error())
	}
	for _, e := range entries {
		body, err := assetFS.ReadFile("assets/" + e.Name())
		if err != nil {
			panic("playground: embedded asset: " + err.Error())
		}
		sum := sha256.Sum256(body)
		hash := hex.EncodeToString(sum[:6])
		key := hash + "/" + e.Name()
		h.assets[key] = asset{body: body, gzipped: gzipBytes(body), contentType: contentType(e.Name()), etag: hex.EncodeToString(sum[:16])}
		urls[e.Name()] = AssetPrefix + key
	}

	data := pageData{Title: cfg.Title, Config: pageConfig{Endpoint: cfg.Endpoint, Query: cfg.DefaultQuery, Sub: cfg.ExampleSubscription, Trace: cfg.UpstreamTrace}}
	if len(cfg.DefaultHeaders) > 0 {
		data.Config.Headers = editorJSON("default headers", cfg.DefaultHeaders)
	}
	if len(cfg.DefaultVariables) > 0 {
		data.Config.Vars = editorJSON("default variables", cfg.DefaultVariables)
	}
	if len(cfg.ExampleSubscriptionVariables) > 0 {
		data.Config.SubVars = editorJSON("example subscription variables", cfg.ExampleSubscriptionVariables)
	}
	for _, name := range cssFiles {
		data.CSS = append(data.CSS, mustURL(urls, name))
	}
	for _, name := range jsFiles {
		data.JS = append(data.JS, mustURL(urls, name))
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, data); err != nil { // static template, JSON-able data
		panic("playground: page template: " + err.Error())
	}
	h.page = buf.Bytes()
	return h
}

func mustURL(urls map[string]string, name string) string {
	u, ok := urls[name]
	if !ok {
		panic("playground: embedded asset missing: " + name)
	}
	return u
}

// contentSecurityPolicy allows scripts only from this origin (no inline
// scripts), inline styles (GraphiQL's components inject <style> elements),
// data: fonts and images (GraphiQL's CSS embeds its fonts), and requests to
// this origin plus the endpoint's origin if it is absolute.
func contentSecurityPolicy(endpoint string) string {
	connect := "'self'"
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") {
		connect += " " + u.Scheme + "://" + u.Host
	}
	return strings.Join([]string{
		"default-src 'none'",
		"script-src 'self'",
		"style-src 'self' 'unsafe-inline'",
		"font-src 'self' data:",
		"img-src 'self' data:",
		"connect-src " + connect,
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; ")
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	default:
		return "application/octet-stream"
	}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	var serve func(http.ResponseWriter, *http.Request) bool
	switch {
	case p == "/":
		serve = h.servePage
	case strings.HasPrefix(p, AssetPrefix):
		serve = h.serveAsset
	default:
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !serve(w, r) {
		http.NotFound(w, r)
	}
}

func (h *handler) servePage(w http.ResponseWriter, r *http.Request) bool {
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Security-Policy", h.csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(h.page))
	return true
}

func (h *handler) serveAsset(w http.ResponseWriter, r *http.Request) bool {
	a, ok := h.assets[strings.TrimPrefix(r.URL.Path, AssetPrefix)]
	if !ok {
		return false
	}
	hd := w.Header()
	hd.Set("Content-Type", a.contentType)
	hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Add("Vary", "Accept-Encoding")
	body, etag := a.body, a.etag
	if acceptsGzip(r.Header.Values("Accept-Encoding")) {
		hd.Set("Content-Encoding", "gzip")
		body, etag = a.gzipped, etag+"-gz"
	}
	hd.Set("ETag", `"`+etag+`"`)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
	return true
}

// acceptsGzip reports whether Accept-Encoding values list gzip with a
// non-zero quality.
func acceptsGzip(values []string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			name, params, _ := strings.Cut(part, ";")
			if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
				continue
			}
			q := 1.0
			for param := range strings.SplitSeq(params, ";") {
				k, v, _ := strings.Cut(strings.TrimSpace(param), "=")
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && strings.EqualFold(strings.TrimSpace(k), "q") {
					q = f
				}
			}
			return q > 0
		}
	}
	return false
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	// Writes to a bytes.Buffer cannot fail.
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// editorJSON renders v as indented JSON for an editor. Shown verbatim, so no
// HTML escaping here; the page template escapes the whole config for the
// <script> element. v must be encodable (a programming error otherwise).
func editorJSON(what string, v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic("playground: " + what + ": " + err.Error())
	}
	return strings.TrimSuffix(b.String(), "\n")
}
