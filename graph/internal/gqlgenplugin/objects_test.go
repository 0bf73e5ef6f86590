package gqlgenplugin_test

import (
	"context"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/workspacenet/facade/graph/generated"
	"github.com/workspacenet/facade/graph/model"
	"github.com/workspacenet/facade/restclient"
)

// TestObjectsMarshalEveryObjectType: the Objects plugin (go generate) wrote
// the marshaller of every object type of the schema but the mutation and
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

// TestObjectsStreamConnectionLists: Item streams a connection's nodes and
// edges lists, and no other list.
func TestObjectsStreamConnectionLists(t *testing.T) {
	for _, items := range []any{[]*restclient.Transaction{}, []*model.TransactionEdge{}} {
		if !generated.Streams(items) {
			t.Errorf("Streams(%T) = false", items)
		}
	}
	for _, items := range []any{[]*restclient.Product{}, []restclient.Transaction{}, []string{}, nil} {
		if generated.Streams(items) {
			t.Errorf("Streams(%T) = true", items)
		}
	}
	if generated.NewObjects(context.Background(), nil) != nil {
		t.Error("NewObjects of a schema that is not the generated one is not nil")
	}
}
