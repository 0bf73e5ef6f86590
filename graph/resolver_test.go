package graph

import (
	"reflect"
	"testing"

	"github.com/workspacenet/facade/graph/generated"
)

// TestRootAllocatesNothing: every getter of the root gqlgen is given returns
// its object resolver without making one (a getter root leaves out is
// schema.resolvers.go's, which makes a new one at every call).
func TestRootAllocatesNothing(t *testing.T) {
	var rr generated.ResolverRoot = newRoot(&Resolver{})
	v := reflect.ValueOf(rr)
	getters := reflect.TypeFor[generated.ResolverRoot]()
	for i := range getters.NumMethod() {
		name := getters.Method(i).Name
		a, b := v.MethodByName(name).Call(nil)[0], v.MethodByName(name).Call(nil)[0]
		if a.IsNil() || a.Elem().Pointer() != b.Elem().Pointer() {
			t.Errorf("%s makes a new resolver at every call: add it to root (graph/resolver.go)", name)
		}
	}
	var sink generated.TransactionResolver
	if n := testing.AllocsPerRun(100, func() { sink = rr.Transaction() }); n != 0 || sink == nil {
		t.Errorf("Transaction(): %v allocations", n)
	}
}
