package inline

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// fieldContextKey is the key graphql.WithFieldContext stores a field context
// under (gqlgen does not export it): the key graphql.GetFieldContext asks
// for, found once by asking a context that records it. fieldCtx answers it.
var fieldContextKey = func() any {
	p := &keyProbe{Context: context.Background()}
	graphql.GetFieldContext(p)
	return p.key
}()

// init checks what fieldCtx relies on: gqlgen finds the field context of a
// fieldCtx.
func init() {
	c := &fieldCtx{parent: context.Background()}
	if fieldContextKey == nil || graphql.GetFieldContext(c) != &c.fc {
		panic("graph/inline: gqlgen's field context key not found: update graph/inline")
	}
}

// keyProbe records the key of the first Value asked of it.
type keyProbe struct {
	context.Context
	key any
}

func (p *keyProbe) Value(k any) any {
	if p.key == nil {
		p.key = k
	}
	return nil
}

// fieldCtx is a context carrying a field context: what
// graphql.WithFieldContext makes in two allocations (the FieldContext and
// the context value holding it) in one.
type fieldCtx struct {
	parent context.Context
	fc     graphql.FieldContext
}

func (c *fieldCtx) Deadline() (time.Time, bool) { return c.above().Deadline() }
func (c *fieldCtx) Done() <-chan struct{}       { return c.above().Done() }
func (c *fieldCtx) Err() error                  { return c.above().Err() }

func (c *fieldCtx) Value(k any) any {
	if k == fieldContextKey {
		return &c.fc
	}
	return c.above().Value(k)
}

// above returns the first context above c that is not a field's or a list
// element's (an element's context is its embedded fieldCtx): those answer
// nothing but the field context key (a value, the deadline and
// cancellation are their parents'), so a lookup from a deep field skips
// them in one loop instead of a call per level.
func (c *fieldCtx) above() context.Context {
	p := c.parent
	for {
		f, ok := p.(*fieldCtx)
		if !ok {
			return p
		}
		p = f.parent
	}
}

func (c *fieldCtx) String() string { return "inline.fieldCtx" }

// NewFieldContext returns what graphql.WithFieldContext(parent, fc) returns,
// and fc, in one allocation: fc's Parent is set (parent's field context) and
// the rest is the caller's to fill, before the context is used. A fill must
// keep Parent.
func NewFieldContext(parent context.Context) (context.Context, *graphql.FieldContext) {
	c := &fieldCtx{parent: parent}
	c.fc.Parent = graphql.GetFieldContext(parent)
	return c, &c.fc
}

// FillScalarFieldContext is ScalarFieldContext into fc, whose Parent it
// keeps.
func (*Table) FillScalarFieldContext(fc *graphql.FieldContext, object string, field graphql.CollectedField, isMethod, isResolver bool, child ChildFunc) error {
	*fc = graphql.FieldContext{Parent: fc.Parent, Object: object, Field: field, IsMethod: isMethod, IsResolver: isResolver, Child: child}
	return nil
}
