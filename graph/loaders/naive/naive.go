// Package naive is the benchmark's baseline loaders.Source: every field that
// needs an upstream object makes its own call. It has no batching, no
// per-request cache, no answers from embedded summaries and no lookups of
// products in their location's list (loaders.NewNaive). The benchmark and
// the tests that compare against the baseline select it with
// graph.Options.NewLoaders; production code does not import it.
package naive

import (
	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/restclient"
)

// New returns a naive Source for one GraphQL request. Its calls are bounded
// as the batching loaders' are: at most loaders.DefaultMaxConcurrency in
// flight (the request's call hooks cap and report them, as for every call).
func New(client *restclient.Client) loaders.Source { return loaders.NewNaive(client) }
