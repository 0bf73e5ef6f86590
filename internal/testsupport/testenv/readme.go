package testenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// ReadmeQuery is one GraphQL query the documentation shows, with the
// variables shown after it and the paragraph that follows them.
type ReadmeQuery struct {
	Query string
	Vars  map[string]any
	Prose string
}

var readmeBlock = regexp.MustCompile("(?s)```graphql\n(.*?)```\n\nVariables:\n\n```json\n(.*?)```\n\n(.*?)\n\n")

// DocFiles returns the documentation a reader is sent to, in reading order:
// README.md, then every page of docs/ by name. root is the repository's
// root (relative to a test's package directory, such as "..").
func DocFiles(tb testing.TB, root string) []string {
	tb.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		tb.Fatalf("no docs/*.md under %s: %v", root, err)
	}
	slices.Sort(pages)
	return append([]string{filepath.Join(root, "README.md")}, pages...)
}

// DocsText returns the text of every documentation file (DocFiles), joined
// by blank lines: what a statement-checking test searches.
func DocsText(tb testing.TB, root string) string {
	tb.Helper()
	var b strings.Builder
	for _, f := range DocFiles(tb, root) {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		b.Write(raw)
		b.WriteString("\n\n")
	}
	return b.String()
}

// DocQueries returns every ```graphql block of the documentation (DocFiles),
// in reading order, each with its ```json variables. It fails tb if a block
// is not followed by its variables, or if there is none, so no query the
// documentation shows escapes the tests that use this.
func DocQueries(tb testing.TB, root string) []ReadmeQuery {
	tb.Helper()
	var out []ReadmeQuery
	for _, f := range DocFiles(tb, root) {
		out = append(out, fileQueries(tb, f)...)
	}
	if len(out) == 0 {
		tb.Fatalf("the documentation under %s shows no GraphQL query", root)
	}
	return out
}

// ReadmeQueries returns every ```graphql block of the one file at path, each
// with its ```json variables; it fails tb if there is none, or if a block is
// not followed by its variables.
func ReadmeQueries(tb testing.TB, path string) []ReadmeQuery {
	tb.Helper()
	out := fileQueries(tb, path)
	if len(out) == 0 {
		tb.Fatalf("%s has no graphql block", path)
	}
	return out
}

// fileQueries returns the ```graphql blocks of the file at path (none is
// fine), failing tb if one is not followed by its variables and a paragraph.
func fileQueries(tb testing.TB, path string) []ReadmeQuery {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	text := string(raw)
	matches := readmeBlock.FindAllStringSubmatch(text, -1)
	if n := strings.Count(text, "```graphql"); n != len(matches) {
		tb.Fatalf("%s has %d graphql blocks, %d of them followed by Variables and a paragraph", path, n, len(matches))
	}
	out := make([]ReadmeQuery, len(matches))
	for i, m := range matches {
		out[i] = ReadmeQuery{Query: strings.TrimSpace(m[1]), Prose: m[3]}
		if err := json.Unmarshal([]byte(m[2]), &out[i].Vars); err != nil {
			tb.Fatalf("variables of query %d of %s: %v", i+1, path, err)
		}
	}
	return out
}
