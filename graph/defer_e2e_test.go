package graph_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"github.com/workspacenet/facade/restclient"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restserver/hooks"
	"github.com/workspacenet/facade/stack"
)

// deferredRoot defers a root field and, inside it, a nested part.
const deferredRoot = `query Root($locationId: ID!) {
  location(id: $locationId) { id products { id title } }
  ... @defer(label: "orders") {
    orders(locationId: $locationId, first: 5) {
      nodes { id number ... @defer(label: "product") { product { id title } } }
    }
  }
}`

// deferredNested defers, on each order of a deferred list, a part that
// holds another on the same object.
const deferredNested = `query Nested($locationId: ID!) {
  location(id: $locationId) {
    id
    ... @defer(label: "orders") {
      orders(first: 5) {
        nodes { id ... @defer(label: "status") { status ... @defer(label: "product") { product { id title visibility } } } }
      }
    }
  }
}`

var deferDirective = regexp.MustCompile(`@defer\([^)]*\)`)

// withoutDefer is query with its @defer directives removed: the same result
// in one response.
func withoutDefer(query string) string { return deferDirective.ReplaceAllString(query, "") }

const (
	acceptDefer2022 = "multipart/mixed; deferSpec=20220824, application/json; q=0.9"
	acceptV02       = "multipart/mixed; incrementalSpec=v0.2, application/json; q=0.9"
	acceptSSE       = "text/event-stream"
	acceptSSEV02    = "text/event-stream; incrementalSpec=v0.2"
)

// incrementalRequest posts query with accept and the trace header.
func incrementalRequest(t *testing.T, env *testenv.Env, accept, query string, vars map[string]any) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequest(http.MethodPost, env.FacadeURL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = gqlclient.Credentials(env.Bearer().Authorization, env.Bearer().NetworkID)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	req.Header.Set(graph.TraceHeader, "1")
	resp, err := env.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// parts reads the payloads of an incremental response one at a time (nil
// at the end): multipart/mixed or text/event-stream, or one ordinary JSON
// response as its only payload.
func parts(t *testing.T, resp *http.Response) func() map[string]any {
	t.Helper()
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("Content-Type %q: %v", resp.Header.Get("Content-Type"), err)
	}
	decode := func(b []byte) map[string]any {
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("payload %q: %v", b, err)
		}
		return v
	}
	switch mt {
	case "multipart/mixed":
		mr := multipart.NewReader(resp.Body, params["boundary"])
		return func() map[string]any {
			p, err := mr.NextPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				t.Fatalf("next part: %v", err)
			}
			b, err := io.ReadAll(p)
			if err != nil {
				t.Fatalf("part: %v", err)
			}
			return decode(b)
		}
	case "text/event-stream":
		br := bufio.NewReader(resp.Body)
		return func() map[string]any {
			event := ""
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return nil
				}
				line = strings.TrimRight(line, "\n")
				switch {
				case strings.HasPrefix(line, "event: "):
					event = strings.TrimPrefix(line, "event: ")
				case strings.HasPrefix(line, "data: ") && event == "next":
					return decode([]byte(strings.TrimPrefix(line, "data: ")))
				case line == "" && event == "complete":
					return nil
				}
			}
		}
	default:
		done := false
		return func() map[string]any {
			if done {
				return nil
			}
			done = true
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			return decode(b)
		}
	}
}

// merged is the result the payloads of an incremental response make, as a
// client merges them (either format), with the errors of every part and the
// last payload's extensions.
type merged struct {
	data       any
	errors     []any
	extensions map[string]any
	payloads   int
}

func mergeParts(t *testing.T, next func() map[string]any) merged {
	t.Helper()
	var m merged
	pending := map[string][]any{}
	for p := next(); p != nil; p = next() {
		m.payloads++
		if d, ok := p["data"]; ok {
			m.data = d
		}
		if e, ok := p["errors"].([]any); ok {
			m.errors = append(m.errors, e...)
		}
		for _, x := range asList(p["pending"]) {
			pe := x.(map[string]any)
			pending[pe["id"].(string)] = pe["path"].([]any)
		}
		for _, x := range asList(p["incremental"]) {
			inc := x.(map[string]any)
			path, _ := inc["path"].([]any)
			if id, ok := inc["id"].(string); ok {
				path = pending[id]
				if path == nil {
					t.Fatalf("incremental id %s was not pending", id)
				}
			}
			m.data = mergeAt(m.data, path, inc["data"])
			if e, ok := inc["errors"].([]any); ok {
				m.errors = append(m.errors, e...)
			}
		}
		for _, x := range asList(p["completed"]) {
			if e, ok := x.(map[string]any)["errors"].([]any); ok {
				m.errors = append(m.errors, e...)
			}
		}
		if ext, ok := p["extensions"].(map[string]any); ok {
			m.extensions = ext
		}
		if hn, ok := p["hasNext"].(bool); ok && !hn {
			if p := next(); p != nil {
				t.Fatalf("a payload after hasNext false: %v", p)
			}
			break
		}
	}
	return m
}

// sameData compares two results but for their cursors (sealed anew for
// every response).
// mustSameData fails t unless got is want (cursors aside), showing both.
func mustSameData(t *testing.T, what string, got, want any) {
	t.Helper()
	if !sameData(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("%s\ngot  %.2000s\nwant %.2000s", what, g, w)
	}
}

// expectSameCalls reports an error unless env's upstream calls since its
// last reset are wantCalls (wantTotal in all): those of the same query
// without incremental delivery.
func expectSameCalls(t *testing.T, env *testenv.Env, with, without string, wantCalls map[string]int64, wantTotal int64) {
	t.Helper()
	if calls, total := env.Calls(); total != wantTotal || !reflect.DeepEqual(calls, wantCalls) {
		t.Errorf("upstream calls %s:\n%s%s:\n%s", with, testenv.FormatCalls(calls), without, testenv.FormatCalls(wantCalls))
	}
}

func sameData(a, b any) bool {
	return reflect.DeepEqual(withoutCursors(a), withoutCursors(b))
}

func withoutCursors(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k != "endCursor" && k != "startCursor" && k != "cursor" {
				out[k] = withoutCursors(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutCursors(e)
		}
		return out
	}
	return v
}

// mergeAt merges src into the object at path of dst.
func mergeAt(dst any, path []any, src any) any {
	if len(path) == 0 {
		return deepMerge(dst, src)
	}
	switch d := dst.(type) {
	case map[string]any:
		k := path[0].(string)
		d[k] = mergeAt(d[k], path[1:], src)
		return d
	case []any:
		i := int(path[0].(float64))
		d[i] = mergeAt(d[i], path[1:], src)
		return d
	}
	return dst
}

