package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// playgroundRun is what e2e/playground.mjs saw after one press of Run.
type playgroundRun struct {
	Response struct {
		Data       json.RawMessage `json:"data"`
		Errors     []any           `json:"errors"`
		Extensions struct {
			Upstream *struct {
				Count     int `json:"count"`
				CacheHits int `json:"cacheHits"`
				Calls     []struct {
					Method string `json:"method"`
					Path   string `json:"path"`
					Status int    `json:"status"`
					Cached bool   `json:"cached"`
					Shared bool   `json:"shared"`
					Batch  int    `json:"batch"`
				} `json:"calls"`
			} `json:"upstream"`
		} `json:"extensions"`
	} `json:"response"`
	TraceHeader *string `json:"traceHeader"`
	ResultShown string  `json:"resultShown"`
	Count       int     `json:"count"`
	CacheHits   int     `json:"cacheHits"`
	Summary     string  `json:"summary"`
	Calls       []struct {
		Route    string  `json:"route"`
		Status   int     `json:"status"`
		Cached   bool    `json:"cached"`
		Shared   bool    `json:"shared"`
		Batch    int     `json:"batch"`
		BarWidth float64 `json:"barWidth"`
	} `json:"calls"`
	Cut []string `json:"cut"`
}

// browserErrors is what the browser scripts collect on every page.
type browserErrors struct {
	Error         string   `json:"error"`
	ConsoleErrors []string `json:"consoleErrors"`
	PageErrors    []string `json:"pageErrors"`
	CSPViolations []string `json:"cspViolations"`
}

func (e browserErrors) check(t *testing.T) {
	t.Helper()
	if len(e.CSPViolations) > 0 || len(e.PageErrors) > 0 || len(e.ConsoleErrors) > 0 {
		t.Errorf("the page reported CSP violations %q, uncaught errors %q, console errors %q", e.CSPViolations, e.PageErrors, e.ConsoleErrors)
	}
}

