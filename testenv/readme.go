package testenv

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// ReadmeQuery is one GraphQL query README.md shows, with the variables shown
// after it and the paragraph that follows them.
type ReadmeQuery struct {
	Query string
	Vars  map[string]any
	Prose string
}

var readmeBlock = regexp.MustCompile("(?s)```graphql\n(.*?)```\n\nVariables:\n\n```json\n(.*?)```\n\n(.*?)\n\n")

// ReadmeQueries returns every ```graphql block of the README at path, each
// with its ```json variables. It fails tb if a block is not followed by its
// variables, so no query in the README escapes the tests that use this.
func ReadmeQueries(tb testing.TB, path string) []ReadmeQuery {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	readme := string(raw)
	matches := readmeBlock.FindAllStringSubmatch(readme, -1)
	if n := strings.Count(readme, "```graphql"); n != len(matches) || n == 0 {
		tb.Fatalf("%s has %d graphql blocks, %d of them followed by Variables and a paragraph", path, n, len(matches))
	}
	out := make([]ReadmeQuery, len(matches))
	for i, m := range matches {
		out[i] = ReadmeQuery{Query: strings.TrimSpace(m[1]), Prose: m[3]}
		if err := json.Unmarshal([]byte(m[2]), &out[i].Vars); err != nil {
			tb.Fatalf("variables of README query %d: %v", i+1, err)
		}
	}
	return out
}