// prepend returns a reader of first, then of next's payloads.
func prepend(first map[string]any, next func() map[string]any) func() map[string]any {
	return func() map[string]any {
		if p := first; p != nil {
			first = nil
			return p
		}
		return next()
	}
}

// leftOut reports whether the member at the dotted path of data is absent
// ("*" steps into every element of a list; a null or absent parent holds
// nothing).
func leftOut(data any, path string) bool {
	step, rest, more := strings.Cut(path, ".")
	switch d := data.(type) {
	case map[string]any:
		v, ok := d[step]
		if !ok {
			return true
		}
		return more && leftOut(v, rest)
	case []any:
		if step != "*" {
			return false
		}
		for _, e := range d {
			if !leftOut(e, rest) {
				return false
			}
		}
		return true
	}
	return true
}

func deepMerge(dst, src any) any {
	d, ok1 := dst.(map[string]any)
	s, ok2 := src.(map[string]any)
	if !ok1 || !ok2 {
		return src
	}
	for k, v := range s {
		d[k] = deepMerge(d[k], v)
	}
	return d
}

// TestDeferEveryFormatGivesTheWholeResult: the dashboard with two parts
// deferred, and a query with a root field and a nested part deferred, come
// back in several payloads in each format (multipart/mixed 2022 and v0.2,
// SSE in both), merge into the result of the query without @defer, make
// the same upstream calls, and carry the call report, each call marked with
// its part, in the last payload only.
func TestDeferEveryFormatGivesTheWholeResult(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	vars := map[string]any{"locationId": env.ID(t, "location", 0)}
	for _, q := range []struct {
		name, query string
		labels      []string
		leftOut     []string // absent from the first payload (leftOut's paths)
	}{
		{"dashboard", queries.DeferredDashboard, []string{"initial", "transactions", "creditNotes"}, []string{"location.transactions", "location.creditNotes"}},
		{"links", queries.DeferredLinks, []string{"initial", "links", "creditNotes"},
			[]string{"location.transactions.nodes.*.booking", "location.transactions.nodes.*.order", "location.transactions.nodes.*.ticket", "location.creditNotes"}},
		// The orders' products come from the product list the initial
		// payload loaded: the nested part makes no call.
		{"root", deferredRoot, []string{"initial", "orders"}, []string{"orders"}},
		// Parts nested in parts on the same object: "status" makes no call.
		{"nested", deferredNested, []string{"orders", "product"}, []string{"location.orders"}},
	} {
		env.ResetCalls()
		plain := incrementalRequest(t, env, "application/json", withoutDefer(q.query), vars)
		want := mergeParts(t, parts(t, plain))
		if len(want.errors) > 0 || want.data == nil {
			t.Fatalf("%s without @defer: %v", q.name, want.errors)
		}
		wantCalls, wantTotal := env.Calls()
		for _, accept := range []string{acceptDefer2022, acceptV02, acceptSSE, acceptSSEV02} {
			t.Run(q.name+" "+accept, func(t *testing.T) {
				env.ResetCalls()
				next := parts(t, incrementalRequest(t, env, accept, q.query, vars))
				first := next()
				for _, path := range q.leftOut {
					if !leftOut(first["data"], path) {
						b, _ := json.Marshal(first["data"])
						t.Errorf("the first payload has %s (a deferred field): %.600s", path, b)
					}
				}
				got := mergeParts(t, prepend(first, next))
				if got.payloads < 2 {
					t.Fatalf("%d payload(s), want the initial one and deferred parts", got.payloads)
				}
				if len(got.errors) > 0 {
					t.Fatalf("errors: %v", got.errors)
				}
				mustSameData(t, "merged result differs from the query without @defer", got.data, want.data)
				expectSameCalls(t, env, "with @defer", "without", wantCalls, wantTotal)
				rep, _ := got.extensions["upstream"].(map[string]any)
				seen := map[string]bool{}
				for _, c := range asList(rep["calls"]) {
					seen[c.(map[string]any)["part"].(string)] = true
				}
				for _, l := range q.labels {
					if !seen[l] {
						t.Errorf("no call of the report is marked %q: %v", l, seen)
					}
				}
				if len(seen) != len(q.labels) {
					t.Errorf("the report's parts %v, want %v", seen, q.labels)
				}
			})
		}
	}
}

// TestDeferFirstPayloadBeforeDeferredCalls: under the real API's 10/s, the
// first payload comes while the deferred parts' upstream calls are held at
// the upstream: at the moment it is read, the local service has counted
// exactly the initial payload's calls. Released, the parts follow and the
// total is the query's without @defer.
func TestDeferFirstPayloadBeforeDeferredCalls(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	t.Cleanup(open)
	deferredRoute := regexp.MustCompile(`^/(transactions|billing|resources|events)/`)
	env2 := testenv.New(t, testenv.Options{
		Config: func(c *stack.Config) {
			c.Budget = budget.Config{RPS: budget.DefaultRPS, Burst: budget.DefaultBurst}
		},
		OnUpstreamRequest: func(r *http.Request) {
			if deferredRoute.MatchString(r.URL.Path) {
				<-release
			}
		},
	})
	env2.Hooks().SetRateLimit(hooks.RateLimit{PerSecond: 10})
	vars := map[string]any{"locationId": env2.ID(t, "location", 0)}
	env2.ResetCalls()
	next := parts(t, incrementalRequest(t, env2, acceptDefer2022, queries.DeferredDashboard, vars))
	first := next()
	if first["hasNext"] != true {
		t.Fatalf("first payload: %v", first)
	}
	expectCalls(t, env2, calls{restclient.OpListProducts: 1, restclient.OpListOrders: 1})
	open()
	rest := mergeParts(t, next)
	if len(rest.errors) > 0 || rest.payloads < 2 {
		t.Fatalf("deferred parts: %d payloads, errors %v", rest.payloads, rest.errors)
	}
	if _, total := env2.Calls(); total != 18 {
		t.Errorf("%d upstream calls, want the dashboard's 18", total)
	}
	expectPaced(t, env2)
}

