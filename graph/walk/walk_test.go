package walk_test

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/workspacenet/facade/graph/walk"
)

func parse(t *testing.T, q string) *ast.QueryDocument {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Input: q})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// fields returns the fields a walk visits, in order, entering everything.
func fields(w *walk.Walker, set ast.SelectionSet) string {
	var names []string
	w.Walk(set, walk.Visitor{Field: func(f *ast.Field) bool { names = append(names, f.Name); return true }})
	return strings.Join(names, " ")
}

// TestWalkFollowsFragments: fields in document order through inline
// fragments and spreads; a spread inside its own fragment is not entered
// again (a cycle), a fragment spread twice is entered twice, or once with
// Once.
func TestWalkFollowsFragments(t *testing.T) {
	doc := parse(t, `{ a { b ...F ... on T { c } ...F } } fragment F on T { d ...F }`)
	set := doc.Operations[0].SelectionSet
	if got := fields(&walk.Walker{Doc: doc}, set); got != "a b d c d" {
		t.Errorf("walk: %q", got)
	}
	if got := fields(&walk.Walker{Doc: doc, Once: true}, set); got != "a b d c" {
		t.Errorf("walk once: %q", got)
	}
	if got := fields(&walk.Walker{}, set); got != "a b c" {
		t.Errorf("unresolved spreads (no Doc, no Definition): %q", got)
	}
}

// TestWalkHooksDecide: a hook that returns false keeps the walk out; the
// fragment hook sees repeated spreads; the budget stops the walk.
func TestWalkHooksDecide(t *testing.T) {
	doc := parse(t, `{ a { b } ...F ...F @skip(if: true) ... on T { c } } fragment F on T { d }`)
	set := doc.Operations[0].SelectionSet
	var seen []string
	w := &walk.Walker{Doc: doc, Once: true}
	w.Walk(set, walk.Visitor{
		Field: func(f *ast.Field) bool { seen = append(seen, f.Name); return false },
		Fragment: func(f walk.Fragment) bool {
			if f.Spread {
				seen = append(seen, "spread", f.TypeCondition, map[bool]string{true: "repeated", false: "new"}[f.Repeated])
			}
			return f.Spread
		},
	})
	if got := strings.Join(seen, " "); got != "a spread T new d spread T repeated" {
		t.Errorf("visited: %q", got)
	}
	w = &walk.Walker{Doc: doc, Budget: 2}
	if got := fields(w, set); got != "a b" || !w.Exhausted() {
		t.Errorf("budget 2: %q, exhausted %v", got, w.Exhausted())
	}
}
