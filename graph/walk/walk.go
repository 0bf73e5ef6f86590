// Package walk is the one walk over a GraphQL selection set in graph: the
// limits measure an operation with it, incremental delivery finds and
// rewrites its deferred fragments with it. The walk follows a selection set
// through its fields, inline fragments and fragment spreads; what to enter
// and what to compute is the caller's (Visitor).
package walk

import "github.com/vektah/gqlparser/v2/ast"

// Fragment is an inline fragment or a fragment spread a walk meets.
type Fragment struct {
	Selection     ast.Selection     // the *ast.InlineFragment or *ast.FragmentSpread
	Spread        bool              // a fragment spread
	TypeCondition string            // "" for an inline fragment without one, or a spread not resolved
	Directives    ast.DirectiveList // the inline fragment's or the spread's
	SelectionSet  ast.SelectionSet  // the fragment's (nil for a spread not resolved)
	// Repeated: a spread the walk does not enter (Walker.Once: its fragment
	// was entered before; otherwise: the walk is inside it).
	Repeated bool
}

// Visitor is what a walk does at each selection. A nil hook enters.
type Visitor struct {
	// Field visits a field; its selection set is walked next when it
	// returns true.
	Field func(*ast.Field) bool
	// Fragment visits an inline fragment or a fragment spread; its
	// selections are walked in its place when it returns true (never a
	// Repeated or unresolved spread's).
	Fragment func(Fragment) bool
}

// Walker walks selection sets depth first, in document order. A hook may
// start a walk of its own with the same Walker (for what a field selects,
// with state of its own): the fragments it entered stay known, and the
// budget is shared.
type Walker struct {
	// Doc resolves a fragment spread by name (nil: by the spread's
	// Definition, which validation sets).
	Doc *ast.QueryDocument
	// Once enters each named fragment once per Walker; otherwise a
	// fragment is entered at each spread, but not inside itself.
	Once bool
	// Budget bounds the selections visited (0: none): past it a walk
	// visits nothing more (Exhausted).
	Budget int

	steps   int
	entered map[string]bool // Once: the fragments entered; otherwise those being walked
}

// Exhausted reports whether the walks went past the budget.
func (w *Walker) Exhausted() bool { return w.Budget > 0 && w.steps > w.Budget }

// Walk visits the selections of set with v.
func (w *Walker) Walk(set ast.SelectionSet, v Visitor) {
	for _, sel := range set {
		w.steps++
		if w.Exhausted() {
			return
		}
		switch s := sel.(type) {
		case *ast.Field:
			if v.Field == nil || v.Field(s) {
				w.Walk(s.SelectionSet, v)
			}
		case *ast.InlineFragment:
			f := Fragment{Selection: s, TypeCondition: s.TypeCondition, Directives: s.Directives, SelectionSet: s.SelectionSet}
			if v.Fragment == nil || v.Fragment(f) {
				w.Walk(s.SelectionSet, v)
			}
		case *ast.FragmentSpread:
			w.spread(s, v)
		}
	}
}

// spread visits the fragment spread s and enters its fragment.
func (w *Walker) spread(s *ast.FragmentSpread, v Visitor) {
	def := s.Definition
	if w.Doc != nil {
		def = w.Doc.Fragments.ForName(s.Name)
	}
	f := Fragment{Selection: s, Spread: true, Directives: s.Directives, Repeated: w.entered[s.Name]}
	if def != nil {
		f.TypeCondition, f.SelectionSet = def.TypeCondition, def.SelectionSet
	}
	enter := v.Fragment == nil || v.Fragment(f)
	if !enter || def == nil || f.Repeated {
		return
	}
	if w.entered == nil {
		w.entered = map[string]bool{}
	}
	w.entered[s.Name] = true
	w.Walk(def.SelectionSet, v)
	if !w.Once {
		delete(w.entered, s.Name)
	}
}
