package graph_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/workspacenet/facade/internal/testenv"
)

// TestReadmeShowsTheGuardedQueries keeps README.md honest: every GraphQL
// query it shows is one of the Readme* constants that TestReadmeQueries
// guards against N+1, each is followed by its variables, and run with those
// variables on the demo data it answers without errors in exactly the number
// of upstream calls the README states.
func TestReadmeShowsTheGuardedQueries(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	guarded := map[string]bool{ReadmeFirstQuery: true, ReadmeDashboardQuery: true, ReadmeInvoiceQuery: true}
	block := regexp.MustCompile("(?s)```graphql\n(.*?)```\n\nVariables:\n\n```json\n(.*?)```\n\n(.*?)\n\n")
	calls := regexp.MustCompile(`\*\*(\d+) REST calls\*\*`)
	matches := block.FindAllStringSubmatch(readme, -1)
	if n := strings.Count(readme, "```graphql"); n != len(matches) {
		t.Fatalf("README has %d graphql blocks, %d of them followed by Variables and a call count", n, len(matches))
	}
	env := testenv.New(t, testenv.Options{})
	shown := map[string]bool{}
	for _, m := range matches {
		query, varsJSON, prose := strings.TrimSpace(m[1]), m[2], m[3]
		if !guarded[query] {
			t.Errorf("README shows a query that is not a guarded Readme* constant:\n%s", query)
			continue
		}
		shown[query] = true
		var vars map[string]any
		if err := json.Unmarshal([]byte(varsJSON), &vars); err != nil {
			t.Fatalf("variables of %.30q: %v", query, err)
		}
		cm := calls.FindStringSubmatch(prose)
		if cm == nil {
			t.Fatalf("no '**N REST calls**' after %.30q: %q", query, prose)
		}
		want, _ := strconv.Atoi(cm[1])
		env.ResetCalls()
		r := env.Query(t, env.Bearer(), query, vars)
		if len(r.Errors) > 0 {
			t.Fatalf("%.30q: %+v", query, r.Errors)
		}
		if _, got := env.Calls(); got != int64(want) {
			t.Errorf("%.30q makes %d upstream calls, the README says %d", query, got, want)
		}
	}
	for q := range guarded {
		if !shown[q] {
			t.Errorf("README does not show %.40q", q)
		}
	}
}
