package limits_test

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/limits"
)

// entityReps returns n representations of typename.
func entityReps(typename string, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"__typename": typename, "id": "x"}
	}
	return out
}

// TestEntitiesCostPerRepresentation: `_entities` costs, per representation,
// 1 plus the selection on its own type (a fragment on another type costs it
// nothing), from a variable or a literal; its representations are counted.
func TestEntitiesCostPerRepresentation(t *testing.T) {
	q := `query E($r: [_Any!]!) {
  _entities(representations: $r) {
    __typename
    ... on Resource { title parent { title } location { id } }
    ... on Location { products { title } }
    ...P
  }
}
fragment P on Product { title }`
	doc := validated(t, q)
	reps := append(entityReps("Resource", 30), entityReps("Location", 2)...)
	reps = append(reps, entityReps("Product", 5)...)
	s := limits.Measure(doc.Operations[0], map[string]any{"r": reps}, limits.Options{})
	// Resource: 1 + parent 1 + location 1 = 3; Location: 1 + products 10 = 11; Product: 1.
	if want := 30*3 + 2*11 + 5*1; s.Cost != want || s.Representations != 37 {
		t.Errorf("cost %d, representations %d; want %d, 37", s.Cost, s.Representations, want)
	}
	if s.Depth != 3 {
		t.Errorf("depth %d, want 3 (_entities > parent > title)", s.Depth)
	}

	// Representations that are not objects, or have no __typename, cost 1.
	odd := []any{"x", nil, map[string]any{"id": "y"}}
	if s := limits.Measure(doc.Operations[0], map[string]any{"r": odd}, limits.Options{}); s.Cost != 3 || s.Representations != 3 {
		t.Errorf("odd representations: cost %d, representations %d; want 3, 3", s.Cost, s.Representations)
	}

	lit := validated(t, `{ _entities(representations: [{__typename: "Resource", id: "a"}, {__typename: "Resource", id: "b"}]) { ... on Resource { parent { id } } } }`)
	if s := limits.Measure(lit.Operations[0], nil, limits.Options{}); s.Cost != 4 || s.Representations != 2 {
		t.Errorf("literal representations: cost %d, representations %d; want 4, 2", s.Cost, s.Representations)
	}
}

// TestMaxRepresentations: more representations than MaxRepresentations is
// QUERY_TOO_COMPLEX with limit "representations", before anything runs; as
// many passes.
func TestMaxRepresentations(t *testing.T) {
	doc := validated(t, `query E($r: [_Any!]!) { _entities(representations: $r) { ... on Location { id } } }`)
	cfg := limits.DefaultConfig()
	cfg.MaxRepresentations = 3
	x := limits.New(cfg)
	for n, refused := range map[int]bool{3: false, 4: true} {
		oc := &graphql.OperationContext{Operation: doc.Operations[0], Variables: map[string]any{"r": entityReps("Location", n)}}
		e := x.MutateOperationContext(context.Background(), oc)
		if !refused {
			if e != nil {
				t.Errorf("%d representations: %v", n, e)
			}
			continue
		}
		if e == nil || e.Extensions["code"] != errcode.QueryTooComplex || e.Extensions["limit"] != limits.Representations ||
			e.Extensions["value"] != 4 || e.Extensions["maximum"] != 3 {
			t.Errorf("%d representations: %v %v, want QUERY_TOO_COMPLEX representations 4/3", n, e, e.Extensions)
		}
	}
}