// TestDeferredLinksWaitForTheFirstPayload: the dashboard with each
// transaction's links deferred inside the list (booking and ticket are
// plain fields, their resource and event loads beneath them) and its credit
// notes deferred, in each format. The deferred parts' routes are held at the
// upstream until the first payload is read: it comes with the three list
// calls of the initial payload counted, and none of the deferred fields in
// it. Released, the parts merge into the result without @defer, with the
// same calls; the call report marks each call with its part, and every call
// of a part starts after the first payload was written (firstPayloadMs).
// In the 2022 format under the real API's 10/s and the default budget.
func TestDeferredLinksWaitForTheFirstPayload(t *testing.T) {
	deferredRoute := regexp.MustCompile(`^/(billing|resources|events)/`)
	partOf := map[string]string{
		restclient.OpListProducts.Pattern(): "initial", restclient.OpListOrders.Pattern(): "initial", restclient.OpListTransactions.Pattern(): "initial",
		restclient.OpGetResource.Pattern(): "links", restclient.OpGetEvent.Pattern(): "links",
		restclient.OpListCreditNotes.Pattern(): "creditNotes", restclient.OpListInvoiceItems.Pattern(): "creditNotes",
	}
	for _, accept := range []string{acceptDefer2022, acceptV02, acceptSSE, acceptSSEV02} {
		t.Run(accept, func(t *testing.T) {
			paced := accept == acceptDefer2022
			release := make(chan struct{})
			var once sync.Once
			open := func() { once.Do(func() { close(release) }) }
			t.Cleanup(open)
			var hold atomic.Bool
			env := testenv.New(t, testenv.Options{
				Config: func(c *stack.Config) {
					if paced {
						c.Budget = budget.Config{RPS: budget.DefaultRPS, Burst: budget.DefaultBurst}
					}
				},
				OnUpstreamRequest: func(r *http.Request) {
					if hold.Load() && deferredRoute.MatchString(r.URL.Path) {
						select {
						case <-release:
						case <-time.After(20 * time.Second): // a hang guard only
						}
					}
				},
			})
			if paced {
				env.Hooks().SetRateLimit(hooks.RateLimit{PerSecond: 10})
			}
			vars := map[string]any{"locationId": env.ID(t, "location", 0)}
			env.ResetCalls()
			want := mergeParts(t, parts(t, incrementalRequest(t, env, "application/json", withoutDefer(queries.DeferredLinks), vars)))
			wantCalls, wantTotal := env.Calls()
			if len(want.errors) > 0 || wantCalls[restclient.OpGetResource.Pattern()] == 0 || wantCalls[restclient.OpGetEvent.Pattern()] == 0 {
				t.Fatalf("without @defer: calls %v, errors %v", wantCalls, want.errors)
			}

			env.ResetCalls()
			hold.Store(true)
			next := parts(t, incrementalRequest(t, env, accept, queries.DeferredLinks, vars))
			first := next()
			if first["hasNext"] != true {
				t.Fatalf("first payload: %.300v", first)
			}
			expectCalls(t, env, calls{restclient.OpListProducts: 1, restclient.OpListOrders: 1, restclient.OpListTransactions: 1})
			for _, path := range []string{"location.transactions.nodes.*.booking", "location.transactions.nodes.*.order", "location.transactions.nodes.*.ticket", "location.creditNotes"} {
				if !leftOut(first["data"], path) {
					t.Errorf("the first payload has %s", path)
				}
			}
			if n := len(asList(get(first["data"], "location.transactions.nodes"))); n != len(asList(get(want.data, "location.transactions.nodes"))) {
				t.Errorf("the first payload has %d transactions", n)
			}
			open()
			got := mergeParts(t, prepend(first, next))
			if len(got.errors) > 0 {
				t.Fatalf("errors: %v", got.errors)
			}
			mustSameData(t, "merged result differs from the query without @defer", got.data, want.data)
			expectSameCalls(t, env, "with @defer", "without", wantCalls, wantTotal)
			rep, _ := got.extensions["upstream"].(map[string]any)
			firstAt, ok := rep["firstPayloadMs"].(float64)
			if !ok {
				t.Fatalf("no firstPayloadMs in the report: %.300v", rep)
			}
			for _, x := range asList(rep["calls"]) {
				c := x.(map[string]any)
				route := c["method"].(string) + " " + c["path"].(string)
				if c["part"] != partOf[route] {
					t.Errorf("%s marked %v, want %q", route, c["part"], partOf[route])
				}
				if at := c["startMs"].(float64); c["part"] != "initial" && at < firstAt {
					t.Errorf("%s of part %v started at %.3f ms, before the first payload was written (%.3f ms)", route, c["part"], at, firstAt)
				}
			}
			if paced {
				expectPaced(t, env)
			}
		})
	}
}

// TestDeferIfFalseIsOnePayload: @defer(if: false), and a client that accepts
// no incremental format, get one ordinary response with the whole result.
func TestDeferIfFalseIsOnePayload(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	vars := map[string]any{"locationId": env.ID(t, "location", 0)}
	want := mergeParts(t, parts(t, incrementalRequest(t, env, "application/json", withoutDefer(queries.DeferredDashboard), vars)))
	notDeferred := strings.ReplaceAll(queries.DeferredDashboard, `@defer(label: "`, `@defer(if: false, label: "`)
	for _, c := range []struct{ name, accept, query string }{
		{"if false", acceptDefer2022, notDeferred},
		{"if false v0.2", acceptV02, notDeferred},
		{"JSON client", "application/graphql-response+json", queries.DeferredDashboard},
		{"JSON preferred by quality", "application/graphql-response+json, multipart/mixed;q=0.1", queries.DeferredDashboard},
		{"no Accept", "", queries.DeferredDashboard},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := incrementalRequest(t, env, c.accept, c.query, vars)
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/") {
				t.Fatalf("Content-Type %q, want one JSON response", ct)
			}
			got := mergeParts(t, parts(t, resp))
			if got.payloads != 1 || len(got.errors) > 0 || !sameData(got.data, want.data) {
				t.Fatalf("%d payloads, errors %v, same data: %v", got.payloads, got.errors, sameData(got.data, want.data))
			}
		})
	}
}

// TestDeferFailedPartCarriesItsError: a deferred part whose upstream call
// fails carries the error, with its path and code; the other parts arrive.
func TestDeferFailedPartCarriesItsError(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	env.Hooks().SetFault(restclient.OpListCreditNotes.Pattern(), hooks.Fault{Kind: hooks.Fault500, Rate: 1})
	vars := map[string]any{"locationId": env.ID(t, "location", 0)}
	for _, accept := range []string{acceptDefer2022, acceptV02} {
		t.Run(accept, func(t *testing.T) {
			next := parts(t, incrementalRequest(t, env, accept, queries.DeferredDashboard, vars))
			var partErrors []any
			sawTransactions := false
			for p := next(); p != nil; p = next() {
				if len(asList(p["errors"])) > 0 {
					t.Errorf("errors in a top-level payload: %v", p["errors"])
				}
				for _, x := range append(asList(p["incremental"]), asList(p["completed"])...) {
					inc := x.(map[string]any)
					partErrors = append(partErrors, asList(inc["errors"])...)
					if d, ok := inc["data"].(map[string]any); ok && d["transactions"] != nil {
						sawTransactions = true
					}
				}
				if p["hasNext"] == false {
					break
				}
			}
			if !sawTransactions {
				t.Error("the transactions part did not arrive")
			}
			if len(partErrors) != 1 {
				t.Fatalf("errors of the parts: %v, want the credit notes' one", partErrors)
			}
			e := partErrors[0].(map[string]any)
			path, _ := json.Marshal(e["path"])
			code, _ := e["extensions"].(map[string]any)["code"].(string)
			if string(path) != `["location","creditNotes"]` || code == "" {
				t.Errorf("error %v: want path [location creditNotes] and a code", e)
			}
		})
	}
}

