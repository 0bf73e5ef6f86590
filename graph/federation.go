package graph

import (
	"context"
	"crypto/subtle"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/gqlerr"
)

// Federation's root fields (gqlgen's federation plugin): the subgraph's
// schema, and the entities of a router's batch of representations.
const (
	serviceField  = "_service"
	entitiesField = "_entities"
)

// errEntitiesWithoutCaller is the UNAUTHENTICATED error of an `_entities`
// field whose request carries no credentials of its own.
var errEntitiesWithoutCaller = &gqlerr.Coded{
	Code:    errcode.Unauthenticated,
	Message: "_entities needs the caller's credentials: the router must forward the client's Authorization (and service-network-id) headers (docs/federation.md)",
}

// fromRouter reports whether headers h carry the router's shared secret
// (compared in constant time).
func (o *Options) fromRouter(h http.Header) bool {
	if o.RouterSecret == "" {
		return false
	}
	got := h.Get(o.RouterSecretHeader)
	return subtle.ConstantTimeCompare([]byte(got), []byte(o.RouterSecret)) == 1
}

// federationGate answers `_service` and `_entities` with
// ROUTER_SECRET_REQUIRED when a router secret is required
// (RequireRouterSecret, or RouterSecret set) and the request does not carry
// it; and `_entities` with UNAUTHENTICATED when the request carries no
// credentials of its own (the server's would serve it) unless
// FederationServerCredentials. Either way the field is null and nothing is
// sent upstream. Other fields pass.
func (o *Options) federationGate(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	rc := graphql.GetRootFieldContext(ctx)
	if rc == nil || (rc.Field.Name != serviceField && rc.Field.Name != entitiesField) {
		return next(ctx)
	}
	req := requestFrom(ctx)
	var err error
	switch {
	case (o.RequireRouterSecret || o.RouterSecret != "") && !req.router:
		err = &gqlerr.Coded{Code: errcode.RouterSecretRequired, Message: rc.Field.Name + " is answered only to the federation router: this request does not carry its shared secret"}
	case rc.Field.Name == entitiesField && req.serverCredentials && !o.FederationServerCredentials:
		err = errEntitiesWithoutCaller
	default:
		return next(ctx)
	}
	// The root field context has no field path yet: name the field so the
	// error sits on it.
	graphql.AddError(ctx, &gqlerror.Error{Err: err, Path: ast.Path{ast.PathName(rc.Field.Alias)}})
	return graphql.Null
}

// routerService lets the router's requests read `_service` while
// introspection is off: gqlgen's `_service` resolver refuses when the
// operation's introspection is disabled. __schema and __type stay refused
// (refuseIntrospection); federationGate decides who is the router.
type routerService struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = routerService{}

func (routerService) ExtensionName() string                   { return "RouterService" }
func (routerService) Validate(graphql.ExecutableSchema) error { return nil }

func (routerService) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if requestFrom(ctx).router {
		oc.DisableIntrospection = false
	}
	return nil
}
