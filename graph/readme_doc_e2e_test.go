package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// The local servers the documentation names: `go run .` and
// `go run ./cmd/restserver`, and the test endpoints of `go run .`'s
// embedded REST service pinned with -demo-addr (docs/live-data.md).
const readmeFacade, readmeREST, readmeTestEndpoints = "http://127.0.0.1:8080", "http://127.0.0.1:8081", "http://127.0.0.1:8083"

// docsRoot is the repository's root, where README.md and docs/ are.
const docsRoot = ".."

// TestReadmeExamplesHoldOnEveryRun keeps the documentation (README.md and
// docs/*.md, testenv.DocFiles) true for a reader who runs its examples, in
// order, again and again. Every GraphQL query it shows is one of the queries
// constants that TestReadmeQueries guards against N+1, followed by its
// variables. Then every example (GraphQL queries and curl commands, GraphQL
// and REST) runs in reading order against one demo instance on a data
// directory, twice, the program restarted in between (the stack stopped and
// started again on the same directory), each run after 30 minutes' worth of
// the demo activity (driven directly, readmeActivityTicks): every example
// succeeds both times,
// each GraphQL query makes exactly the upstream calls its paragraph states,
// each REST example exactly one, and every GraphQL example answers the
// second time exactly as the first. The REST examples run against the very
// service behind the GraphQL ones (as with
// `go run . -upstream http://127.0.0.1:8081`), so an example that changes
// what another shows fails here. The cost example of docs/hardening.md is
// refused at its stated cost, and the REST examples the documentation says
// run out do so at the run it states.
func TestReadmeExamplesHoldOnEveryRun(t *testing.T) {
	examples := testenv.DocExamples(t, docsRoot)
	guarded := map[string]bool{queries.First: true, queries.Dashboard: true, queries.Invoice: true, queries.DeferredDashboard: true, queries.Entities: true, queries.DeferredLinks: true}
	shown := map[string]bool{}
	var nQueries, nREST, nCurlGraphQL int
	for _, ex := range examples {
		switch {
		case ex.Query != nil:
			nQueries++
			if !guarded[ex.Query.Query] {
				t.Errorf("%s shows a query that is not a guarded queries constant:\n%s", ex.Where(), ex.Query.Query)
			}
			shown[ex.Query.Query] = true
		case strings.HasPrefix(ex.Curl.URL, readmeREST):
			nREST++
		case ex.Curl.URL == readmeFacade+"/graphql":
			nCurlGraphQL++
		}
	}
	for q := range guarded {
		if !shown[q] {
			t.Errorf("the documentation does not show %.40q", q)
		}
	}
	if nQueries < 3 || nREST < 18 || nCurlGraphQL < 1 {
		t.Fatalf("documentation examples: %d GraphQL queries, %d REST and %d GraphQL curl commands; want at least 3, 18 and 1 (the parser lost some)", nQueries, nREST, nCurlGraphQL)
	}

	checkReadmeResetNamesTheDataDirectory(t)
	dir := t.TempDir()
	answers := [2]map[string]string{{}, {}}
	for run := range 2 {
		t.Run(fmt.Sprintf("run %d", run+1), func(t *testing.T) {
			// A program run: stopped at the end of this subtest (cleanup).
			env := testenv.New(t, testenv.Options{Config: func(c *stack.Config) { c.DataDir = dir }})
			origins := map[string]string{readmeFacade: env.BaseURL, readmeREST: env.UpstreamURL, readmeTestEndpoints: env.UpstreamURL}
			runDemoActivity(t, env, readmeActivityTicks)
			for _, ex := range examples {
				answers[run][ex.Where()] = runReadmeExample(t, env, ex, origins)
			}
			if run == 0 {
				checkReadmeCostExample(t, env)
				checkDocsNameTheActivityLocation(t, env)
			} else {
				checkReadmeExamplesRunOut(t, env, examples, origins)
			}
		})
	}
	for _, ex := range examples {
		if first, second := answers[0][ex.Where()], answers[1][ex.Where()]; first != second && (ex.Query != nil || ex.Curl.URL == readmeFacade+"/graphql") {
			t.Errorf("%s answers differently once every example has run and the program restarted: an example drifts the demo data\nfirst:  %.600s\nsecond: %.600s", ex.Where(), first, second)
		}
	}
}

// readmeActivityTicks is how many changes of the demo activity each run of
// TestReadmeExamplesHoldOnEveryRun makes before its examples: 30 minutes of
// `go run .` at its default -demo-activity of 5 s.
const readmeActivityTicks = 30 * 60 / 5