// TestDeferHoldsAdmissionAndCapsCallsOverAllParts: the operation is one for
// admission and the call cap. While a deferred dashboard (cost 535) has sent
// its first payload and its deferred parts' calls are held at the upstream,
// its units are still held: another of the same cost does not fit in 600
// units and is refused OVERLOADED; once the first has sent its last part, the
// other runs. With a cap of 5 calls, the deferred parts make the 3 the
// initial payload left them, and the fields beyond carry
// REQUEST_LIMIT_EXCEEDED in their parts.
func TestDeferHoldsAdmissionAndCapsCallsOverAllParts(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	t.Cleanup(open)
	var hold atomic.Bool
	deferredRoute := regexp.MustCompile(`^/(transactions|billing|resources|events)/`)
	env := testenv.New(t, testenv.Options{
		GraphOpts: func(g *graph.Options) {
			g.MaxCostInFlight, g.ClientCostShare, g.AdmissionWait = 600, 0, 0
		},
		OnUpstreamRequest: func(r *http.Request) {
			if hold.Load() && deferredRoute.MatchString(r.URL.Path) {
				<-release
			}
		},
	})
	vars := map[string]any{"locationId": env.ID(t, "location", 0)}
	hold.Store(true)
	next := parts(t, incrementalRequest(t, env, acceptDefer2022, queries.DeferredDashboard, vars))
	if first := next(); first["hasNext"] != true {
		t.Fatalf("first payload: %v", first)
	}
	r := env.Query(t, env.Other(t), queries.Dashboard, vars)
	if r.Status != http.StatusServiceUnavailable || len(r.Errors) != 1 || r.Errors[0].Code() != errcode.Overloaded {
		t.Errorf("a second dashboard while the first streams: HTTP %d %s", r.Status, r.Raw)
	}
	open()
	if rest := mergeParts(t, next); len(rest.errors) > 0 {
		t.Fatalf("deferred parts: %v", rest.errors)
	}
	hold.Store(false)
	// The units come back when the handler returns, just after the last
	// part is written: the second is admitted then (refusals cost nothing).
	testenv.WaitFor(t, "the second dashboard admitted after the first's last part", func() bool {
		r := env.Query(t, env.Other(t), queries.Dashboard, vars)
		if r.Status != http.StatusOK && (len(r.Errors) != 1 || r.Errors[0].Code() != errcode.Overloaded) {
			t.Fatalf("HTTP %d %.300s", r.Status, r.Raw)
		}
		return r.Status == http.StatusOK && len(r.Errors) == 0
	})

	capped := testenv.New(t, testenv.Options{GraphOpts: func(g *graph.Options) { g.MaxUpstreamCalls = 5 }})
	capped.ResetCalls()
	got := mergeParts(t, parts(t, incrementalRequest(t, capped, acceptDefer2022, queries.DeferredDashboard, vars)))
	if _, total := capped.Calls(); total != 5 {
		t.Errorf("%d upstream calls, want the cap's 5", total)
	}
	if len(got.errors) == 0 {
		t.Fatal("no error for the fields beyond the cap")
	}
	for _, e := range got.errors {
		em := e.(map[string]any)
		code, _ := em["extensions"].(map[string]any)["code"].(string)
		path, _ := json.Marshal(em["path"])
		if code != errcode.RequestLimitExceeded || !strings.HasPrefix(string(path), `["location","transactions"`) && !strings.HasPrefix(string(path), `["location","creditNotes"`) {
			t.Errorf("error %v: want REQUEST_LIMIT_EXCEEDED in a deferred part", em)
		}
	}
}

// TestDeferV02AnnouncesPendingInTheInitialPayload: in the incrementalSpec=v0.2
// format, the first payload announces (pending) every deferred part known
// when the initial result is complete: the dashboard's two, at the
// location, with their labels; a part nested in a deferred root field is
// announced in the payload that brings the root field (one per order). Every
// incremental entry names a pending id, every id is completed exactly once,
// and nothing is pending at the end; merged, the result is the query's
// without @defer.
func TestDeferV02AnnouncesPendingInTheInitialPayload(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	vars := map[string]any{"locationId": env.ID(t, "location", 0)}
	for _, c := range []struct {
		name, query string
		initial     []string // the first payload's pending: path and label
		later       int      // parts announced after the first payload
	}{
		{"dashboard", queries.DeferredDashboard, []string{`["location"] transactions`, `["location"] creditNotes`}, 0},
		{"root", deferredRoot, []string{`[] orders`}, 5},
	} {
		want := mergeParts(t, parts(t, incrementalRequest(t, env, "application/json", withoutDefer(c.query), vars)))
		for _, accept := range []string{acceptV02, acceptSSEV02} {
			t.Run(c.name+" "+accept, func(t *testing.T) {
				var payloads []map[string]any
				next := parts(t, incrementalRequest(t, env, accept, c.query, vars))
				for p := next(); p != nil; p = next() {
					payloads = append(payloads, p)
				}
				if testing.Verbose() {
					for _, p := range payloads {
						b, _ := json.Marshal(p)
						t.Logf("%.400s", b)
					}
				}
				var initial []string
				for _, x := range asList(payloads[0]["pending"]) {
					pe := x.(map[string]any)
					path, _ := json.Marshal(pe["path"])
					initial = append(initial, string(path)+" "+pe["label"].(string))
				}
				slices.Sort(initial)
				slices.Sort(c.initial)
				if !slices.Equal(initial, c.initial) {
					t.Errorf("the first payload's pending: %q, want %q", initial, c.initial)
				}
				pending, completed, later := map[string]bool{}, map[string]int{}, 0
				announcedIn := map[string]int{}
				for i, p := range payloads {
					for _, x := range asList(p["pending"]) {
						id := x.(map[string]any)["id"].(string)
						if pending[id] {
							t.Errorf("id %s announced twice", id)
						}
						pending[id] = true
						announcedIn[id] = i
						if i > 0 {
							later++
						}
					}
					for _, x := range asList(p["incremental"]) {
						id, _ := x.(map[string]any)["id"].(string)
						if !pending[id] || completed[id] > 0 {
							t.Errorf("payload %d: incremental id %q not pending: %v", i, id, p)
						}
						if announcedIn[id] == i {
							// Known before: announced by the payload that
							// brought its parent (or the first).
							t.Errorf("payload %d: id %s announced with its own data", i, id)
						}
					}
					for _, x := range asList(p["completed"]) {
						id, _ := x.(map[string]any)["id"].(string)
						if !pending[id] {
							t.Errorf("payload %d: completed id %q not pending", i, id)
						}
						completed[id]++
					}
				}
				for id := range pending {
					if completed[id] != 1 {
						t.Errorf("id %s completed %d times", id, completed[id])
					}
				}
				if later != c.later {
					t.Errorf("%d parts announced after the first payload, want %d", later, c.later)
				}
				i := 0
				got := mergeParts(t, func() map[string]any {
					if i == len(payloads) {
						return nil
					}
					i++
					return payloads[i-1]
				})
				if len(got.errors) > 0 || !sameData(got.data, want.data) {
					t.Errorf("merged: errors %v, same data %v", got.errors, sameData(got.data, want.data))
				}
			})
		}
	}
}

