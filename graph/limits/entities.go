package limits

import "github.com/vektah/gqlparser/v2/ast"

// entitiesField is Federation's root field that resolves entities from
// their representations (a router's batch of lookups).
const entitiesField = "_entities"

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
		typename, _ := r.(map[string]any)["__typename"].(string)
		c, ok := perType[typename]
		if !ok {
			var d int
			c, d = w.typed(f.SelectionSet, depth+1, typename)
			c++ // the entity itself
			perType[typename] = c
			maxDepth = max(maxDepth, d)
		}
		cost += c
		if w.steps > walkBudget {
			break
		}
	}
	return cost, maxDepth
}

// typed returns the cost and depth of the part of set that applies to an
// object of type typename: its fields, and its fragments on that type (or
// with no type condition).
func (w *walker) typed(set ast.SelectionSet, depth int, typename string) (cost, maxDepth int) {
	for _, sel := range set {
		w.steps++
		if w.steps > walkBudget {
			return cost, maxDepth
		}
		var c, d int
		switch s := sel.(type) {
		case *ast.Field:
			c, d = w.field(s, depth, typename, 0)
		case *ast.InlineFragment:
			if s.TypeCondition != "" && s.TypeCondition != typename && s.TypeCondition != "_Entity" {
				continue
			}
			c, d = w.typed(s.SelectionSet, depth, typename)
		case *ast.FragmentSpread:
			if s.Definition == nil || w.active[s.Name] || (s.Definition.TypeCondition != typename && s.Definition.TypeCondition != "_Entity") {
				continue
			}
			w.active[s.Name] = true
			c, d = w.typed(s.Definition.SelectionSet, depth, typename)
			delete(w.active, s.Name)
		}
		cost += c
		maxDepth = max(maxDepth, d)
	}
	return cost, maxDepth
}
