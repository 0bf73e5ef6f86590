package errcode_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	gqlerrcode "github.com/99designs/gqlgen/graphql/errcode"

	"github.com/workspacenet/facade/graph/errcode"
)

// declared returns the package's constants (value -> name), read from its
// source so that no constant escapes the documentation check, and fails for a
// constant without a doc comment.
func declared(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, id := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s is not a string literal", id.Name)
					}
					v, _ := strconv.Unquote(lit.Value)
					if prev, dup := out[v]; dup {
						t.Errorf("%s and %s are both %q", prev, id.Name, v)
					}
					out[v] = id.Name
					if doc := vs.Doc.Text(); !strings.HasPrefix(doc, id.Name+": ") || strings.Count(doc, "\n") != 1 {
						t.Errorf("%s: want a one-line doc comment \"%s: when it is used\", have %q", id.Name, id.Name, doc)
					}
				}
			}
		}
	}
	return out
}

// tableCodes returns the codes of the first table of the file at path
// after its heading (a line equal to heading): the backquoted codes of each
// row's first cell.
func tableCodes(t *testing.T, path, heading string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut("\n"+string(raw), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no %q heading", path, heading)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	code := regexp.MustCompile("`([A-Z][A-Z_]*)`")
	var out []string
	rows := 0
	for line := range strings.SplitSeq(section, "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "|") || len(cells) < 3 {
			if rows > 0 {
				break // the table ended
			}
			continue
		}
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			out = append(out, m[1])
		}
		rows++
	}
	if rows < 3 || len(out) == 0 {
		t.Fatalf("no error table under %s's %q (%d rows)", path, heading, rows)
	}
	return out
}

// TestCodesAreTheDocumentedErrorTables: every code of the package is in
// docs/errors.md's table and in README.md's "Errors in brief", and every
// code of either table is in the package.
func TestCodesAreTheDocumentedErrorTables(t *testing.T) {
	consts := declared(t)
	if len(consts) == 0 {
		t.Fatal("no constants found")
	}
	for _, doc := range []struct{ path, heading string }{
		{"../../docs/errors.md", "# Errors"},
		{"../../README.md", "## Errors in brief"},
	} {
		listed := map[string]bool{}
		for _, c := range tableCodes(t, doc.path, doc.heading) {
			if listed[c] {
				t.Errorf("%s lists %s twice", doc.path, c)
			}
			listed[c] = true
			if _, ok := consts[c]; !ok {
				t.Errorf("%s lists %s, which package errcode does not have", doc.path, c)
			}
		}
		for _, v := range slices.Sorted(maps.Keys(consts)) {
			if !listed[v] {
				t.Errorf("%s (%q) is not in %s's error table", consts[v], v, doc.path)
			}
		}
	}
}

// TestGqlgenCodes: the codes gqlgen sets itself are its own constants'.
func TestGqlgenCodes(t *testing.T) {
	if errcode.ParseFailed != gqlerrcode.ParseFailed || errcode.ValidationFailed != gqlerrcode.ValidationFailed {
		t.Errorf("gqlgen's codes are %q and %q", gqlerrcode.ParseFailed, gqlerrcode.ValidationFailed)
	}
}