// streamedTransactions streams a location's transactions after the first
// two, each with its booking's resource (one call per distinct resource).
const streamedTransactions = `query Streamed($locationId: ID!) {
  location(id: $locationId) {
    id
    transactions(first: 20) {
      nodes @stream(initialCount: 2, label: "more") { id amount booking { resource { id capacity } } }
      pageInfo { hasNextPage }
    }
  }
}`

// TestStreamConnectionNodes: @stream on a connection's nodes gives the first
// initialCount nodes (their links loaded) in the first payload and the
// others in a later one, which merges (appended) into the result without
// @stream, with the same calls, in both formats; a client that accepts
// neither gets one response.
func TestStreamConnectionNodes(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	vars := map[string]any{"locationId": env.ID(t, "location", 0)}
	env.ResetCalls()
	plain := regexp.MustCompile(`@stream\([^)]*\)`).ReplaceAllString(streamedTransactions, "")
	want := mergeParts(t, parts(t, incrementalRequest(t, env, "application/json", plain, vars)))
	_, wantTotal := env.Calls()
	if len(want.errors) > 0 || len(asList(get(want.data, "location.transactions.nodes"))) != 20 {
		t.Fatalf("without @stream: %v", want.errors)
	}
	for _, accept := range []string{acceptDefer2022, acceptV02, acceptSSE} {
		t.Run(accept, func(t *testing.T) {
			env.ResetCalls()
			next := parts(t, incrementalRequest(t, env, accept, streamedTransactions, vars))
			first := next()
			if n := len(asList(get(first["data"], "location.transactions.nodes"))); n != 2 || first["hasNext"] != true {
				t.Fatalf("first payload: %d nodes, hasNext %v", n, first["hasNext"])
			}
			if accept == acceptV02 {
				// The stream is announced in the first payload.
				pe, _ := json.Marshal(first["pending"])
				if string(pe) != `[{"id":"0","label":"more","path":["location","transactions","nodes"]}]` {
					t.Errorf("first payload's pending %s", pe)
				}
			}
			got, ext := mergeStream(t, first, next)
			rep, _ := ext["upstream"].(map[string]any)
			seen := map[string]int{}
			for _, c := range asList(rep["calls"]) {
				seen[c.(map[string]any)["part"].(string)]++
			}
			if seen["initial"] == 0 || seen["more"] == 0 || len(seen) != 2 {
				t.Errorf("the report's calls per part: %v, want initial and more", seen)
			}
			mustSameData(t, "merged", got, want.data)
			if _, total := env.Calls(); total != wantTotal {
				t.Errorf("%d calls with @stream, %d without", total, wantTotal)
			}
		})
	}
	one := mergeParts(t, parts(t, incrementalRequest(t, env, "application/json", streamedTransactions, vars)))
	if one.payloads != 1 || !sameData(one.data, want.data) {
		t.Errorf("a JSON client: %d payloads", one.payloads)
	}
}

// mergeStream merges the payloads after first, @stream's items appended to
// their list (2022: at path's index; v0.2: to the pending path).
func mergeStream(t *testing.T, first map[string]any, next func() map[string]any) (data any, extensions map[string]any) {
	t.Helper()
	data = first["data"]
	pending := map[string][]any{}
	for _, x := range asList(first["pending"]) {
		pe := x.(map[string]any)
		pending[pe["id"].(string)] = pe["path"].([]any)
	}
	for p := next(); p != nil; p = next() {
		for _, x := range asList(p["pending"]) {
			pe := x.(map[string]any)
			pending[pe["id"].(string)] = pe["path"].([]any)
		}
		for _, x := range asList(p["incremental"]) {
			inc := x.(map[string]any)
			if e := asList(inc["errors"]); len(e) > 0 {
				t.Fatalf("errors: %v", e)
			}
			if d, ok := inc["data"]; ok { // a @defer inside the items
				path, _ := inc["path"].([]any)
				if id, ok := inc["id"].(string); ok {
					path = pending[id]
				}
				data = mergeAt(data, path, d)
				continue
			}
			items := asList(inc["items"])
			if items == nil {
				t.Fatalf("not a stream part: %v", inc)
			}
			var listPath []any
			if id, ok := inc["id"].(string); ok {
				listPath = pending[id]
			} else {
				path := inc["path"].([]any)
				listPath = path[:len(path)-1]
			}
			parent := data
			for _, k := range listPath[:len(listPath)-1] {
				parent = parent.(map[string]any)[k.(string)]
			}
			key := listPath[len(listPath)-1].(string)
			m := parent.(map[string]any)
			m[key] = append(asList(m[key]), items...)
		}
		if ext, ok := p["extensions"].(map[string]any); ok {
			extensions = ext
		}
		if p["hasNext"] == false {
			break
		}
	}
	return data, extensions
}

