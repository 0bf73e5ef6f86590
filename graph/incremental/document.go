package incremental

import (
	"context"
	"fmt"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/generated"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/walk"
)

// scan reports whether ss, or a fragment it spreads, has @defer or @stream,
// and refuses a @stream whose initialCount is negative (BAD_USER_INPUT,
// before anything runs: the first in document order).
func scan(doc *ast.QueryDocument, ss ast.SelectionSet, vars map[string]any) (found bool, err *gqlerror.Error) {
	w := walk.Walker{Doc: doc, Once: true}
	w.Walk(ss, walk.Visitor{
		Field: func(f *ast.Field) bool {
			dir := f.Directives.ForName("stream")
			if dir == nil {
				return err == nil
			}
			found = true
			if n, _ := dir.ArgumentMap(vars)["initialCount"].(int64); n < 0 && dir.Definition != nil && err == nil {
				err = gqlerr.NewAt(dir.Position, errcode.BadUserInput,
					fmt.Sprintf("@stream on %s: initialCount must be 0 or more, got %d", f.Alias, n), map[string]any{"field": "initialCount"})
			}
			return err == nil
		},
		Fragment: func(f walk.Fragment) bool {
			found = found || f.Directives.ForName("defer") != nil
			return err == nil
		},
	})
	return found, err
}

// mark gives oc a copy of its document and operation whose deferred
// fragments (@defer, if true, on an object type) are marked skipped, and
// without the other @defer directives (rewriteDefer).
func (d *Deferral) mark(oc *graphql.OperationContext) {
	skip := &ast.Directive{Name: "skip", Definition: d.schema.Schema().Directives["skip"],
		Arguments: ast.ArgumentList{{Name: "if", Value: &ast.Value{Kind: ast.BooleanValue, Raw: "true"}}}}
	d.plain = &graphql.OperationContext{Doc: oc.Doc, Variables: oc.Variables}
	d.marks, d.orig = map[ast.Selection]string{}, map[ast.Selection]ast.Selection{}
	rewriteDefer(oc, skip, d.marks, d.orig)
	d.doc, d.vars = oc.Doc, oc.Variables
}

// groupsOf returns the deferred fragments that apply to an object of type
// typ selected with sel (directly or through fragments that are not
// deferred), by label, in the order of their first fragment.
func (d *Deferral) groupsOf(sel ast.SelectionSet, typ string) []group {
	if len(d.marks) == 0 || len(sel) == 0 {
		return nil
	}
	k := keyOf(sel, typ)
	d.mu.Lock()
	gs, ok := d.groups[k]
	d.mu.Unlock()
	if ok {
		return gs
	}
	add := func(label string, ss ast.SelectionSet) {
		for i := range gs {
			if gs[i].label == label {
				gs[i].sel = append(slices.Clip(gs[i].sel), ss...)
				return
			}
		}
		gs = append(gs, group{label: label, sel: ss})
	}
	w := walk.Walker{Doc: d.doc, Once: true}
	w.Walk(sel, walk.Visitor{
		Field: func(*ast.Field) bool { return false }, // the object's own selections only
		Fragment: func(f walk.Fragment) bool {
			if f.SelectionSet == nil || !d.applies(f.TypeCondition, typ) {
				return false
			}
			if label, marked := d.marks[f.Selection]; marked {
				if included(f.Directives[1:], d.vars) {
					add(label, f.SelectionSet)
				}
				return false
			}
			return included(f.Directives, d.vars)
		},
	})
	d.mu.Lock()
	if d.groups == nil {
		d.groups = map[selKey][]group{}
	}
	d.groups[k] = gs
	d.mu.Unlock()
	return gs
}

// applies reports whether a fragment with the type condition cond applies
// to an object of type typ.
func (d *Deferral) applies(cond, typ string) bool {
	if cond == "" || cond == typ {
		return true
	}
	s := d.schema.Schema()
	t, c := s.Types[typ], s.Types[cond]
	if t == nil || c == nil {
		return false
	}
	return slices.ContainsFunc(s.GetPossibleTypes(c), func(p *ast.Definition) bool { return p.Name == typ })
}

// included reports whether @skip and @include of dirs let a selection in.
func included(dirs ast.DirectiveList, vars map[string]any) bool {
	for _, dir := range dirs {
		if dir.Name != "skip" && dir.Name != "include" {
			continue
		}
		arg := dir.Arguments.ForName("if")
		if arg == nil {
			continue
		}
		v, _ := arg.Value.Value(vars)
		if on, _ := v.(bool); on == (dir.Name == "skip") {
			return false
		}
	}
	return true
}

// Lookahead returns the fields the query selects on what the field of ctx
// resolves to, as gqlgen collects them (satisfies: the object types, nil
// for any), the fields of its deferred fragments included (d: the
// operation's, nil if it is not deferred): what a resolver loads must be
// what the query without @defer loads. It collects them from the document
// as sent.
func (d *Deferral) Lookahead(ctx context.Context, satisfies []string) []graphql.CollectedField {
	fc := graphql.GetFieldContext(ctx)
	if d == nil || len(d.marks) == 0 || fc == nil {
		return graphql.CollectFieldsCtx(ctx, satisfies)
	}
	return graphql.CollectFields(d.plain, d.unmarked(fc.Field.Selections), satisfies)
}

