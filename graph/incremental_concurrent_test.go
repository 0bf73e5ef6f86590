package graph_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/workspacenet/facade/graph/generated"
)

// TestConcurrentIsGeneratedCodes: generated.Concurrent names exactly the
// object fields the generated code resolves apart (ResolveConcurrently),
// the fields a @defer defers, whose parts the incrementalSpec=v0.2 format
// announces before their data.
func TestConcurrentIsGeneratedCodes(t *testing.T) {
	src, err := os.ReadFile("generated/generated.go")
	if err != nil {
		t.Fatal(err)
	}
	object := regexp.MustCompile(`(?m)^func \(ec \*executionContext\) _(\w+)\(ctx context.Context, sel ast.SelectionSet`)
	field := regexp.MustCompile(`case "(\w+)":\n\s*(out\.ResolveConcurrently|out\.Values|field := field|innerFunc)`)
	locs := object.FindAllSubmatchIndex(src, -1)
	n := 0
	for i, l := range locs {
		typ := string(src[l[2]:l[3]])
		if typ == "Query" || typ == "Mutation" {
			continue
		}
		end := len(src)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		for _, m := range field.FindAllSubmatch(src[l[1]:end], -1) {
			name, concurrent := string(m[1]), string(m[2]) == "out.ResolveConcurrently"
			if concurrent {
				n++
			}
			if generated.Concurrent(typ, name) != concurrent {
				t.Errorf("%s.%s: Concurrent %v, generated code %v", typ, name, !concurrent, concurrent)
			}
		}
	}
	if n == 0 {
		t.Fatal("no concurrent field found in generated.go")
	}
}