// TestDeferResponseSizeCapOverAllParts: -max-response-bytes bounds the data
// of all the payloads of an operation together. With a cap above each
// payload of the deferred dashboard but below their sum, the first payload
// comes whole, and the part that brings the sum above the cap is replaced
// by the last payload: RESPONSE_TOO_LARGE in that part (v0.2: every part
// still open completed with it), no more data after it, the response ended
// cleanly. An initial payload above the cap alone is the refusal, in one
// ordinary response.
func TestDeferResponseSizeCapOverAllParts(t *testing.T) {
	measure := testenv.New(t, testenv.Options{})
	vars := map[string]any{"locationId": measure.ID(t, "location", 0)}
	sizes := map[string]int{}
	next := parts(t, incrementalRequest(t, measure, acceptDefer2022, queries.DeferredDashboard, vars))
	for p := next(); p != nil; p = next() {
		if d, ok := p["data"]; ok {
			b, _ := json.Marshal(d)
			sizes["initial"] = len(b)
		}
		for _, x := range asList(p["incremental"]) {
			b, _ := json.Marshal(x.(map[string]any)["data"])
			sizes[x.(map[string]any)["label"].(string)] = len(b)
		}
		if p["hasNext"] == false {
			break
		}
	}
	largest := max(sizes["initial"], sizes["transactions"], sizes["creditNotes"])
	sum := sizes["initial"] + sizes["transactions"] + sizes["creditNotes"]
	// Below the sum of the initial payload and the transactions, above the
	// initial payload and the credit notes together.
	limit := sizes["initial"] + sizes["transactions"] - 1000
	if largest+500 > limit || sizes["initial"]+sizes["creditNotes"]+500 > limit {
		t.Fatalf("the dashboard's sizes %v (sum %d) leave no room for the test's cap %d", sizes, sum, limit)
	}
	env := testenv.New(t, testenv.Options{GraphOpts: func(g *graph.Options) { g.MaxResponseBytes = limit }})
	for _, accept := range []string{acceptDefer2022, acceptV02, acceptSSEV02} {
		t.Run(accept, func(t *testing.T) {
			next := parts(t, incrementalRequest(t, env, accept, queries.DeferredDashboard, vars))
			first := next()
			if first["hasNext"] != true || get(first["data"], "location.orders") == nil {
				t.Fatalf("first payload: %.300v", first)
			}
			open := map[string]bool{}
			for _, x := range asList(first["pending"]) {
				open[x.(map[string]any)["id"].(string)] = true
			}
			var tooLarge int
			for p := next(); p != nil; p = next() {
				for _, x := range asList(p["incremental"]) {
					inc := x.(map[string]any)
					if d, ok := inc["data"].(map[string]any); ok && d["transactions"] != nil {
						t.Errorf("the transactions part came whole: the sum of the parts is above the cap")
					}
					for _, e := range asList(inc["errors"]) {
						if e.(map[string]any)["extensions"].(map[string]any)["code"] == errcode.ResponseTooLarge {
							tooLarge++
						}
					}
				}
				for _, x := range asList(p["completed"]) {
					c := x.(map[string]any)
					if !open[c["id"].(string)] {
						t.Errorf("completed id %v not open", c["id"])
					}
					delete(open, c["id"].(string))
					for _, e := range asList(c["errors"]) {
						if e.(map[string]any)["extensions"].(map[string]any)["code"] == errcode.ResponseTooLarge {
							tooLarge++
						}
					}
				}
				if p["hasNext"] == false {
					if tooLarge == 0 {
						b, _ := json.Marshal(p)
						t.Errorf("last payload without RESPONSE_TOO_LARGE: %.500s", b)
					}
					if p := next(); p != nil {
						t.Errorf("a payload after the last: %.300v", p)
					}
					break
				}
				if tooLarge > 0 {
					t.Errorf("RESPONSE_TOO_LARGE in a payload that is not the last: %.300v", p)
				}
			}
			if tooLarge == 0 {
				t.Error("no RESPONSE_TOO_LARGE")
			}
			if len(open) > 0 {
				t.Errorf("ids never completed: %v", open)
			}
		})
	}

	small := testenv.New(t, testenv.Options{GraphOpts: func(g *graph.Options) { g.MaxResponseBytes = sizes["initial"] / 2 }})
	resp := incrementalRequest(t, small, acceptV02, queries.DeferredDashboard, vars)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/") {
		t.Fatalf("initial payload above the cap: Content-Type %q, want one JSON response", ct)
	}
	one := mergeParts(t, parts(t, resp))
	if one.data != nil || len(one.errors) != 1 || one.errors[0].(map[string]any)["extensions"].(map[string]any)["code"] != errcode.ResponseTooLarge {
		t.Errorf("initial payload above the cap: data %.100v, errors %v", one.data, one.errors)
	}
}

// streamedPages streams a connection of several upstream pages (first above
// 100): each later page's transactions, with their bookings' resources.
const streamedPages = `query Pages($locationId: ID!) {
  location(id: $locationId) {
    id
    transactions(first: 250) {
      nodes @stream(initialCount: 5, label: "pages") { id amount booking { resource { id title } } }
    }
  }
}`

// streamedPageEdges is streamedPages on the edges, with their cursors.
var streamedPageEdges = strings.Replace(streamedPages, "nodes @stream(initialCount: 5, label: \"pages\") { id amount booking { resource { id title } } }",
	"edges @stream(initialCount: 5, label: \"pages\") { cursor node { id amount booking { resource { id title } } } }", 1)

// TestStreamFollowsPages: @stream on a connection of several pages sends
// each page's items as soon as that page arrives. The later pages' list
// requests are held at the upstream, released one at a time: the first
// payload (5 items) and the rest of the first page come with one list call
// counted; each later page's items come once that page is released, with
// one more list call counted each. Merged, the result is the query's
// without @stream, with the same calls; on nodes and on edges (with their
// cursors), in both formats.
func TestStreamFollowsPages(t *testing.T) {
	var hold atomic.Bool
	step, done := make(chan struct{}, 4), make(chan struct{})
	t.Cleanup(func() { close(done) })
	env := testenv.New(t, testenv.Options{
		OnUpstreamRequest: func(r *http.Request) {
			if hold.Load() && r.URL.Path == restclient.OpListTransactions.Route && r.URL.Query().Get("nextPageToken") != "" {
				select {
				case <-step:
				case <-done:
				case <-time.After(10 * time.Second): // a hang guard only
				}
			}
		},
	})
	vars := map[string]any{"locationId": env.ID(t, "location", 0)}
	for _, list := range []string{"nodes", "edges"} {
		query := streamedPages
		if list == "edges" {
			query = streamedPageEdges
		}
		streamFollowsPages(t, env, &hold, step, vars, list, query)
	}
}

