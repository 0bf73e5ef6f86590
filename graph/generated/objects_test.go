package generated_test

import (
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/workspacenet/facade/graph/generated"
)

// TestObjectsMarshalEveryObjectType: objects_gen.go (go generate) has the
// marshaller of every object type of the schema but the mutation and
// subscription roots, and nothing else: a deferred fragment on any object
// can be delivered.
func TestObjectsMarshalEveryObjectType(t *testing.T) {
	s := generated.NewExecutableSchema(generated.Config{}).Schema()
	n := 0
	for name, def := range s.Types {
		want := def.Kind == ast.Object && def != s.Mutation && def != s.Subscription
		if generated.IsObject(name) != want {
			t.Errorf("IsObject(%q) = %v, want %v: run go generate ./graph/", name, !want, want)
		}
		if want {
			n++
		}
	}
	if n < 100 {
		t.Errorf("only %d object types", n)
	}
}
