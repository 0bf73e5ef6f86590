package graph

import (
	"log/slog"

	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/graph/paging"
	"github.com/workspacenet/facade/restclient"
)

// This file will not be regenerated automatically.
//
// It serves as dependency injection for your app, add any dependencies you require
// here.

// Resolver is the root resolver: it holds what every field resolver needs.
type Resolver struct {
	client *restclient.Client
	cache  Invalidator // nil: no response cache
	log    *slog.Logger
	// cursors seals the connections' cursors (Options.CursorSecret).
	cursors *paging.Codec
	// plainFields: the handler has no field interceptor (graph/leaf).
	plainFields bool
}

// PlainFields implements leaf.Root: plain leaf fields may be written
// without graphql.ResolveField unless the handler has a field interceptor.
func (r *Resolver) PlainFields() bool { return r.plainFields }

// newLoaders returns the Source of one request: NewLoaders' when set, else
// the batching loaders tuned by Loaders.
func (o *Options) newLoaders() loaders.Source {
	if o.NewLoaders != nil {
		return o.NewLoaders(o.Client)
	}
	return loaders.New(o.Client, o.Loaders)
}
