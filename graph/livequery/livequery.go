// Package livequery serves live queries (`query Q @live`, the
// graphql-live-query convention) over the transports that carry several
// results: the first result is the ordinary one; after it, each time a
// source the query read changes upstream, the query runs again and the
// client gets a JSON Patch of its result.
//
// What a live query watches is what its run read: every decoded GET of
// the run (called, or answered by the response cache) is mapped to a
// source of the live Hub (live.ForRead), so its changes come from the same
// poller as every subscription of the same client and source, on every
// replica. What no source watches is named in the first result.
//
// A re-run costs what changed: the bodies the last run read answer the
// re-run (memo), except those a change made stale; the changed objects a
// poll fetched are written into the bodies they belong to. Changes are
// coalesced into at most one re-run per interval; a re-run whose result
// equals the last sends nothing.
package livequery

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/workspacenet/facade/internal/policy/live"
	"github.com/workspacenet/facade/restclient"
)

// Defaults of Config.
const (
	// DefaultMaxBytes bounds what an idle live query keeps: its last
	// result and the bodies its last run read.
	DefaultMaxBytes = 1 << 20
	// DefaultReferenceInterval is the interval of reference data
	// (resources, events, products): the response cache's TTL of them.
	DefaultReferenceInterval = 30 * time.Second
)

// Config sizes an Engine.
type Config struct {
	Hub    *live.Hub
	Client *restclient.Client
	// MaxBytes bounds the bytes one live query keeps between its runs: a
	// result larger ends it with LIVE_QUERY_TOO_LARGE after it is sent;
	// a result and read bodies larger drop the bodies (its re-runs then
	// fetch what they read). 0: DefaultMaxBytes.
	MaxBytes int
	// ReferenceInterval: 0 is DefaultReferenceInterval.
	ReferenceInterval time.Duration
}

// Engine serves the live queries of one server.
type Engine struct{ c Config }

// New returns an Engine.
func New(c Config) *Engine {
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.ReferenceInterval <= 0 {
		c.ReferenceInterval = DefaultReferenceInterval
	}
	return &Engine{c: c}
}

// Is reports whether oc is a query with @live (if: true).
func Is(oc *graphql.OperationContext) bool {
	if oc == nil || oc.Operation == nil || oc.Operation.Operation != ast.Query {
		return false
	}
	d := oc.Operation.Directives.ForName("live")
	if d == nil {
		return false
	}
	args := d.ArgumentMap(oc.Variables)
	on, ok := args["if"].(bool)
	return !ok || on
}

type rerunKey struct{}

// IsRerun reports whether ctx is a live query's re-run: its upstream calls
// take the polls' turn in the client's budget (behind every interactive
// call).
func IsRerun(ctx context.Context) bool { return ctx.Value(rerunKey{}) != nil }