// unmarked returns sel, selections of the marked document, as they were
// sent: each one rewritten replaced by its original (the fragments it
// spreads are the document's as sent, d.plain's).
func (d *Deferral) unmarked(sel ast.SelectionSet) ast.SelectionSet {
	k := keyOf(sel, "")
	d.mu.Lock()
	defer d.mu.Unlock()
	if out, ok := d.looks[k]; ok {
		return out
	}
	out, cloned := sel, false
	for i, s := range sel {
		if o, ok := d.orig[s]; ok {
			if !cloned {
				out, cloned = slices.Clone(sel), true
			}
			out[i] = o
		}
	}
	if d.looks == nil {
		d.looks = map[selKey]ast.SelectionSet{}
	}
	d.looks[k] = out
	return out
}

// withoutDefer gives oc a copy of its document and operation without @defer
// directives.
func withoutDefer(oc *graphql.OperationContext) { rewriteDefer(oc, nil, nil, nil) }

// rewriteDefer gives oc a copy of its document and operation in which each
// fragment with @defer, if true, spread on an object type generated.Objects
// marshals, has skip put first among its directives (the copy recorded in
// marks with its label), and every other @defer is removed; with skip nil,
// every @defer is removed. The cached document is shared by other
// requests: the nodes on the way to a @defer are copied (each copy recorded
// in orig with its original, when orig is not nil), the rest shared.
func rewriteDefer(oc *graphql.OperationContext, skip *ast.Directive, marks map[ast.Selection]string, orig map[ast.Selection]ast.Selection) {
	r := rewriter{vars: oc.Variables, skip: skip, marks: marks, orig: orig}
	doc := *oc.Doc
	doc.Fragments = make(ast.FragmentDefinitionList, len(oc.Doc.Fragments))
	for i, f := range oc.Doc.Fragments {
		if ss, changed := r.selections(f.SelectionSet, f.TypeCondition); changed {
			c := *f
			c.SelectionSet = ss
			f = &c
		}
		doc.Fragments[i] = f
	}
	op := *oc.Operation
	root := map[ast.Operation]string{ast.Query: "Query", ast.Mutation: "Mutation", ast.Subscription: "Subscription"}[op.Operation]
	op.SelectionSet, _ = r.selections(op.SelectionSet, root)
	doc.Operations = make(ast.OperationList, len(oc.Doc.Operations))
	for i, o := range oc.Doc.Operations {
		if o == oc.Operation {
			o = &op
		}
		doc.Operations[i] = o
	}
	oc.Doc, oc.Operation = &doc, &op
}

type rewriter struct {
	vars  map[string]any
	skip  *ast.Directive
	marks map[ast.Selection]string
	orig  map[ast.Selection]ast.Selection
}

// selections rewrites ss, the selections of an object of type typ: each
// selection is visited once (the walk enters none; a field's and an inline
// fragment's selections are rewritten by a walk of their own).
func (r rewriter) selections(ss ast.SelectionSet, typ string) (ast.SelectionSet, bool) {
	var out ast.SelectionSet
	i := -1 // the index in ss of the selection visited
	replace := func(n ast.Selection, label string, marked bool) {
		if out == nil {
			out = slices.Clone(ss)
		}
		out[i] = n
		if marked {
			r.marks[n] = label
		}
		if r.orig != nil {
			r.orig[n] = ss[i]
		}
	}
	var w walk.Walker
	w.Walk(ss, walk.Visitor{
		Field: func(f *ast.Field) bool {
			i++
			if f.Definition == nil || len(f.SelectionSet) == 0 {
				return false
			}
			if sub, changed := r.selections(f.SelectionSet, f.Definition.Type.Name()); changed {
				c := *f
				c.SelectionSet = sub
				replace(&c, "", false)
			}
			return false
		},
		Fragment: func(f walk.Fragment) bool {
			i++
			dirs, dropped, label, marked := r.directives(f.Directives, typ)
			if s, ok := f.Selection.(*ast.InlineFragment); ok {
				inner := typ
				if s.TypeCondition != "" {
					inner = s.TypeCondition
				}
				if sub, changed := r.selections(s.SelectionSet, inner); changed || dropped {
					c := *s
					c.SelectionSet, c.Directives = sub, dirs
					replace(&c, label, marked)
				}
			} else if dropped {
				c := *f.Selection.(*ast.FragmentSpread)
				c.Directives = dirs
				replace(&c, label, marked)
			}
			return false
		},
	})
	if out == nil {
		return ss, false
	}
	return out, true
}

// directives returns the directives dirs of a fragment spread on an object
// of type typ rewritten (changed: false when it has no @defer): skip first
// (marked, with the @defer's label) or without @defer.
func (r rewriter) directives(dirs ast.DirectiveList, typ string) (out ast.DirectiveList, changed bool, label string, marked bool) {
	dir := dirs.ForName("defer")
	if dir == nil {
		return dirs, false, "", false
	}
	args := dir.ArgumentMap(r.vars)
	if on, ok := args["if"].(bool); r.skip != nil && (!ok || on) && generated.IsObject(typ) {
		label, _ = args["label"].(string)
		return append(ast.DirectiveList{r.skip}, dirs...), true, label, true
	}
	out = make(ast.DirectiveList, 0, len(dirs)-1)
	for _, d := range dirs {
		if d.Name != "defer" {
			out = append(out, d)
		}
	}
	return out, true, "", false
}