// runDemoActivity makes n changes of the demo activity (restserver.Activity,
// what `go run .` makes every -demo-activity) on env's REST service, driven
// directly, and checks through the facade that they landed in the activity's
// location: an order numbered on from the first's every third tick.
func runDemoActivity(t *testing.T, env *testenv.Env, n int) {
	t.Helper()
	loc := env.Manifest.ActivityLocation()
	const q = `query($loc: ID!) { location(id: $loc) { orders(first: 1) { nodes { number } } } }`
	newest := func() float64 {
		var d struct {
			Location struct {
				Orders struct{ Nodes []struct{ Number float64 } }
			}
		}
		testenv.MustData(t, env.Query(t, env.Bearer(), q, map[string]any{"loc": loc}), &d)
		if len(d.Location.Orders.Nodes) != 1 {
			t.Fatalf("the activity location %s has no order", loc)
		}
		return d.Location.Orders.Nodes[0].Number
	}
	act := env.Upstream.NewActivity(loc)
	var first float64
	for i := range n {
		if _, err := act.Tick(t.Context()); err != nil {
			t.Fatalf("demo activity, tick %d: %v", i, err)
		}
		if i == 0 { // a new order, the newest of the location
			first = newest()
		}
	}
	if got, want := newest(), first+float64((n+2)/3-1); got != want {
		t.Fatalf("after %d ticks of the demo activity the newest order of %s is number %v, want %v", n, loc, got, want)
	}
}

// runReadmeExample runs ex on env and returns the data it answers (cursors
// blanked: each is sealed with a random nonce), failing t on any error or a
// call count other than the documentation's.
func runReadmeExample(t *testing.T, env *testenv.Env, ex testenv.ReadmeExample, origins map[string]string) string {
	t.Helper()
	env.ResetCalls()
	if q := ex.Query; q != nil {
		cm := regexp.MustCompile(`\*\*(\d+) REST calls\*\*`).FindStringSubmatch(q.Prose)
		if cm == nil {
			t.Fatalf("%s: no '**N REST calls**' after the query: %q", ex.Where(), q.Prose)
		}
		want, _ := strconv.Atoi(cm[1])
		r := env.Query(t, env.Bearer(), q.Query, q.Vars)
		if len(r.Errors) > 0 {
			t.Fatalf("%s: %+v", ex.Where(), r.Errors)
		}
		if m, got := env.Calls(); got != int64(want) {
			t.Errorf("%s: %.30q makes %d upstream calls, the documentation says %d:\n%s", ex.Where(), q.Query, got, want, testenv.FormatCalls(m))
		}
		return blankCursors(t, r.Data)
	}
	status, body, err := ex.Curl.Do(t.Context(), env.HTTP, origins)
	if err != nil {
		t.Fatalf("%s: %v\n%s", ex.Where(), err, ex.Curl.Text)
	}
	if status/100 != 2 || !json.Valid(body) {
		t.Fatalf("%s answers %d: %.300s\n%s", ex.Where(), status, body, ex.Curl.Text)
	}
	if strings.HasPrefix(ex.Curl.URL, readmeTestEndpoints+"/_test/") {
		env.ExpectNoCalls(t) // a change made outside the API
		return string(body)
	}
	if strings.HasPrefix(ex.Curl.URL, readmeREST) {
		if m, n := env.Calls(); n != 1 {
			t.Errorf("%s: the REST service counted %d requests, want 1:\n%s", ex.Where(), n, testenv.FormatCalls(m))
		}
		return string(body) // writes answer new ids: not compared
	}
	var r testenv.Response
	if err := json.Unmarshal(body, &r); err != nil || len(r.Errors) > 0 || len(r.Data) == 0 {
		t.Fatalf("%s: %v %+v %.300s", ex.Where(), err, r.Errors, body)
	}
	return blankCursors(t, r.Data)
}

