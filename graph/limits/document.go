package limits

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/workspacenet/facade/graph/walk"
)

// Document limits are checked on the parsed document before validation:
// some validation rules (overlapping fields) take time quadratic in the
// number of selections, and a document's validation errors are one per
// offending node, so a 20 kB document of repeated fields or directives could
// cost seconds of CPU or a multi-megabyte error list. The counts are of the
// document as written (fragments counted once, not expanded).
const (
	// Selections: fields, fragment spreads and inline fragments.
	Selections = "selections"
	// Directives: directive uses (@include, @skip, unknown ones).
	Directives = "directives"

	DefaultMaxSelections = 1000
	DefaultMaxDirectives = 50
)

var _ graphql.OperationParameterMutator = (*Extension)(nil)

// MutateOperationParameters refuses a document with more selections or
// directives than allowed, before gqlgen validates it. Documents that do not
// parse are left to gqlgen, which reports the parse error. A document in the
// query cache (UseQueryCache) is counted as cached, not parsed again.
func (x *Extension) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	maxSel, maxDir := x.cfg.MaxSelections, x.cfg.MaxDirectives // defaults applied by New; 0 = off
	if p.Query == "" || maxSel == 0 && maxDir == 0 {
		return nil
	}
	var doc *ast.QueryDocument
	if x.docs != nil {
		doc, _ = x.docs.Get(ctx, p.Query)
	}
	if doc == nil {
		var err error
		if doc, err = parser.ParseQueryWithTokenLimit(&ast.Source{Input: p.Query}, x.cfg.MaxTokens); err != nil {
			return nil
		}
	}
	sel, dir := CountDocument(doc)
	switch {
	case maxSel > 0 && sel > maxSel:
		return Error(Selections, sel, maxSel)
	case maxDir > 0 && dir > maxDir:
		return Error(Directives, dir, maxDir)
	}
	return nil
}

// CountDocument returns the selections and directive uses written in doc.
func CountDocument(doc *ast.QueryDocument) (selections, directives int) {
	var w walk.Walker
	count := walk.Visitor{
		Field: func(f *ast.Field) bool {
			selections++
			directives += len(f.Directives)
			return true
		},
		Fragment: func(f walk.Fragment) bool {
			selections++
			directives += len(f.Directives)
			return !f.Spread // a fragment is counted where it is defined
		},
	}
	for _, op := range doc.Operations {
		directives += len(op.Directives)
		for _, v := range op.VariableDefinitions {
			directives += len(v.Directives)
		}
		w.Walk(op.SelectionSet, count)
	}
	for _, f := range doc.Fragments {
		directives += len(f.Directives)
		w.Walk(f.SelectionSet, count)
	}
	return selections, directives
}

// NodeBytes is the memory counted for each node of a parsed document
// (DocumentBytes): parsed documents of 1,000 to 7,000 selections,
// directives, arguments or list values measured 90 to 250 bytes of heap per
// node; 320 leaves room for what validation adds.
const NodeBytes = 320

// DocumentBytes estimates the memory a parsed document of query holds: the
// text (which its positions and comments keep alive) and NodeBytes for each
// selection, argument, value, directive, variable and fragment definition.
// It weighs the entries of the server's parsed-document cache: a short text
// can parse into many nodes ("a " is one selection of about 224 bytes of heap).
func DocumentBytes(query string, doc *ast.QueryDocument) int64 {
	if doc == nil {
		return int64(len(query))
	}
	var n nodeCounter
	var w walk.Walker
	count := walk.Visitor{
		Field: func(f *ast.Field) bool {
			n.nodes++
			n.arguments(f.Arguments)
			n.directives(f.Directives)
			return true
		},
		Fragment: func(f walk.Fragment) bool {
			n.nodes++
			n.directives(f.Directives)
			return !f.Spread // a fragment is counted where it is defined
		},
	}
	for _, op := range doc.Operations {
		n.nodes += 1 + len(op.VariableDefinitions)
		for _, v := range op.VariableDefinitions {
			n.value(v.DefaultValue)
			n.directives(v.Directives)
		}
		n.directives(op.Directives)
		w.Walk(op.SelectionSet, count)
	}
	for _, f := range doc.Fragments {
		n.nodes++
		n.directives(f.Directives)
		w.Walk(f.SelectionSet, count)
	}
	return int64(len(query)) + int64(n.nodes)*NodeBytes
}

type nodeCounter struct{ nodes int }

func (n *nodeCounter) directives(ds ast.DirectiveList) {
	for _, d := range ds {
		n.nodes++
		n.arguments(d.Arguments)
	}
}

func (n *nodeCounter) arguments(as ast.ArgumentList) {
	for _, a := range as {
		n.nodes++
		n.value(a.Value)
	}
}

func (n *nodeCounter) value(v *ast.Value) {
	if v == nil {
		return
	}
	n.nodes++
	for _, c := range v.Children {
		n.value(c.Value)
	}
}
