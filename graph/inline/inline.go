// Package inline lets gqlgen's generated executor run on the calling
// goroutine what cannot wait for the network, instead of on a goroutine of
// its own.
//
// gqlgen starts a goroutine for every element of an object list and for
// every resolver field of an object (graphql.MarshalSliceConcurrently,
// FieldSet.Concurrently), so that fields which wait for upstream calls wait
// together. Most of those goroutines wait for nothing: a list of products
// selecting plain fields, a transaction's location built from its reference.
// The generator (graph/internal/gqlgen) rewrites those two calls in the
// generated code to the methods of a Table listing the fields that may block
// (the resolvers that may load data); a field, or a list's elements, whose
// selection holds none of them anywhere beneath runs inline. What may block
// keeps gqlgen's concurrency, so upstream calls are made exactly as before.
package inline

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// key names a field of a type.
type key struct{ typ, field string }

// Table is the generated code's list of the fields that may block.
type Table struct {
	blocking map[key]bool
	byName   map[string]bool // a field of that name may block on some type

	memo    sync.Map // *ast.Field -> bool: its selection may block
	entries atomic.Int64
}

// memoLimit bounds the memo, keyed by the fields of parsed documents: past it
// the memo starts over (documents beyond the query cache are not kept alive).
const memoLimit = 1 << 16

// NewTable returns the table of the blocking fields, each "Type.field".
func NewTable(blocking ...string) *Table {
	t := &Table{blocking: map[key]bool{}, byName: map[string]bool{}}
	for _, f := range blocking {
		for i := 0; i < len(f); i++ {
			if f[i] == '.' {
				t.blocking[key{f[:i], f[i+1:]}] = true
				t.byName[f[i+1:]] = true
				break
			}
		}
	}
	return t
}

// Concurrently replaces fs.Concurrently(i, f) for the field of index i of a
// non-root object: f runs now, on this goroutine, when the field cannot
// block; else it is left to fs.Dispatch as gqlgen does.
func (t *Table) Concurrently(ctx context.Context, fs *graphql.FieldSet, i int, field graphql.CollectedField, f func(context.Context) graphql.Marshaler) {
	if t.mayBlock(field.Field) {
		fs.Concurrently(i, f)
		return
	}
	fs.Values[i] = f(ctx)
}

// MarshalSlice replaces graphql.MarshalSliceConcurrently for a list whose
// elements are marshalled with selection sel: when sel cannot block, the
// elements are marshalled one after the other on this goroutine, each with
// the field context (index) and panic recovery gqlgen gives it.
func (t *Table) MarshalSlice(ctx context.Context, sel ast.SelectionSet, length int, workerLimit int64, omitPanicHandler bool, marshal func(ctx context.Context, i int) graphql.Marshaler) graphql.Array {
	if length <= 1 || t.selectionMayBlock(sel) {
		return graphql.MarshalSliceConcurrently(ctx, length, workerLimit, omitPanicHandler, marshal)
	}
	ret := make(graphql.Array, length)
	failed := false
	for i := range length {
		fc := &graphql.FieldContext{Index: &i}
		childCtx := graphql.WithFieldContext(ctx, fc)
		if omitPanicHandler {
			ret[i] = marshal(childCtx, i)
			continue
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					graphql.AddError(childCtx, graphql.Recover(childCtx, r))
					failed = true
				}
			}()
			ret[i] = marshal(childCtx, i)
		}()
	}
	if failed {
		return nil
	}
	return ret
}

// DeferredPath replaces graphql.GetPath(ctx) as the path of an object's
// deferred group: gqlgen computes it (allocating) for every object, where it
// is needed only when the object has deferred fragments (defers not empty).
func (*Table) DeferredPath(ctx context.Context, defers map[string]*graphql.FieldSetView) ast.Path {
	if len(defers) == 0 {
		return nil
	}
	return graphql.GetPath(ctx)
}

// ChildFunc is a graphql.FieldContext's Child.
type ChildFunc = func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error)

// NoChildFields is the Child of a leaf field of type typ: it reports that the
// field has no child fields. Made once per type (gqlgen makes the error and
// the function anew for every field resolved).
func NoChildFields(typ string) ChildFunc {
	err := errors.New("field of type " + typ + " does not have child fields")
	return func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error) { return nil, err }
}

// ScalarFieldContext replaces graphql.NewScalarFieldContext: the same field
// context, with a Child made once (NoChildFields).
func (*Table) ScalarFieldContext(object string, field graphql.CollectedField, isMethod, isResolver bool, child ChildFunc) (*graphql.FieldContext, error) {
	return &graphql.FieldContext{Object: object, Field: field, IsMethod: isMethod, IsResolver: isResolver, Child: child}, nil
}

// Object replaces an object's resolved graphql.FieldSet as its Marshaler:
// it writes the same JSON object (each alias once, the first, in order)
// without the iterator, the per-field pointers and the map gqlgen's
// FieldSet.MarshalGQL allocates. out must be resolved (after Dispatch).
func (*Table) Object(fields []graphql.CollectedField, out *graphql.FieldSet) graphql.Marshaler {
	return &object{fields: fields, values: out.Values}
}

type object struct {
	fields []graphql.CollectedField
	values []graphql.Marshaler
}

func (o *object) MarshalGQL(w io.Writer) {
	_, _ = io.WriteString(w, "{")
	first := true
next:
	for i := range o.fields {
		alias := o.fields[i].Alias
		for j := range i {
			if o.fields[j].Alias == alias {
				continue next
			}
		}
		if !first {
			_, _ = io.WriteString(w, ",")
		}
		first = false
		// An alias is a GraphQL name ([_A-Za-z][_0-9A-Za-z]*): nothing to escape.
		_, _ = io.WriteString(w, `"`)
		_, _ = io.WriteString(w, alias)
		_, _ = io.WriteString(w, `":`)
		o.values[i].MarshalGQL(w)
	}
	_, _ = io.WriteString(w, "}")
}

// mayBlock reports whether resolving f, or anything beneath it, may wait for
// an upstream call.
func (t *Table) mayBlock(f *ast.Field) bool {
	if f == nil {
		return true
	}
	if v, ok := t.memo.Load(f); ok {
		return v.(bool)
	}
	b := t.fieldBlocks(f) || t.selectionMayBlock(f.SelectionSet)
	if t.entries.Add(1) > memoLimit {
		t.memo.Clear()
		t.entries.Store(0)
	}
	t.memo.Store(f, b)
	return b
}

// fieldBlocks reports whether f's own resolver may block. A field read
// through an interface or union counts when a field of that name may block on
// any type.
func (t *Table) fieldBlocks(f *ast.Field) bool {
	if f.ObjectDefinition == nil {
		return true
	}
	if f.ObjectDefinition.Kind != ast.Object {
		return t.byName[f.Name]
	}
	return t.blocking[key{f.ObjectDefinition.Name, f.Name}]
}

// selectionMayBlock reports whether anything in sel, fragments included
// whatever their type condition or directives, may block.
func (t *Table) selectionMayBlock(sel ast.SelectionSet) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if t.mayBlock(s) {
				return true
			}
		case *ast.InlineFragment:
			if t.selectionMayBlock(s.SelectionSet) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Definition == nil || t.selectionMayBlock(s.Definition.SelectionSet) {
				return true
			}
		default:
			return true
		}
	}
	return false
}
