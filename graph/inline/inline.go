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

// Inline reports whether an object's resolver field runs now, on this
// goroutine: it is not deferred (CollectedField.IsDeferred) and cannot
// block. The generated code then resolves it at once (runInline); the
// others that are not deferred it resolves together after the object's
// other fields (its blocking list, on goroutines as gqlgen's
// FieldSet.Dispatch would).
func (t *Table) Inline(field *ast.Field, deferred bool) bool {
	return !deferred && !t.mayBlock(field)
}

// MarshalSlice replaces graphql.MarshalSliceConcurrently for a list whose
// elements are marshalled with selection sel: when sel cannot block, the
// elements are marshalled one after the other on this goroutine, each with
// the field context (index) and panic recovery gqlgen gives it; when it may,
// the elements run together on reused goroutines (marshalConcurrently).
func (t *Table) MarshalSlice(ctx context.Context, sel ast.SelectionSet, length int, workerLimit int64, omitPanicHandler bool, marshal func(ctx context.Context, i int) graphql.Marshaler) graphql.Array {
	if length > 1 && t.selectionMayBlock(sel) {
		if workerLimit > 0 {
			return graphql.MarshalSliceConcurrently(ctx, length, workerLimit, omitPanicHandler, marshal)
		}
		return marshalConcurrently(ctx, length, omitPanicHandler, marshal)
	}
	if length <= 1 {
		return graphql.MarshalSliceConcurrently(ctx, length, workerLimit, omitPanicHandler, marshal)
	}
	ret := make(graphql.Array, length)
	elems := make([]element, length) // the elements' contexts, one allocation
	var failed atomic.Bool
	for i := range length {
		ret[i] = marshalElement(ctx, &elems[i], i, omitPanicHandler, &failed, marshal)
	}
	if failed.Load() {
		return nil
	}
	return ret
}

// element is the context of a list element (its field context) and the
// index the field context points to.
type element struct {
	fieldCtx
	index int
}

