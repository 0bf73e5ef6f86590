package inline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

const schema = `
type Query { location: Location }
interface Node { id: ID! }
type Location implements Node { id: ID! products: [Product!]! transactions: [Transaction!]! }
type Product implements Node { id: ID! title: String location: Location options: [Option!]! }
type Option { id: ID! title: String }
type Transaction implements Node { id: ID! location: Location booking: Booking }
type Booking { id: ID! resource: Resource }
type Resource implements Node { id: ID! capacity: Int }
`

// blocking as graph/internal/gqlgen would list it for this schema.
var tbl = NewTable("Location.products", "Location.transactions", "Booking.resource")

// selection returns the selection set of the field at path (field names
// from the operation's root) of the validated query q.
func selection(t *testing.T, q string, path ...string) (*ast.Field, ast.SelectionSet) {
	t.Helper()
	s := gqlparser.MustLoadSchema(&ast.Source{Input: schema})
	doc, errs := gqlparser.LoadQuery(s, q)
	if errs != nil {
		t.Fatal(errs)
	}
	var f *ast.Field
	sel := doc.Operations[0].SelectionSet
	for _, name := range path {
		f = nil
		for _, c := range graphql.CollectFields(&graphql.OperationContext{Doc: doc}, sel, nil) {
			if c.Name == name {
				f = c.Field
			}
		}
		if f == nil {
			t.Fatalf("no field %s", name)
		}
		sel = f.SelectionSet
	}
	return f, sel
}

// TestWhatMayBlock: a field or list runs inline only when nothing beneath it,
// fragments included, is a blocking resolver.
func TestWhatMayBlock(t *testing.T) {
	for _, c := range []struct {
		name  string
		query string
		path  []string
		field bool // the field itself (else the elements of its list)
		want  bool
	}{
		{"plain product fields", `{ location { products { id title options { id } } } }`, []string{"location", "products"}, false, false},
		{"a product's location, plain", `{ location { products { location { id } } } }`, []string{"location", "products"}, false, false},
		{"a product's location's products", `{ location { products { location { products { id } } } } }`, []string{"location", "products"}, false, true},
		{"the blocking field itself", `{ location { products { id } } }`, []string{"location", "products"}, true, true},
		{"booking with its resource", `{ location { transactions { booking { resource { id } } } } }`, []string{"location", "transactions", "booking"}, true, true},
		{"booking without its resource", `{ location { transactions { booking { id } } } }`, []string{"location", "transactions", "booking"}, true, false},
		{"through a fragment spread", `{ location { transactions { ...T } } } fragment T on Transaction { booking { resource { id } } }`, []string{"location", "transactions"}, false, true},
		{"through an inline fragment on an interface", `{ location { transactions { ... on Node { id } location { ... on Node { ... on Location { products { id } } } } } } }`, []string{"location", "transactions"}, false, true},
		{"an interface's plain field", `{ location { transactions { ... on Node { id } } } }`, []string{"location", "transactions"}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, sel := selection(t, c.query, c.path...)
			var got bool
			if c.field {
				got = tbl.mayBlock(f)
			} else {
				got = tbl.selectionMayBlock(sel)
			}
			if got != c.want {
				t.Errorf("may block: %v, want %v", got, c.want)
			}
		})
	}
}

// TestMarshalSliceInline: an inline list marshals every element in order,
// each with its index in the field context; a panicking element makes the
// list null with an error, as gqlgen's concurrent marshalling does.
func TestMarshalSliceInline(t *testing.T) {
	_, sel := selection(t, `{ location { products { id } } }`, "location", "products")
	ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter,
		func(_ context.Context, r any) error { return fmt.Errorf("panic: %v", r) })
	ret := tbl.MarshalSlice(ctx, sel, 3, 0, false, func(ctx context.Context, i int) graphql.Marshaler {
		return graphql.MarshalInt(*graphql.GetFieldContext(ctx).Index * 10)
	})
	var b bytes.Buffer
	ret.MarshalGQL(&b)
	if b.String() != "[0,10,20]" {
		t.Fatalf("got %s", b.String())
	}
	ret = tbl.MarshalSlice(ctx, sel, 3, 0, false, func(ctx context.Context, i int) graphql.Marshaler {
		if i == 1 {
			panic("boom")
		}
		return graphql.MarshalInt(i)
	})
	if ret != nil || len(graphql.GetErrors(ctx)) != 1 {
		t.Fatalf("got %v, errors %v", ret, graphql.GetErrors(ctx))
	}
}

