package inline

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

type otherKey struct{}

// TestNewFieldContext: the context NewFieldContext returns is what
// graphql.WithFieldContext returns: its field context found by gqlgen, the
// parent's as Parent (and in the path), the parent's values, deadline and
// cancellation; in one allocation.
func TestNewFieldContext(t *testing.T) {
	base, cancel := context.WithCancel(context.WithValue(context.Background(), otherKey{}, "v"))
	outer := &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Alias: "outer"}}}
	parent := graphql.WithFieldContext(base, outer)

	ctx, fc := NewFieldContext(parent)
	if fc.Parent != outer {
		t.Fatalf("Parent %p, want %p", fc.Parent, outer)
	}
	if err := tbl.FillScalarFieldContext(fc, "T", graphql.CollectedField{Field: &ast.Field{Alias: "inner"}}, false, true, NoChildFields("ID")); err != nil {
		t.Fatal(err)
	}
	if got := graphql.GetFieldContext(ctx); got != fc || got.Parent != outer || got.Object != "T" || !got.IsResolver {
		t.Fatalf("field context %+v", got)
	}
	if p := graphql.GetPath(ctx).String(); p != "outer.inner" {
		t.Errorf("path %q", p)
	}
	if ctx.Value(otherKey{}) != "v" {
		t.Error("parent's value not found")
	}
	// A context derived from it is cancelled with the parent.
	child, stop := context.WithCancel(ctx)
	defer stop()
	if ctx.Err() != nil || child.Err() != nil {
		t.Fatal("cancelled early")
	}
	cancel()
	<-child.Done()
	if ctx.Err() != context.Canceled || context.Cause(child) != context.Canceled {
		t.Errorf("Err %v, cause %v", ctx.Err(), context.Cause(child))
	}
	if n := testing.AllocsPerRun(100, func() { NewFieldContext(parent) }); n != 1 {
		t.Errorf("%v allocations, want 1", n)
	}
}

// TestNestedFieldContexts: through fields and list elements, each context
// finds its own field context (the path), and the values, deadline and
// cancellation of the context above them all.
func TestNestedFieldContexts(t *testing.T) {
	base, cancel := context.WithDeadline(context.WithValue(context.Background(), otherKey{}, "v"), time.Now().Add(time.Hour))
	ctx := base
	var fields []*graphql.FieldContext
	for i := range 6 {
		if i%2 == 1 { // a list element: marshalElement's context
			e := &element{}
			e.index, e.parent = i, ctx
			e.fc.Index = &e.index
			e.fc.Parent = graphql.GetFieldContext(ctx)
			ctx = &e.fieldCtx
			fields = append(fields, &e.fc)
			continue
		}
		var fc *graphql.FieldContext
		ctx, fc = NewFieldContext(ctx)
		fc.Field = graphql.CollectedField{Field: &ast.Field{Alias: fmt.Sprint("f", i)}}
		fields = append(fields, fc)
	}
	if got := graphql.GetFieldContext(ctx); got != fields[len(fields)-1] {
		t.Fatalf("field context %p, want %p", got, fields[len(fields)-1])
	}
	if p := graphql.GetPath(ctx).String(); p != "f0[1].f2[3].f4[5]" {
		t.Errorf("path %q", p)
	}
	if ctx.Value(otherKey{}) != "v" {
		t.Error("value of the context above not found")
	}
	if d, ok := ctx.Deadline(); !ok || d != func() time.Time { d, _ := base.Deadline(); return d }() {
		t.Errorf("deadline %v %t", d, ok)
	}
	if ctx.Done() != base.Done() || ctx.Err() != nil {
		t.Fatal("not the base's Done, or cancelled early")
	}
	cancel()
	if ctx.Err() != context.Canceled {
		t.Errorf("Err %v after the base was cancelled", ctx.Err())
	}
}

// BenchmarkFieldContext: a field's context and its context value made by
// NewFieldContext, against gqlgen's two allocations.
func BenchmarkFieldContext(b *testing.B) {
	parent := graphql.WithFieldContext(context.Background(), &graphql.FieldContext{})
	var sink context.Context
	b.Run("inline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, fc := NewFieldContext(parent)
			_ = tbl.FillScalarFieldContext(fc, "T", graphql.CollectedField{}, false, true, nil)
			sink = ctx
		}
	})
	b.Run("gqlgen", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			fc, _ := tbl.ScalarFieldContext("T", graphql.CollectedField{}, false, true, nil)
			sink = graphql.WithFieldContext(parent, fc)
		}
	})
	_ = sink
}
