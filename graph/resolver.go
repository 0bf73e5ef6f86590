package graph

import (
	"log/slog"

	"github.com/workspacenet/facade/graph/admission"
	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/graph/paging"
	"github.com/workspacenet/facade/internal/policy/live"
	"github.com/workspacenet/facade/restclient"
)

// This file will not be regenerated automatically.
//
// It serves as dependency injection for your app, add any dependencies you require
// here.

// Resolver is the root resolver, the one generated.ResolverRoot (its
// getters are gqlgen's, in the *.resolvers.go files): it holds what every
// field resolver needs.
type Resolver struct {
	client *restclient.Client
	log    *slog.Logger
	// cursors seals the connections' cursors (Options.CursorSecret).
	cursors *paging.Codec
	// live feeds the subscriptions (Options.Live); nil: subscriptions off.
	live *live.Hub
	// admit admits each event of a subscription (nil: admission off).
	admit *admission.Controller
}

// requestLoaders returns the Source of one request: NewLoaders' when set,
// else the batching loaders tuned by Loaders, made in batching (in the
// request's own allocation).
func (o *Options) requestLoaders(batching *loaders.Loaders) loaders.Source {
	if o.NewLoaders != nil {
		return o.NewLoaders(o.Client)
	}
	cfg := o.Loaders
	cfg.Priority = callPriority
	batching.Init(o.Client, cfg)
	return batching
}
