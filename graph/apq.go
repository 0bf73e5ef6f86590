package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/internal/policy/apq"
	"github.com/workspacenet/facade/restclient"
)

// APQStore keeps the automatic persisted queries: Add in this process,
// Share for the other replicas too, as a registration of client (an
// upstream identity). internal/policy/apq's Store is one.
type APQStore interface {
	graphql.Cache[string]
	Share(ctx context.Context, hash, query, client string) bool
}

// A persisted query is registered only once its document has parsed and
// validated (and passed the operation limits): gqlgen's APQ extension adds
// the query it is sent before parsing it, so its Add only notes the query
// in the request (apqDeferred), and apqCommit, an operation context mutator
// that runs after validation and the limits, stores it locally. Once the
// operation has run, the handler shares it through Redis when the request's
// credentials are ones the upstream accepted (shareAPQ): anonymous callers
// and unproven credentials never write to Redis.

// apqDeferred is the cache gqlgen's APQ extension sees.
type apqDeferred struct{ store APQStore }

func (d apqDeferred) Get(ctx context.Context, hash string) (string, bool) {
	return d.store.Get(ctx, hash)
}

func (d apqDeferred) Add(ctx context.Context, hash, query string) {
	if r := requestFrom(ctx); r.Context != nil {
		r.apqHash, r.apqQuery = hash, query
	}
}

// apqCommit stores the query of a request that registers one, once its
// document is valid.
type apqCommit struct{ store APQStore }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = apqCommit{}

func (apqCommit) ExtensionName() string                   { return "APQCommit" }
func (apqCommit) Validate(graphql.ExecutableSchema) error { return nil }
func (c apqCommit) MutateOperationContext(ctx context.Context, _ *graphql.OperationContext) *gqlerror.Error {
	if r := requestFrom(ctx); r.apqQuery != "" {
		c.store.Add(ctx, r.apqHash, r.apqQuery)
		r.apqValid = true
	}
	return nil
}

// shareAPQ shares the query the request registered, when it was valid and
// the request's credentials are proven, with the other replicas.
func shareAPQ(ctx context.Context, store APQStore, client *restclient.Client, r *request) {
	if !r.apqValid || !r.hasCredentials || !client.CredentialsProven(ctx) {
		return
	}
	store.Share(ctx, r.apqHash, r.apqQuery, restclient.IdentityFromContext(ctx))
}

// newAPQStore is the in-process store of o (no Redis).
func newAPQStore(o Options) APQStore {
	return apq.New(nil, apq.Config{Entries: o.APQCacheSize, Bytes: o.APQCacheBytes, MaxQueryBytes: o.MaxQueryBytes})
}
