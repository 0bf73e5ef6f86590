// Package gqltrace is the gqlgen extension of the facade's tracing, apart
// from package tracing so that the REST service, which traces too, does not
// link gqlgen.
package gqltrace

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Operation is the gqlgen extension that names the request's server span
// after its operation, as the GraphQL semantic conventions do: "query
// Dashboard", or "query" for an anonymous one; it adds graphql.operation.type
// and graphql.operation.name. It does nothing when the span is not recording.
type Operation struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
} = Operation{}

func (Operation) ExtensionName() string                   { return "Tracing" }
func (Operation) Validate(graphql.ExecutableSchema) error { return nil }
func (Operation) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() || !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil {
		return next(ctx)
	}
	kind := string(oc.Operation.Operation)
	name := oc.Operation.Name
	span.SetAttributes(attribute.String("graphql.operation.type", kind))
	if name != "" {
		span.SetName(kind + " " + name)
		span.SetAttributes(attribute.String("graphql.operation.name", name))
	} else {
		span.SetName(kind)
	}
	return next(ctx)
}
