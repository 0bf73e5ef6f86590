package limits

import (
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/workspacenet/facade/internal/testsupport/queries"
)

func TestCountDocument(t *testing.T) {
	doc, err := parser.ParseQuery(&ast.Source{Input: `query Q($v: Int @a) @b { x @include(if: true) { y ...F ... on T @skip(if: false) { z } } }
		fragment F on T @c { w @d @e }`})
	if err != nil {
		t.Fatal(err)
	}
	// Selections: x, y, ...F, inline, z, w. Directives: a, b, include, skip, c, d, e.
	if s, d := CountDocument(doc); s != 6 || d != 7 {
		t.Fatalf("CountDocument = %d selections, %d directives; want 6, 7", s, d)
	}
}

func TestDocumentLimits(t *testing.T) {
	x := New(DefaultConfig())
	for _, tc := range []struct {
		name, q, limit string
	}{
		{"selections", "{ " + strings.Repeat("a ", DefaultMaxSelections+1) + "}", Selections},
		{"directives", "{ a " + strings.Repeat("@x ", DefaultMaxDirectives+1) + "}", Directives},
	} {
		err := x.MutateOperationParameters(t.Context(), &graphql.RawParams{Query: tc.q})
		if err == nil || err.Extensions["limit"] != tc.limit {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	for _, q := range []string{"{ " + strings.Repeat("a ", DefaultMaxSelections) + "}", "{ a @x }", "{ broken", ""} {
		if err := x.MutateOperationParameters(t.Context(), &graphql.RawParams{Query: q}); err != nil {
			t.Errorf("%.30q refused: %v", q, err)
		}
	}
	off := New(Config{}) // 0 = off
	if err := off.MutateOperationParameters(t.Context(), &graphql.RawParams{Query: "{ a " + strings.Repeat("@x ", 100) + "}"}); err != nil {
		t.Errorf("limits off: %v", err)
	}
}

// A document in the query cache is counted as cached: the cached document,
// not the query text, decides.
func TestDocumentLimitsUseQueryCache(t *testing.T) {
	docs := lru.New[*ast.QueryDocument](10)
	big, err := parser.ParseQuery(&ast.Source{Input: "{ " + strings.Repeat("a ", DefaultMaxSelections+1) + "}"})
	if err != nil {
		t.Fatal(err)
	}
	docs.Add(t.Context(), "{ a }", big)
	x := New(DefaultConfig()).UseQueryCache(docs)
	if err := x.MutateOperationParameters(t.Context(), &graphql.RawParams{Query: "{ a }"}); err == nil || err.Extensions["limit"] != Selections {
		t.Errorf("cached document not counted: %v", err)
	}
	if err := x.MutateOperationParameters(t.Context(), &graphql.RawParams{Query: "{ b }"}); err != nil {
		t.Errorf("uncached small document refused: %v", err)
	}
}

// BenchmarkDocumentLimits checks the dashboard's document limits with the
// query parsed every time ("parse") and found in the query cache ("cached").
func BenchmarkDocumentLimits(b *testing.B) {
	docs := lru.New[*ast.QueryDocument](10)
	doc, err := parser.ParseQuery(&ast.Source{Input: queries.Dashboard})
	if err != nil {
		b.Fatal(err)
	}
	docs.Add(b.Context(), queries.Dashboard, doc)
	for name, x := range map[string]*Extension{"parse": New(DefaultConfig()), "cached": New(DefaultConfig()).UseQueryCache(docs)} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := x.MutateOperationParameters(b.Context(), &graphql.RawParams{Query: queries.Dashboard}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
