package testenv

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// FieldInterceptor returns a GraphQL handler extension (graph.Options
// Extensions) that wraps every field resolver with f: tests use it to make a
// field panic or to see a resolver start.
func FieldInterceptor(f graphql.FieldMiddleware) graphql.HandlerExtension { return fieldInterceptor(f) }

type fieldInterceptor graphql.FieldMiddleware

func (fieldInterceptor) ExtensionName() string                   { return "TestFieldInterceptor" }
func (fieldInterceptor) Validate(graphql.ExecutableSchema) error { return nil }
func (f fieldInterceptor) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	return f(ctx, next)
}