// blankCursors returns data as JSON with every cursor replaced by "".
func blankCursors(t *testing.T, data json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k == "cursor" || k == "endCursor" || k == "startCursor" {
					v[k] = ""
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	out, _ := json.Marshal(v)
	return string(out)
}

// checkDocsNameTheActivityLocation: docs/live-data.md names the location the
// demo activity writes to, and no example reads it.
func checkDocsNameTheActivityLocation(t *testing.T, env *testenv.Env) {
	t.Helper()
	loc := env.Manifest.ActivityLocation()
	raw, err := os.ReadFile(docsRoot + "/docs/live-data.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte("`go run .` makes activity in the last demo location")) || !bytes.Contains(raw, []byte("`"+loc+"`")) {
		t.Errorf("docs/live-data.md does not say that the demo activity writes to the last demo location, %s", loc)
	}
	for _, ex := range testenv.DocExamples(t, docsRoot) {
		if q := ex.Query; q != nil && strings.Contains(fmt.Sprint(q.Vars), loc) {
			t.Errorf("%s reads the demo activity's location %s: its figures would drift as the demo runs", ex.Where(), loc)
		}
	}
}

// checkReadmeCostExample: the query the documentation says is refused for
// its cost parses, validates and is refused for exactly the cost it states,
// with no upstream call.
func checkReadmeCostExample(t *testing.T, env *testenv.Env) {
	t.Helper()
	raw := []byte(testenv.DocsText(t, docsRoot))
	m := regexp.MustCompile("(?s)`(\\{ transactions\\(.*?\\} \\})` costs ([0-9,]+) and is\\s+refused").FindSubmatch(raw)
	if m == nil {
		t.Fatal("the documentation does not state \"`{ transactions(...) ... }` costs N and is refused\"")
	}
	query := string(bytes.Join(bytes.Fields(m[1]), []byte(" ")))
	want, _ := strconv.Atoi(strings.ReplaceAll(string(m[2]), ",", ""))
	env.ResetCalls()
	r := env.Query(t, env.Bearer(), query, nil)
	if len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != errcode.QueryTooComplex || r.Errors[0].Extensions["limit"] != "cost" {
		t.Fatalf("the documented cost example %s: %+v", query, r.Errors)
	}
	if got := r.Errors[0].Extensions["value"]; fmt.Sprint(got) != strconv.Itoa(want) {
		t.Errorf("the documented cost example costs %v, the documentation says %d", got, want)
	}
	env.ExpectNoCalls(t)
}

// checkReadmeExamplesRunOut, after two runs of every example: each REST
// example the documentation says runs out ("N credits ... (the Kth run answers
// 409" after the block, N its "# N" comment) succeeds until its (K-1)th run
// and answers 409 on its Kth.
func checkReadmeExamplesRunOut(t *testing.T, env *testenv.Env, examples []testenv.ReadmeExample, origins map[string]string) {
	t.Helper()
	stated := regexp.MustCompile(`(\d+) (?:credits|takes) [^(]*\(the (\d+)(?:st|nd|rd|th) run answers 409`).FindAllStringSubmatch(testenv.DocsText(t, docsRoot), -1)
	if len(stated) == 0 {
		t.Fatal("the documentation states no REST example that runs out (\"N takes ... (the Kth run answers 409\")")
	}
	number := regexp.MustCompile(`#\s*(\d+)\b[^#]*$`)
	for _, st := range stated {
		var ex *testenv.ReadmeExample
		for i := range examples {
			if c := examples[i].Curl; c != nil && c.Method == "POST" {
				if m := number.FindStringSubmatch(c.Text); m != nil && m[1] == st[1] {
					ex = &examples[i]
				}
			}
		}
		if ex == nil {
			t.Fatalf("the documentation says example %s runs out, but no POST example is numbered # %s", st[1], st[1])
		}
		last, _ := strconv.Atoi(st[2])
		for run := 3; run <= last; run++ { // runs 1 and 2 are done
			status, body, err := ex.Curl.Do(t.Context(), env.HTTP, origins)
			if err != nil {
				t.Fatal(err)
			}
			if run < last && status != http.StatusCreated {
				t.Fatalf("%s, run %d: %d %.300s; the documentation says it runs out at run %d", ex.Where(), run, status, body, last)
			}
			if run == last && status != http.StatusConflict {
				t.Fatalf("%s, run %d: %d %.300s; the documentation says 409", ex.Where(), run, status, body)
			}
		}
	}
}

// checkReadmeResetNamesTheDataDirectory: the directory README.md tells a
// reader to delete, and the -data-dir default it states, are the program's.
func checkReadmeResetNamesTheDataDirectory(t *testing.T) {
	t.Helper()
	raw, err := os.ReadFile(docsRoot + "/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`rm -rf " + stack.DefaultDataDir + "`", "| `-data-dir` | `DATA_DIR` | `" + stack.DefaultDataDir + "` |"} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Errorf("README.md does not say %s: the program keeps its demo data in %s", want, stack.DefaultDataDir)
		}
	}
}