// TestBrowserPlaygroundWaterfall opens the playground of `go run .` in
// chromium at 1280x800, presses Run on the prefilled query, and checks that
// the result is shown and that the open "Upstream calls" panel draws exactly
// the calls the REST service counted, route by route, every route whole (not
// clipped or ellipsised), under a summary that counts them unambiguously;
// pressing Run again shows the calls the response cache answered as cached,
// and only the others reach the service. The page loads with no CSP
// violation and its headers editor holds the demo credentials; a screenshot
// of the window is taken at 1280x800.
func TestBrowserPlaygroundWaterfall(t *testing.T) {
	node := requireBrowser(t)
	base, st := startDemo(t, nil)
	hooks := st.Embedded.Server.Hooks()
	hooks.Reset()

	var got struct {
		browserErrors
		PanelOpen     bool                        `json:"panelOpen"`
		HeadersEditor string                      `json:"headersEditor"`
		Runs          []playgroundRun             `json:"runs"`
		Viewport      struct{ Width, Height int } `json:"viewport"`
	}
	// Counters at each run: the script presses Run twice; the service's
	// counts after the script are the sum of both runs' non-cached calls.
	shot := filepath.Join(t.TempDir(), "playground-1280x800.png")
	runNodeJSON(t, node, "playground.mjs", &got, base+"/", "2", shot)
	got.browserErrors.check(t)
	if got.Viewport.Width != 1280 || got.Viewport.Height != 800 {
		t.Errorf("window %dx%d, want 1280x800", got.Viewport.Width, got.Viewport.Height)
	}
	checkScreenshot(t, shot, 1280, 800)
	if !got.PanelOpen {
		t.Errorf("the Upstream calls panel is not open on load")
	}
	for _, want := range []string{"Authorization", st.Embedded.Manifest.BearerToken, "service-network-id", st.Embedded.Manifest.NetworkID} {
		if !strings.Contains(got.HeadersEditor, want) {
			t.Errorf("headers editor lacks %q: %q", want, got.HeadersEditor)
		}
	}
	if len(got.Runs) != 2 {
		t.Fatalf("runs: %+v", got.Runs)
	}

	shown := map[string]int64{} // non-cached calls in the waterfalls, by route
	for i, run := range got.Runs {
		if run.TraceHeader == nil || *run.TraceHeader != "1" {
			t.Errorf("run %d: X-Upstream-Trace = %v, want 1", i+1, run.TraceHeader)
		}
		rep := run.Response.Extensions.Upstream
		if len(run.Response.Errors) > 0 || len(run.Response.Data) < 100 || rep == nil {
			t.Fatalf("run %d: response %+v", i+1, run.Response)
		}
		if !strings.Contains(run.ResultShown, `"location"`) || !strings.Contains(run.ResultShown, `"products"`) {
			t.Errorf("run %d: the result pane shows %q", i+1, run.ResultShown)
		}
		// The panel draws the report of this response: one row per call.
		if run.Count != rep.Count || run.CacheHits != rep.CacheHits || len(run.Calls) != len(rep.Calls) {
			t.Errorf("run %d: panel shows count %d, cache hits %d, %d rows; the report has %d, %d, %d calls",
				i+1, run.Count, run.CacheHits, len(run.Calls), rep.Count, rep.CacheHits, len(rep.Calls))
		}
		// Row by row (the panel sorts by start), the same calls and marks.
		var rows, reported []string
		for _, c := range run.Calls {
			rows = append(rows, fmt.Sprintf("%s %d cached=%t shared=%t batch=%d", c.Route, c.Status, c.Cached, c.Shared, c.Batch))
		}
		for _, c := range rep.Calls {
			reported = append(reported, fmt.Sprintf("%s %s %d cached=%t shared=%t batch=%d", c.Method, c.Path, c.Status, c.Cached, c.Shared, c.Batch))
		}
		slices.Sort(rows)
		slices.Sort(reported)
		if !slices.Equal(rows, reported) {
			t.Errorf("run %d: the panel's rows\n%s\nare not the report's calls\n%s", i+1, strings.Join(rows, "\n"), strings.Join(reported, "\n"))
		}
		cached := 0
		for _, c := range run.Calls {
			if c.Status != http.StatusOK || c.BarWidth <= 0 {
				t.Errorf("run %d: row %+v", i+1, c)
			}
			if c.Cached {
				cached++
				continue
			}
			shown[c.Route]++
		}
		if cached != rep.CacheHits {
			t.Errorf("run %d: %d rows marked cached, the report counts %d cache hits", i+1, cached, rep.CacheHits)
		}
		t.Logf("run %d: the waterfall shows %d calls, %d of them cached (%s)", i+1, len(run.Calls), cached, run.Summary)
		if len(run.Cut) > 0 {
			t.Errorf("run %d: at 1280x800 the panel cuts the routes %q", i+1, run.Cut)
		}
		// The summary counts every row, then says what became of them.
		want := fmt.Sprintf("%d calls to the REST API", rep.Count)
		if rep.CacheHits > 0 {
			want = fmt.Sprintf("%d calls: %d to the REST API, %d answered by the response cache", rep.Count+rep.CacheHits, rep.Count, rep.CacheHits)
		}
		if !strings.HasPrefix(run.Summary, want) {
			t.Errorf("run %d: the panel's summary %q, want %q", i+1, run.Summary, want)
		}
		if i == 0 && (cached != 0 || rep.Count < 5) {
			t.Errorf("first run on a fresh stack: %d cached rows, %d calls", cached, rep.Count)
		}
	}
	counted := hooks.Counts()
	for route, n := range counted {
		if shown[route] != n {
			t.Errorf("route %s: the waterfalls show %d calls, the REST service counted %d", route, shown[route], n)
		}
	}
	for route, n := range shown {
		if counted[route] != n {
			t.Errorf("route %s: the waterfalls show %d calls, the REST service counted %d", route, n, counted[route])
		}
	}
	if t.Failed() {
		t.Logf("REST service counted:\n%s", testenv.FormatCalls(counted))
	}
}

