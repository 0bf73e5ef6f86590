package limits

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
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
	var c counter
	for _, op := range doc.Operations {
		c.directives += len(op.Directives)
		for _, v := range op.VariableDefinitions {
			c.directives += len(v.Directives)
		}
		c.walk(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		c.directives += len(f.Directives)
		c.walk(f.SelectionSet)
	}
	return c.selections, c.directives
}

type counter struct{ selections, directives int }

func (c *counter) walk(set ast.SelectionSet) {
	for _, s := range set {
		c.selections++
		switch s := s.(type) {
		case *ast.Field:
			c.directives += len(s.Directives)
			c.walk(s.SelectionSet)
		case *ast.InlineFragment:
			c.directives += len(s.Directives)
			c.walk(s.SelectionSet)
		case *ast.FragmentSpread:
			c.directives += len(s.Directives)
		}
	}
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
	for _, op := range doc.Operations {
		n.nodes += 1 + len(op.VariableDefinitions)
		for _, v := range op.VariableDefinitions {
			n.value(v.DefaultValue)
			n.directives(v.Directives)
		}
		n.directives(op.Directives)
		n.set(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		n.nodes++
		n.directives(f.Directives)
		n.set(f.SelectionSet)
	}
	return int64(len(query)) + int64(n.nodes)*NodeBytes
}

type nodeCounter struct{ nodes int }

func (n *nodeCounter) set(set ast.SelectionSet) {
	for _, s := range set {
		n.nodes++
		switch s := s.(type) {
		case *ast.Field:
			n.arguments(s.Arguments)
			n.directives(s.Directives)
			n.set(s.SelectionSet)
		case *ast.InlineFragment:
			n.directives(s.Directives)
			n.set(s.SelectionSet)
		case *ast.FragmentSpread:
			n.directives(s.Directives)
		}
	}
}

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