func streamFollowsPages(t *testing.T, env *testenv.Env, hold *atomic.Bool, step chan struct{}, vars map[string]any, list, query string) {
	env.ResetCalls()
	plain := regexp.MustCompile(`@stream\([^)]*\)`).ReplaceAllString(query, "")
	want := mergeParts(t, parts(t, incrementalRequest(t, env, "application/json", plain, vars)))
	wantCalls, wantTotal := env.Calls()
	total := len(asList(get(want.data, "location.transactions."+list)))
	pages := (total + 99) / 100
	if len(want.errors) > 0 || pages < 2 {
		t.Fatalf("without @stream: %d transactions (want 2 pages or more), errors %v", total, want.errors)
	}
	listCalls := func() int64 { c, _ := env.Calls(); return c[restclient.OpListTransactions.Pattern()] }
	for _, accept := range []string{acceptDefer2022, acceptV02} {
		t.Run(list+" "+accept, func(t *testing.T) {
			env.ResetCalls()
			hold.Store(true)
			defer hold.Store(false)
			next := parts(t, incrementalRequest(t, env, accept, query, vars))
			first := next()
			if n := len(asList(get(first["data"], "location.transactions."+list))); n != 5 || first["hasNext"] != true {
				t.Fatalf("first payload: %d nodes, hasNext %v", n, first["hasNext"])
			}
			if c := listCalls(); c != 1 {
				t.Fatalf("%d list calls when the first payload is read, want 1", c)
			}
			data := first["data"]
			// got appends a payload's items to the list; returns how many.
			got := func(p map[string]any) int {
				n := 0
				for _, x := range asList(p["incremental"]) {
					inc := x.(map[string]any)
					if e := asList(inc["errors"]); len(e) > 0 {
						t.Fatalf("errors: %v", e)
					}
					items := asList(inc["items"])
					m := get(data, "location.transactions").(map[string]any)
					m[list] = append(asList(m[list]), items...)
					n += len(items)
				}
				return n
			}
			sizes := []int{95} // the rest of the first page
			for page := 2; page <= pages; page++ {
				sizes = append(sizes, min(100, total-(page-1)*100))
			}
			for i, n := range sizes {
				if i > 0 {
					step <- struct{}{} // the next page may go
				}
				p := next()
				if p == nil {
					t.Fatalf("payload %d missing", i+2)
				}
				if g := got(p); g != n {
					t.Fatalf("payload %d: %d items, want %d", i+2, g, n)
				}
				if c := listCalls(); c != int64(i+1) {
					t.Fatalf("payload %d read with %d list calls counted, want %d", i+2, c, i+1)
				}
				if last := i == len(sizes)-1; p["hasNext"] != !last {
					t.Fatalf("payload %d: hasNext %v", i+2, p["hasNext"])
				}
			}
			if p := next(); p != nil {
				t.Fatalf("a payload after the last: %v", p)
			}
			mustSameData(t, "merged", data, want.data)
			expectSameCalls(t, env, "with @stream", "without", wantCalls, wantTotal)
		})
	}
}

// streamedDeferred streams transactions with each one's links deferred:
// its order (a resolver field) and its booking (a plain field, its
// resource loaded beneath it).
const streamedDeferred = `query StreamedDeferred($locationId: ID!) {
  location(id: $locationId) {
    id
    transactions(first: 20) {
      nodes @stream(initialCount: 2, label: "more") {
        id amount
        ... @defer(label: "links") { order { product { id title } } booking { resource { id capacity } } }
      }
    }
  }
}`

// TestStreamDeliversDeferInsideItems: a @defer inside streamed items is
// delivered, each item's part after the payload that brings the item (the
// first payload for the first two, the stream's run of the item for the
// others), in each format: the stream's items and the first payload have
// none of the deferred fields; every call of the links starts after the
// first payload was written and is marked "links" (the product list and
// the resources), the stream's own none; merged, the result is the query's
// without @stream and @defer, with the same calls.
func TestStreamDeliversDeferInsideItems(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	vars := map[string]any{"locationId": env.ID(t, "location", 0)}
	env.ResetCalls()
	plain := withoutDefer(regexp.MustCompile(`@stream\([^)]*\)`).ReplaceAllString(streamedDeferred, ""))
	want := mergeParts(t, parts(t, incrementalRequest(t, env, "application/json", plain, vars)))
	wantCalls, wantTotal := env.Calls()
	orders := 0
	for _, n := range asList(get(want.data, "location.transactions.nodes"))[2:] {
		if n.(map[string]any)["order"] != nil {
			orders++
		}
	}
	if len(want.errors) > 0 || orders == 0 {
		t.Fatalf("without @stream: %d later items with an order, errors %v", orders, want.errors)
	}
	for _, accept := range []string{acceptDefer2022, acceptV02, acceptSSE, acceptSSEV02} {
		t.Run(accept, func(t *testing.T) {
			env.ResetCalls()
			read := parts(t, incrementalRequest(t, env, accept, streamedDeferred, vars))
			var payloads []map[string]any
			for p := read(); p != nil; p = read() {
				payloads = append(payloads, p)
			}
			if strings.Contains(accept, "v0.2") {
				checkIDs(t, payloads)
			}
			// Where each item arrives (0: the first payload), and that no
			// links come with it.
			itemIn := map[int]int{}
			pending := map[string][]any{}
			for i, p := range payloads {
				for _, x := range asList(p["pending"]) {
					pe := x.(map[string]any)
					pending[pe["id"].(string)] = pe["path"].([]any)
				}
				if i == 0 {
					for j, n := range asList(get(p["data"], "location.transactions.nodes")) {
						itemIn[j] = 0
						if !leftOut(n, "order") || !leftOut(n, "booking") {
							t.Errorf("first payload: item %d has its deferred links", j)
						}
					}
					continue
				}
				for _, x := range asList(p["incremental"]) {
					inc := x.(map[string]any)
					path, _ := inc["path"].([]any)
					if id, ok := inc["id"].(string); ok {
						path = pending[id]
					}
					if items, ok := inc["items"]; ok {
						from := len(itemIn)
						for j, n := range asList(items) {
							itemIn[from+j] = i
							if !leftOut(n, "order") || !leftOut(n, "booking") {
								t.Errorf("payload %d: item %d has its deferred links", i, from+j)
							}
						}
						continue
					}
					item := int(path[len(path)-1].(float64))
					if at, ok := itemIn[item]; !ok || at >= i {
						t.Errorf("payload %d: the links of item %d before the item", i, item)
					}
				}
			}
			last := payloads[len(payloads)-1]
			rep, _ := last["extensions"].(map[string]any)["upstream"].(map[string]any)
			firstAt, _ := rep["firstPayloadMs"].(float64)
			for _, x := range asList(rep["calls"]) {
				c := x.(map[string]any)
				route := c["method"].(string) + " " + c["path"].(string)
				want := "links"
				if route == restclient.OpListTransactions.Pattern() {
					want = "initial"
				}
				if c["part"] != want || want == "links" && c["startMs"].(float64) < firstAt {
					t.Errorf("%s: part %v at %v ms, want %s (the first payload at %v ms)", route, c["part"], c["startMs"], want, firstAt)
				}
			}
			i := 1
			got, _ := mergeStream(t, payloads[0], func() map[string]any {
				if i == len(payloads) {
					return nil
				}
				i++
				return payloads[i-1]
			})
			mustSameData(t, "merged", got, want.data)
			expectSameCalls(t, env, "with both", "without @stream and @defer", wantCalls, wantTotal)
		})
	}
}

// checkIDs checks the ids of an incrementalSpec=v0.2 response: each
// announced once, each incremental entry's id announced and not completed,
// each completed exactly once.
func checkIDs(t *testing.T, payloads []map[string]any) {
	t.Helper()
	pending, completed := map[string]bool{}, map[string]int{}
	for i, p := range payloads {
		for _, x := range asList(p["pending"]) {
			id := x.(map[string]any)["id"].(string)
			if pending[id] {
				t.Errorf("id %s announced twice", id)
			}
			pending[id] = true
		}
		for _, x := range asList(p["incremental"]) {
			id, _ := x.(map[string]any)["id"].(string)
			if !pending[id] || completed[id] > 0 {
				t.Errorf("payload %d: incremental id %q not pending", i, id)
			}
		}
		for _, x := range asList(p["completed"]) {
			completed[x.(map[string]any)["id"].(string)]++
		}
	}
	for id := range pending {
		if completed[id] != 1 {
			t.Errorf("id %s completed %d times", id, completed[id])
		}
	}
	for id := range completed {
		if !pending[id] {
			t.Errorf("id %s completed, never announced", id)
		}
	}
}

