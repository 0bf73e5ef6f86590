package limits

import "github.com/vektah/gqlparser/v2/ast"

// entitiesField is Federation's root field that resolves entities from
// their representations (a router's batch of lookups).
const entitiesField = "_entities"

// entityUnion is the type of `_entities`' elements: a fragment on it applies
// to every entity.
const entityUnion = "_Entity"

// entities measures an `_entities` field: each representation costs 1 (the
// entity) plus the cost of the selection made on its __typename, so a batch
// costs what its answer can hold (a representation of another type, or
// without a __typename, costs 1). The representations are counted into
// w.representations for Config.MaxRepresentations.
func (w *walker) entities(f *ast.Field, depth int) (cost, maxDepth int) {
	maxDepth = depth
	var reps []any
	if a := f.Arguments.ForName("representations"); a != nil {
		if v, err := a.Value.Value(w.vars); err == nil {
			reps, _ = v.([]any)
		}
	}
	w.representations += len(reps)
	perType := map[string]int{} // the cost of one entity of each type seen
	for _, r := range reps {
		m, _ := r.(map[string]any) // _Any takes any value; gqlgen refuses what is not an object
		typename, _ := m["__typename"].(string)
		c, ok := perType[typename]
		if !ok && typename == "" {
			c, ok = 1, true
		}
		if !ok {
			var d int
			c, d = w.selections(f.SelectionSet, depth+1, typename, 0, typename)
			c++ // the entity itself
			perType[typename] = c
			maxDepth = max(maxDepth, d)
		}
		cost += c
		if w.walk.Exhausted() {
			break
		}
	}
	return cost, maxDepth
}