// TestBrowserPlaygroundWithoutReport: where the upstream call report is
// off (-upstream-trace off), the playground neither asks for it nor shows
// the panel, and the prefilled query still runs.
func TestBrowserPlaygroundWithoutReport(t *testing.T) {
	node := requireBrowser(t)
	base, _ := startDemo(t, func(c *stack.Config) { c.UpstreamTrace = "off" })
	var got struct {
		browserErrors
		PanelOpen bool            `json:"panelOpen"`
		Runs      []playgroundRun `json:"runs"`
	}
	runNodeJSON(t, node, "playground.mjs", &got, base+"/", "1")
	got.browserErrors.check(t)
	if got.PanelOpen {
		t.Errorf("the Upstream calls panel is shown with the report off")
	}
	if len(got.Runs) != 1 {
		t.Fatalf("runs: %+v", got.Runs)
	}
	run := got.Runs[0]
	if run.TraceHeader != nil {
		t.Errorf("X-Upstream-Trace = %q sent with the report off", *run.TraceHeader)
	}
	if len(run.Response.Errors) > 0 || len(run.Response.Data) < 100 || run.Response.Extensions.Upstream != nil || !strings.Contains(run.ResultShown, `"products"`) {
		t.Errorf("response %+v, shown %q", run.Response, run.ResultShown)
	}
}