// TestDeferredPath: the path is computed only for an object with deferred
// fragments.
func TestDeferredPath(t *testing.T) {
	i := 3
	ctx := graphql.WithFieldContext(context.Background(), &graphql.FieldContext{Index: &i})
	if p := tbl.DeferredPath(ctx, nil); p != nil {
		t.Errorf("no defers: path %v, want nil", p)
	}
	if p := tbl.DeferredPath(ctx, map[string]*graphql.FieldSetView{"a": nil}); p.String() != "[3]" {
		t.Errorf("a defer: path %q, want [3]", p.String())
	}
}

// TestObjectIsFieldSetsJSON: NewFieldSet's Marshaler writes what gqlgen's
// FieldSet writes, each alias once (the first), whatever the number of
// fields.
func TestObjectIsFieldSetsJSON(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 5, 8, 9, 16, 17, 32, 33, 70} {
		var fields []graphql.CollectedField
		for i := range n {
			fields = append(fields, graphql.CollectedField{Field: &ast.Field{Alias: fmt.Sprintf("f%d", i%(n/2+1))}})
		}
		want := graphql.NewFieldSet(fields)
		out, object := tbl.NewFieldSet(fields)
		if len(out.Values) != n {
			t.Fatalf("%d fields: %d values", n, len(out.Values))
		}
		for i := range n {
			v := graphql.MarshalString(fmt.Sprintf("v\"%d", i))
			if i%5 == 2 {
				v = graphql.Null
			}
			want.Values[i], out.Values[i] = v, v
		}
		var w, got bytes.Buffer
		want.MarshalGQL(&w)
		object.MarshalGQL(&got)
		if got.String() != w.String() {
			t.Errorf("%d fields: got %s, FieldSet writes %s", n, got.String(), w.String())
		}
	}
}

// TestDeferred: an object's deferred FieldSet and labels exist only when a
// field is deferred.
func TestDeferred(t *testing.T) {
	plain := []graphql.CollectedField{{Field: &ast.Field{Alias: "a"}}}
	if fs, m := tbl.Deferred(plain); fs != nil || m != nil {
		t.Errorf("no deferred field: %v, %v", fs, m)
	}
	deferred := append(plain, graphql.CollectedField{Field: &ast.Field{Alias: "b"}, Deferrables: []*graphql.Deferrable{{Label: "x"}}})
	if fs, m := tbl.Deferred(deferred); fs == nil || m == nil {
		t.Error("a deferred field: no FieldSet or labels")
	}
}

// TestScalarFieldContext: a leaf field's context reports it has no children.
func TestScalarFieldContext(t *testing.T) {
	fc, err := tbl.ScalarFieldContext("T", graphql.CollectedField{}, false, true, NoChildFields("ID"))
	if err != nil || fc.Object != "T" || !fc.IsResolver {
		t.Fatalf("got %+v, %v", fc, err)
	}
	if _, err := fc.Child(context.Background(), graphql.CollectedField{}); err == nil || err.Error() != "field of type ID does not have child fields" {
		t.Errorf("child: %v", err)
	}
}

// TestCollected: the fields of a selection set and type are collected once
// per operation, whatever the number of entries, as graphql.CollectFields
// collects them.
func TestCollected(t *testing.T) {
	// @include: collected per operation (not shared).
	_, sel := selection(t, `{ location { id products @include(if: true) { id title } transactions { id } } }`, "location")
	oc := &graphql.OperationContext{}
	var c Collected
	types := make([][]string, 20)
	for i := range types {
		types[i] = []string{fmt.Sprintf("T%d", i)}
	}
	for range 2 {
		for i, impl := range types {
			got := c.Fields(oc, sel, impl)
			want := graphql.CollectFields(oc, sel, impl)
			if len(got) != len(want) || len(got) != 3 || got[1].Name != want[1].Name {
				t.Fatalf("type %d: %v, want %v", i, got, want)
			}
			if again := c.Fields(oc, sel, impl); &again[0] != &got[0] {
				t.Fatalf("type %d: collected twice", i)
			}
		}
	}
	if c.n != collectedInPlace || len(c.more) != len(types)-collectedInPlace {
		t.Errorf("%d entries in place, %d in the map", c.n, len(c.more))
	}
}

