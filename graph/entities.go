package graph

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/restclient"
)

// The Federation entity resolvers (entity.resolvers.go) answer `_entities`:
// gqlgen groups a request's representations by __typename and hands each
// group, whole, to its type's resolver, which resolves it here through the
// request's loaders (loaders.For), exactly as links to the same objects
// would be: within the request each distinct id is fetched once, under the
// same budget, cache, breakers and call cap as any other field. 100
// representations naming 7 distinct resources make 7 REST calls.

// entities resolves the ids of one group of representations with load,
// concurrently (the loaders bound the calls in flight), and returns the
// results aligned with ids. A representation whose id is not a uuid, or that
// load fails for (not found, forbidden, ...), is nil with its coded error
// at its index of a graphql.BatchErrorList (gqlgen reports it on
// `_entities.<index>`); the others are answered. A malformed id costs no
// call.
func entities[T any](ctx context.Context, ids []string, load func(context.Context, string) (*T, error)) ([]*T, error) {
	out := make([]*T, len(ids))
	errs := make(graphql.BatchErrorList, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		if err := checkID("id", id); err != nil {
			errs[i] = err
			continue
		}
		wg.Go(func() { out[i], errs[i] = load(ctx, id) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			out[i] = nil
			return out, errs
		}
	}
	return out, nil
}

// unresolvable answers a group of representations of a type whose @key is
// `resolvable: false` (it has no REST route of its own): a router never asks
// for them, and each is nil with BAD_USER_INPUT.
func unresolvable[T any](typeName string, ids []string) ([]*T, error) {
	errs := make(graphql.BatchErrorList, len(ids))
	for i := range ids {
		errs[i] = gqlerr.Input("__typename", "%s cannot be fetched by id from this subgraph (its @key is resolvable: false)", typeName)
	}
	return make([]*T, len(ids)), errs
}

// byOp returns the load of entities by id through the request's loader of
// the GET op (loaders.Get).
func byOp[T any](op *restclient.Op[*T]) func(context.Context, string) (*T, error) {
	return func(ctx context.Context, id string) (*T, error) { return loaders.Get(ctx, op, id) }
}

// repIDs returns the ids of a group of representations.
func repIDs[R any](reps []*R, id func(*R) string) []string {
	out := make([]string, len(reps))
	for i, r := range reps {
		out[i] = id(r)
	}
	return out
}