// apolloPage is the cross-origin page: its config, then the bundle of
// apollo_page.mjs.
var apolloPage = template.Must(template.New("page").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Apollo Client page</title></head>
<body>
<script id="page-config" type="application/json">{{.}}</script>
<pre id="results"></pre>
<script type="module" src="/bundle.js"></script>
</body></html>
`))

// TestBrowserApolloClientCrossOrigin serves a page on another origin,
// allowed by the facade's -cors-origins, whose Apollo Client 4 runs a query
// by POST and by GET (useGETForQueries): the page gets the data both ways,
// and each query reaches the REST service.
func TestBrowserApolloClientCrossOrigin(t *testing.T) {
	node := requireBrowser(t)
	bundle := esbuild(t, "apollo_page.mjs")

	var pageConfig map[string]any // set before the browser loads the page
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_ = apolloPage.Execute(w, pageConfig)
		case "/favicon.ico":
			w.WriteHeader(http.StatusNoContent)
		case "/bundle.js":
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			_, _ = w.Write(bundle)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(page.Close)
	// The page is on 127.0.0.1, the facade is addressed as localhost: two
	// origins.
	pageOrigin := page.URL
	base, st := startDemo(t, func(c *stack.Config) { c.CORSOrigins = []string{pageOrigin} })
	facade := strings.Replace(base, "127.0.0.1", "localhost", 1)
	m := st.Embedded.Manifest
	resourceID := m.IDs["resource"][0]
	pageConfig = map[string]any{
		"endpoint": facade + "/graphql",
		"headers":  map[string]string{"Authorization": "Bearer " + m.BearerToken, "service-network-id": m.NetworkID},
		// No preflight header: Apollo Client 4 sends Content-Type:
		// application/json on GET too, which CSRF prevention accepts.
		"query":     `query ApolloResource($id: ID!) { resource(id: $id) { id title } }`,
		"variables": map[string]any{"id": resourceID},
	}
	hooks := st.Embedded.Server.Hooks()
	hooks.Reset()

	type result struct {
		Data *struct {
			Resource *struct {
				ID    string `json:"id"`
				Title string `json:"title"`
			} `json:"resource"`
		} `json:"data"`
		Error string `json:"error"`
	}
	var got struct {
		browserErrors
		Results struct {
			Post result `json:"post"`
			Get  result `json:"get"`
		} `json:"results"`
		Requests []struct {
			Method string `json:"method"`
			Status int    `json:"status"`
			URL    string `json:"url"`
			Body   string `json:"body"`
		} `json:"requests"`
	}
	runNodeJSON(t, node, "apollo.mjs", &got, page.URL+"/")
	got.browserErrors.check(t)
	for name, r := range map[string]result{"POST": got.Results.Post, "GET": got.Results.Get} {
		if r.Error != "" || r.Data == nil || r.Data.Resource == nil || r.Data.Resource.ID != resourceID || r.Data.Resource.Title == "" {
			t.Errorf("%s: the page got %+v", name, r)
		}
	}
	methods := map[string]int{}
	for _, r := range got.Requests {
		if r.Status == http.StatusOK {
			methods[r.Method]++
		}
		if r.Status != http.StatusOK {
			t.Errorf("%s %s: %d %s", r.Method, r.URL, r.Status, r.Body)
		}
		if r.Method == http.MethodGet && !strings.Contains(r.URL, "query=") {
			t.Errorf("GET without the query in the URL: %s", r.URL)
		}
	}
	if methods[http.MethodPost] != 1 || methods[http.MethodGet] != 1 {
		t.Errorf("answered /graphql requests by method: %v; want one POST and one GET (%+v)", methods, got.Requests)
	}
	// Two queries of one resource, each its own request: the resource is
	// fetched once per request (the response cache may answer the second).
	if n := hooks.Counts()["GET /resources/v1/{id}"]; n < 1 || n > 2 {
		t.Errorf("GET /resources/v1/{id} counted %d times, want 1 or 2", n)
	}
}

// TestBrowserPlaygroundDeferredParts: in chromium, the playground runs a
// query with two parts deferred: the response comes in parts
// (multipart/mixed), the result pane shows the merged result (the deferred
// lists filled in), and the waterfall marks each call with the part it
// served, the calls of each part counted, all of them the REST service's.
func TestBrowserPlaygroundDeferredParts(t *testing.T) {
	node := requireBrowser(t)
	base, st := startDemo(t, func(c *stack.Config) { c.CacheTTL = "" })
	hooks := st.Embedded.Server.Hooks()
	hooks.Reset()
	loc := st.Embedded.Manifest.IDs["location"][0]
	query := `query Dashboard { location(id: "` + loc + `") { id products { id title }
  ... @defer(label: "transactions") { transactions(first: 10) { nodes { id booking { resource { id capacity } } } } }
  ... @defer(label: "creditNotes") { creditNotes(first: 5) { nodes { id invoice { id number } } } } } }`
	var got struct {
		browserErrors
		ContentType string
		Result      struct {
			Data struct {
				Location struct {
					Products     []any
					Transactions *struct{ Nodes []any }
					CreditNotes  *struct{ Nodes []any }
				}
			}
		}
		Count int
		Parts []struct {
			Part  string
			Calls int
		}
		Rows []struct{ Route, Part string }
	}
	runNodeJSON(t, node, "playground_defer.mjs", &got, base+"/", query)
	got.browserErrors.check(t)
	if !strings.HasPrefix(got.ContentType, "multipart/mixed") {
		t.Errorf("response Content-Type %q, want multipart/mixed", got.ContentType)
	}
	l := got.Result.Data.Location
	if len(l.Products) == 0 || l.Transactions == nil || len(l.Transactions.Nodes) == 0 || l.CreditNotes == nil || len(l.CreditNotes.Nodes) == 0 {
		t.Errorf("the result pane shows %+v", got.Result)
	}
	perPart := map[string]int{}
	for _, r := range got.Rows {
		perPart[r.Part]++
	}
	for _, p := range got.Parts {
		if perPart[p.Part] != p.Calls {
			t.Errorf("part %s: %d calls counted, %d rows", p.Part, p.Calls, perPart[p.Part])
		}
	}
	if len(got.Parts) != 3 || perPart["initial"] == 0 || perPart["transactions"] == 0 || perPart["creditNotes"] == 0 {
		t.Errorf("the waterfall's parts %+v, rows per part %v", got.Parts, perPart)
	}
	if _, total := hooks.Counts(), hooks.Total(); int(total) != got.Count || len(got.Rows) != got.Count {
		t.Errorf("the waterfall shows %d calls (%d rows), the REST service counted %d", got.Count, len(got.Rows), total)
	}
}

// TestBrowserPlaygroundSubscription: the demo playground's second tab is
// the example subscription, on the demo activity's location; run in GraphiQL
// at 1280x800 it receives, over the page's WebSocket and within its
// Content-Security-Policy, the orders the demo activity makes (no test
// endpoint involved), and its result pane keeps them as a history, newest
// first, each numbered, instead of each event replacing the last.
func TestBrowserPlaygroundSubscription(t *testing.T) {
	node := requireBrowser(t)
	base, st := startDemo(t, func(c *stack.Config) {
		c.Live.Interval, c.Live.AllowFastPolls = 100*time.Millisecond, true
		c.DemoTestEndpoints = false
	})
	m := st.Embedded.Manifest
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		st.Embedded.Server.NewActivity(m.ActivityLocation()).Run(ctx, 100*time.Millisecond)
	}()
	t.Cleanup(func() { stop(); <-done })
	type event struct {
		N          int    `json:"n"`
		ReceivedAt string `json:"receivedAt"`
		Data       struct {
			OrderEvents struct {
				Kind string
				Node struct {
					Number float64
					Status string
				}
			}
		} `json:"data"`
	}
	var got struct {
		browserErrors
		Tabs int
		Pane struct {
			EventsReceived int     `json:"eventsReceived"`
			Events         []event `json:"events"`
		}
		Rows []struct {
			Route, Part string
			Status      int
			Poll        bool
		}
	}
	runNodeJSON(t, node, "playground_live.mjs", &got, base+"/")
	got.browserErrors.check(t)
	if got.Tabs != 2 {
		t.Errorf("%d tabs, want the query and the example subscription", got.Tabs)
	}
	p := got.Pane
	if p.EventsReceived < 2 || len(p.Events) != p.EventsReceived {
		t.Fatalf("the result pane lists %d events of %d received, want every one and at least two: %+v", len(p.Events), p.EventsReceived, p)
	}
	numbers := map[float64]bool{}
	for i, e := range p.Events {
		o := e.Data.OrderEvents
		if e.N != p.EventsReceived-i || e.ReceivedAt == "" {
			t.Errorf("event %d of the pane is numbered %d (received %q), want %d: newest first", i, e.N, e.ReceivedAt, p.EventsReceived-i)
		}
		if o.Kind != "CREATED" || o.Node.Status != "NEW" || numbers[o.Node.Number] {
			t.Errorf("event %d: %+v, want a CREATED event of a new order (each its own number)", i, o)
		}
		numbers[o.Node.Number] = true
	}
	// The waterfall of the last event: the poll that saw it, first, then
	// the load of its order's product (refundPolicy is not embedded).
	if len(got.Rows) != 2 || got.Rows[0].Route != "GET /shop/orders/v1" || got.Rows[0].Part != "poll" || !got.Rows[0].Poll || got.Rows[0].Status != 200 ||
		got.Rows[1].Route != "GET /shop/products/v1" || got.Rows[1].Part != "" || got.Rows[1].Poll {
		t.Errorf("waterfall rows %+v, want the order poll (part poll) then the product list of the location", got.Rows)
	}
}

// checkScreenshot: the file at path is a PNG of width x height.
func checkScreenshot(t *testing.T, path string, width, height int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	defer f.Close()
	c, err := png.DecodeConfig(f)
	if err != nil || c.Width != width || c.Height != height {
		t.Errorf("screenshot %s: %dx%d (%v), want a %dx%d PNG", path, c.Width, c.Height, err, width, height)
	}
}
