package graph

import (
	"reflect"
	"testing"

	"github.com/workspacenet/facade/graph/generated"
)

// TestRootAllocatesNothing: every getter of generated.ResolverRoot (one per
// object type of the schema with resolvers) returns its object resolver
// without making one: a value holding the *Resolver and nothing else, which
// an interface holds without an allocation (the resolver template of
// graph/internal/resolvertmpl); gqlgen's own template makes a new one at
// every call, that is at every resolver field of every object.
func TestRootAllocatesNothing(t *testing.T) {
	r := &Resolver{}
	var rr generated.ResolverRoot = r
	v := reflect.ValueOf(rr)
	getters := reflect.TypeFor[generated.ResolverRoot]()
	if getters.NumMethod() == 0 {
		t.Fatal("ResolverRoot has no getters")
	}
	for i := range getters.NumMethod() {
		name := getters.Method(i).Name
		got := v.MethodByName(name).Call(nil)[0].Elem()
		if got.Kind() != reflect.Struct || got.NumField() != 1 || got.Field(0).Interface() != any(r) {
			t.Errorf("%s returns a %s, not a struct{ *Resolver } value: regenerate with gqlgen.yml's resolver_template", name, got.Type())
		}
	}
	var sink generated.TransactionResolver
	if n := testing.AllocsPerRun(100, func() { sink = rr.Transaction() }); n != 0 || sink == nil {
		t.Errorf("Transaction(): %v allocations", n)
	}
	var query generated.QueryResolver
	if n := testing.AllocsPerRun(100, func() { query = rr.Query() }); n != 0 || query == nil {
		t.Errorf("Query(): %v allocations", n)
	}
}