// TestStreamInsideADeferredPart: a list streamed inside a deferred part (a
// deferred fragment, or a deferred root field) comes whole in that part:
// every item, once, in both formats, and the response ends after it.
func TestStreamInsideADeferredPart(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	vars := map[string]any{"locationId": env.ID(t, "location", 0)}
	for name, q := range map[string]string{
		"deferred fragment": `query($locationId: ID!) { location(id: $locationId) { id ... @defer(label: "tx") { transactions(first: 20) { nodes @stream(initialCount: 2) { id amount } } } } }`,
		"deferred root":     `query($locationId: ID!) { ... @defer(label: "tx") { location(id: $locationId) { id transactions(first: 20) { nodes @stream(initialCount: 2) { id amount } } } } }`,
	} {
		plain := withoutDefer(regexp.MustCompile(`@stream\([^)]*\)`).ReplaceAllString(q, ""))
		want := mergeParts(t, parts(t, incrementalRequest(t, env, "application/json", plain, vars)))
		if n := len(asList(get(want.data, "location.transactions.nodes"))); len(want.errors) > 0 || n <= 2 {
			t.Fatalf("%s without @stream and @defer: %d transactions, errors %v", name, n, want.errors)
		}
		for _, accept := range []string{acceptDefer2022, acceptV02} {
			got := mergeParts(t, parts(t, incrementalRequest(t, env, accept, q, vars)))
			if got.payloads < 2 || len(got.errors) > 0 {
				t.Fatalf("%s, %s: %d payloads, errors %v", name, accept, got.payloads, got.errors)
			}
			mustSameData(t, name+", "+accept+": merged", got.data, want.data)
		}
	}
}

// TestStreamNegativeInitialCountIsRefused: @stream with a negative
// initialCount, written or in a variable, is BAD_USER_INPUT (extensions.field
// "initialCount") before anything runs, whatever the client accepts: one
// response, no data, no upstream call.
func TestStreamNegativeInitialCountIsRefused(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	location := env.ID(t, "location", 0)
	written := strings.Replace(streamedTransactions, "initialCount: 2", "initialCount: -1", 1)
	inVariable := `query($locationId: ID!, $n: Int!) { location(id: $locationId) { transactions(first: 5) { nodes @stream(initialCount: $n) { id } } } }`
	for name, c := range map[string]struct {
		query string
		vars  map[string]any
	}{
		"written":     {written, map[string]any{"locationId": location}},
		"in variable": {inVariable, map[string]any{"locationId": location, "n": -1}},
	} {
		for _, accept := range []string{acceptDefer2022, acceptSSEV02, "application/json", "application/graphql-response+json"} {
			t.Run(name+" "+accept, func(t *testing.T) {
				env.ResetCalls()
				resp := incrementalRequest(t, env, accept, c.query, c.vars)
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/") {
					t.Fatalf("Content-Type %q, want one JSON response", ct)
				}
				wantStatus := http.StatusOK
				if accept == "application/graphql-response+json" {
					wantStatus = http.StatusBadRequest // a request error: the operation did not run
				}
				if resp.StatusCode != wantStatus {
					t.Errorf("HTTP %d, want %d", resp.StatusCode, wantStatus)
				}
				got := mergeParts(t, parts(t, resp))
				if got.data != nil || len(got.errors) != 1 {
					t.Fatalf("data %.200v, errors %v: want no data and one error", got.data, got.errors)
				}
				ext, _ := got.errors[0].(map[string]any)["extensions"].(map[string]any)
				if ext["code"] != errcode.BadUserInput || ext["field"] != "initialCount" {
					t.Errorf("error %v: want BAD_USER_INPUT on initialCount", got.errors[0])
				}
				env.ExpectNoCalls(t)
			})
		}
	}
}

// TestDeferredFieldsLoadAsWithoutDefer: what a resolver loads depends on
// the fields selected beneath it, the deferred ones included. A booking's
// resource whose deferred capacity is not in the summary the booking
// embeds is loaded (the resource field's own load, for the first payload);
// a connection whose deferred pageInfo and edges show cursors seals them.
// Merged, each result is the query's without @defer (the cursors there),
// with the same calls.
func TestDeferredFieldsLoadAsWithoutDefer(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	vars := map[string]any{"locationId": env.ID(t, "location", 0)}
	for name, q := range map[string]string{
		"capacity": `query($locationId: ID!) { location(id: $locationId) { transactions(first: 30) { nodes { id booking { resource { id title ... @defer(label: "capacity") { capacity } } } } } } }`,
		"cursors":  `query($locationId: ID!) { location(id: $locationId) { transactions(first: 5) { nodes { id } ...Page @defer(label: "page") } } } fragment Page on TransactionConnection { pageInfo { hasNextPage endCursor } edges { cursor } }`,
	} {
		env.ResetCalls()
		want := mergeParts(t, parts(t, incrementalRequest(t, env, "application/json", withoutDefer(q), vars)))
		wantCalls, wantTotal := env.Calls()
		if len(want.errors) > 0 {
			t.Fatalf("%s without @defer: %v", name, want.errors)
		}
		for _, accept := range []string{acceptDefer2022, acceptV02} {
			t.Run(name+" "+accept, func(t *testing.T) {
				env.ResetCalls()
				got := mergeParts(t, parts(t, incrementalRequest(t, env, accept, q, vars)))
				if got.payloads < 2 || len(got.errors) > 0 {
					t.Fatalf("%d payloads, errors %v", got.payloads, got.errors)
				}
				mustSameData(t, "merged", got.data, want.data)
				expectSameCalls(t, env, "with @defer", "without", wantCalls, wantTotal)
				if name == "cursors" {
					if c, _ := get(got.data, "location.transactions.pageInfo.endCursor").(string); c == "" {
						t.Errorf("no endCursor: %v", get(got.data, "location.transactions.pageInfo"))
					}
					for _, e := range asList(get(got.data, "location.transactions.edges")) {
						if c, _ := e.(map[string]any)["cursor"].(string); c == "" {
							t.Errorf("an edge without its cursor: %v", e)
						}
					}
				}
			})
		}
		if name == "capacity" && wantCalls[restclient.OpGetResource.Pattern()] == 0 {
			t.Errorf("capacity: no resource loaded without @defer: the test proves nothing")
		}
	}
}