// TestChildOf: a slot's Child is made once and returned as made; taking it
// again allocates nothing.
func TestChildOf(t *testing.T) {
	var slot atomic.Pointer[Child]
	made := 0
	marker := errors.New("child")
	mk := func() ChildFunc {
		made++
		return func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error) { return nil, marker }
	}
	for range 3 {
		if _, err := ChildOf(&slot, mk)(context.Background(), graphql.CollectedField{}); err != marker {
			t.Fatalf("child: %v", err)
		}
	}
	if made != 1 {
		t.Errorf("made %d times", made)
	}
	if n := testing.AllocsPerRun(100, func() { ChildOf(&slot, mk) }); n != 0 {
		t.Errorf("%v allocations per Child taken", n)
	}
}

// BenchmarkChildOf: a field context's Child taken from its slot, against
// gqlgen's closure made for every field context.
func BenchmarkChildOf(b *testing.B) {
	type ec struct{ n int }
	e := &ec{}
	var slot atomic.Pointer[Child]
	var sink ChildFunc
	b.Run("slot", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			sink = ChildOf(&slot, func() ChildFunc {
				return func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error) { e.n++; return nil, nil }
			})
		}
	})
	b.Run("closure", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			sink = func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error) { e.n++; return nil, nil }
		}
	})
	_ = sink
}

// TestCollectedShared: the fields of a selection set no directive touches
// are collected once for every operation; where @include decides, each
// operation collects them with its own variables.
func TestCollectedShared(t *testing.T) {
	impl := []string{"Location"}
	s := gqlparser.MustLoadSchema(&ast.Source{Input: schema})
	location := func(q string) (*ast.QueryDocument, ast.SelectionSet) {
		doc, errs := gqlparser.LoadQuery(s, q)
		if errs != nil {
			t.Fatal(errs)
		}
		return doc, doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet
	}
	doc, plain := location(`{ location { id ... on Location { products { id } } ...F } } fragment F on Location { transactions { id } }`)
	first := (&Collected{}).Fields(&graphql.OperationContext{Doc: doc}, plain, impl)
	if len(first) != 3 {
		t.Fatalf("collected %d fields, want 3", len(first))
	}
	if again := (&Collected{}).Fields(&graphql.OperationContext{Doc: doc}, plain, impl); &again[0] != &first[0] {
		t.Error("a selection set without directives collected again by another operation")
	}

	for _, q := range []string{
		`query($v: Boolean!) { location { id products @include(if: $v) { id } } }`,
		`query($v: Boolean!) { location { id ... on Location @include(if: $v) { products { id } } } }`,
		`query($v: Boolean!) { location { id ...F @include(if: $v) } } fragment F on Location { products { id } }`,
		`query($v: Boolean!) { location { id ...F } } fragment F on Location { products @include(if: $v) { id } }`,
	} {
		doc, sel := location(q)
		for _, v := range []bool{true, false, true} {
			oc := &graphql.OperationContext{Doc: doc, Variables: map[string]any{"v": v}}
			got := (&Collected{}).Fields(oc, sel, impl)
			if want := map[bool]int{true: 2, false: 1}[v]; len(got) != want {
				t.Errorf("%s, $v %t: %d fields, want %d", q, v, len(got), want)
			}
		}
	}
}

// TestResponseSize: a document's next response is sized from its last, with
// room to grow; an unknown document's is not.
func TestResponseSize(t *testing.T) {
	doc, other := &ast.QueryDocument{}, &ast.QueryDocument{}
	if n := ResponseSize(doc); n != 0 {
		t.Fatalf("unknown document: %d", n)
	}
	SetResponseSize(doc, 1600)
	if n := ResponseSize(doc); n != 1700 {
		t.Errorf("after 1600 bytes: %d, want 1700", n)
	}
	SetResponseSize(doc, 32)
	if n := ResponseSize(doc); n != 34 || ResponseSize(other) != 0 {
		t.Errorf("after 32 bytes: %d (other document %d)", n, ResponseSize(other))
	}
	SetResponseSize(doc, 1<<30)
	if n := ResponseSize(doc); n > maxSizeHint+maxSizeHint/16 {
		t.Errorf("after 1 GiB: %d, want at most %d", n, maxSizeHint+maxSizeHint/16)
	}
}
