package graph_test

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/workspacenet/facade/internal/queries"
	"github.com/workspacenet/facade/internal/testenv"
)

// TestReadmeShowsTheGuardedQueries keeps README.md honest: every GraphQL
// query it shows is one of the queries constants that TestReadmeQueries
// guards against N+1, each is followed by its variables, and run with those
// variables on the demo data it answers without errors in exactly the number
// of upstream calls the README states.
func TestReadmeShowsTheGuardedQueries(t *testing.T) {
	guarded := map[string]bool{queries.First: true, queries.Dashboard: true, queries.Invoice: true}
	calls := regexp.MustCompile(`\*\*(\d+) REST calls\*\*`)
	env := testenv.New(t, testenv.Options{})
	shown := map[string]bool{}
	for _, rq := range testenv.ReadmeQueries(t, "../README.md") {
		if !guarded[rq.Query] {
			t.Errorf("README shows a query that is not a guarded queries constant:\n%s", rq.Query)
			continue
		}
		shown[rq.Query] = true
		cm := calls.FindStringSubmatch(rq.Prose)
		if cm == nil {
			t.Fatalf("no '**N REST calls**' after %.30q: %q", rq.Query, rq.Prose)
		}
		want, _ := strconv.Atoi(cm[1])
		env.ResetCalls()
		r := env.Query(t, env.Bearer(), rq.Query, rq.Vars)
		if len(r.Errors) > 0 {
			t.Fatalf("%.30q: %+v", rq.Query, r.Errors)
		}
		if _, got := env.Calls(); got != int64(want) {
			t.Errorf("%.30q makes %d upstream calls, the README says %d", rq.Query, got, want)
		}
	}
	for q := range guarded {
		if !shown[q] {
			t.Errorf("README does not show %.40q", q)
		}
	}
}