// marshalElement marshals element i of a list with its context, kept in e
// (graphql.WithFieldContext's value without its allocation), and unless omitPanicHandler recovers a panic as gqlgen does: an error
// on the element's path, and failed set (the list is then null).
func marshalElement(ctx context.Context, e *element, i int, omitPanicHandler bool, failed *atomic.Bool, marshal func(ctx context.Context, i int) graphql.Marshaler) (m graphql.Marshaler) {
	e.index = i
	e.parent = ctx
	e.fc.Index = &e.index
	e.fc.Parent = graphql.GetFieldContext(ctx)
	childCtx := context.Context(&e.fieldCtx)
	if !omitPanicHandler {
		defer func() {
			if r := recover(); r != nil {
				graphql.AddError(childCtx, graphql.Recover(childCtx, r))
				failed.Store(true)
			}
		}()
	}
	return marshal(childCtx, i)
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

// Child holds the Child of the field contexts of one object type in one
// execution (ChildOf).
type Child struct{ f ChildFunc }

// ChildOf returns the Child stored in slot, made by mk and stored on first
// use: gqlgen makes the same closure (the execution context's childFields
// function of a type) anew for every field context of an object-typed
// field; the generated code keeps one per type in its execution context.
// mk is called at most once per slot unless two goroutines race to fill it,
// when one result is kept.
func ChildOf(slot *atomic.Pointer[Child], mk func() ChildFunc) ChildFunc {
	if c := slot.Load(); c != nil {
		return c.f
	}
	c := &Child{mk()}
	if !slot.CompareAndSwap(nil, c) {
		c = slot.Load()
	}
	return c.f
}

// ScalarFieldContext replaces graphql.NewScalarFieldContext: the same field
// context, with a Child made once (NoChildFields).
func (*Table) ScalarFieldContext(object string, field graphql.CollectedField, isMethod, isResolver bool, child ChildFunc) (*graphql.FieldContext, error) {
	return &graphql.FieldContext{Object: object, Field: field, IsMethod: isMethod, IsResolver: isResolver, Child: child}, nil
}

// NewFieldSet replaces graphql.NewFieldSet(fields) for an object's fields:
// the same FieldSet, and the Marshaler to return once it is resolved (after
// Dispatch), which writes the same JSON object as FieldSet.MarshalGQL (each
// alias once, the first, in order) without its iterator, per-field pointers
// and map. The FieldSet, its Values (up to 32 fields) and the Marshaler are
// one allocation (gqlgen makes two, and the generator's former Object a
// third). The FieldSet does not know its fields: it must be used only
// through Values, Invalids and Dispatch, not written as it is
// or given views (graph/internal/gqlgen rewrites only the FieldSet of an
// object's own fields, not the deferred one).
func (*Table) NewFieldSet(fields []graphql.CollectedField) (*graphql.FieldSet, graphql.Marshaler) {
	switch n := len(fields); {
	case n <= 4:
		o := &object4{fields: fields}
		o.fs.Values = o.values[:n]
		return &o.fs, o
	case n <= 8:
		o := &object8{fields: fields}
		o.fs.Values = o.values[:n]
		return &o.fs, o
	case n <= 16:
		o := &object16{fields: fields}
		o.fs.Values = o.values[:n]
		return &o.fs, o
	case n <= 32:
		o := &object32{fields: fields}
		o.fs.Values = o.values[:n]
		return &o.fs, o
	default:
		o := &object{fields: fields}
		o.fs.Values = make([]graphql.Marshaler, n)
		return &o.fs, o
	}
}

type object struct {
	fs     graphql.FieldSet
	fields []graphql.CollectedField
}

type object4 struct {
	fs     graphql.FieldSet
	fields []graphql.CollectedField
	values [4]graphql.Marshaler
}

type object8 struct {
	fs     graphql.FieldSet
	fields []graphql.CollectedField
	values [8]graphql.Marshaler
}

type object16 struct {
	fs     graphql.FieldSet
	fields []graphql.CollectedField
	values [16]graphql.Marshaler
}

type object32 struct {
	fs     graphql.FieldSet
	fields []graphql.CollectedField
	values [32]graphql.Marshaler
}

func (o *object) MarshalGQL(w io.Writer)   { writeObject(w, o.fields, o.fs.Values) }
func (o *object4) MarshalGQL(w io.Writer)  { writeObject(w, o.fields, o.fs.Values) }
func (o *object8) MarshalGQL(w io.Writer)  { writeObject(w, o.fields, o.fs.Values) }
func (o *object16) MarshalGQL(w io.Writer) { writeObject(w, o.fields, o.fs.Values) }
func (o *object32) MarshalGQL(w io.Writer) { writeObject(w, o.fields, o.fs.Values) }

func writeObject(w io.Writer, fields []graphql.CollectedField, values []graphql.Marshaler) {
	_, _ = io.WriteString(w, "{")
	first := true
next:
	for i := range fields {
		alias := fields[i].Alias
		for j := range i {
			if fields[j].Alias == alias {
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
		values[i].MarshalGQL(w)
	}
	_, _ = io.WriteString(w, "}")
}

// Deferred replaces an object's deferred FieldSet and label map, which gqlgen
// makes for every object: they are made only when one of its fields is
// deferred, else nil (the generated code then neither adds to them nor
// processes a deferred group).
func (*Table) Deferred(fields []graphql.CollectedField) (*graphql.FieldSet, map[string]*graphql.FieldSetView) {
	for i := range fields {
		if fields[i].IsDeferred() {
			return graphql.NewFieldSet(nil), make(map[string]*graphql.FieldSetView)
		}
	}
	return nil, nil
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

// Collected replaces graphql.CollectFields for one operation: the same
// fields, cached by the selection set and the type's implementors (the
// generated code's package-level slice, so its address names it), without
// the hash and allocation gqlgen's cache key costs on every object. The
// first entries are kept in place (most operations select few object
// types), the others in a map. Its zero value is ready; it must not be
// copied.
type Collected struct {
	mu    sync.RWMutex
	n     int
	first [collectedInPlace]collectedEntry
	more  map[collectKey][]graphql.CollectedField
}

const collectedInPlace = 8

type collectKey struct {
	sel        *ast.Selection
	n          int
	implements *string
}

type collectedEntry struct {
	key    collectKey
	fields []graphql.CollectedField
}

// Fields returns graphql.CollectFields(oc, sel, implements), computed once
// per selection set and type in the operation oc, or once for all
// operations when no directive decides it (shared).
func (c *Collected) Fields(oc *graphql.OperationContext, sel ast.SelectionSet, implements []string) []graphql.CollectedField {
	if len(sel) == 0 || len(implements) == 0 {
		return graphql.CollectFields(oc, sel, implements)
	}
	k := collectKey{&sel[0], len(sel), &implements[0]}
	if v, ok := shared.m.Load(k); ok {
		return v.([]graphql.CollectedField)
	}
	c.mu.RLock()
	fields, ok := c.lookup(k)
	c.mu.RUnlock()
	if ok {
		return fields
	}
	fields = graphql.CollectFields(oc, sel, implements)
	if withoutDirectives(sel, 0) {
		if shared.n.Add(1) > sharedLimit {
			shared.m.Clear()
			shared.n.Store(0)
		}
		shared.m.Store(k, fields)
		return fields
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.lookup(k); ok {
		return f
	}
	if c.n < collectedInPlace {
		c.first[c.n] = collectedEntry{k, fields}
		c.n++
		return fields
	}
	if c.more == nil {
		c.more = make(map[collectKey][]graphql.CollectedField)
	}
	c.more[k] = fields
	return fields
}

// shared holds, across operations, the collected fields of the selection
// sets that no directive touches: those depend on nothing but the selection
// set (a parsed document's, kept in the query cache and shared by the
// operations that run it; the key keeps it alive) and the type, where
// @skip, @include and @defer depend on each operation's variables. They
// are read only, as Collected's are. Past sharedLimit entries it starts
// over. It pays where documents are parsed once and run many times (the
// handler's query cache and APQ); an executor without a query cache parses
// each operation anew, and then adds its entries for nothing (about 1 %
// more allocations in BenchmarkExecTransactions, which has none).
var shared struct {
	m sync.Map // collectKey -> []graphql.CollectedField
	n atomic.Int64
}

const sharedLimit = 1 << 14

// withoutDirectives reports whether no directive applies to sel's fields,
// fragments and the fragments' definitions, which decide how its fields
// are collected (not the fields' own selections).
func withoutDirectives(sel ast.SelectionSet, depth int) bool {
	if depth > 32 {
		return false
	}
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if len(s.Directives) > 0 {
				return false
			}
		case *ast.InlineFragment:
			if len(s.Directives) > 0 || !withoutDirectives(s.SelectionSet, depth+1) {
				return false
			}
		case *ast.FragmentSpread:
			if len(s.Directives) > 0 || s.Definition == nil || len(s.Definition.Directives) > 0 ||
				!withoutDirectives(s.Definition.SelectionSet, depth+1) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// lookup finds k's fields; c.mu must be held.
func (c *Collected) lookup(k collectKey) ([]graphql.CollectedField, bool) {
	for i := range c.n {
		if c.first[i].key == k {
			return c.first[i].fields, true
		}
	}
	fields, ok := c.more[k]
	return fields, ok
}
