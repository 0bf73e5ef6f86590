// Package ctxval is a context carrying one value, for values that should
// share an allocation with what holds them (embed a Context in the
// request's own struct): context.WithValue allocates a context of its own.
package ctxval

import "context"

// Context is its parent carrying V as the value of the key K (an unexported
// empty struct type of the package that owns the value). The zero value is
// not usable: set Context (the parent) and V.
type Context[K comparable, V any] struct {
	context.Context
	V V
}

// Value returns c.V for a key of type K, and asks the parent otherwise.
func (c *Context[K, V]) Value(k any) any {
	if _, ok := k.(K); ok {
		return c.V
	}
	return c.Context.Value(k)
}
