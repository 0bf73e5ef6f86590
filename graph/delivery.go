package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/workspacenet/facade/graph/incremental"
	"github.com/workspacenet/facade/graph/livetransport"
)

// deliveryHost is the handler as incremental delivery (graph/incremental)
// knows it: the request a context is served in.
type deliveryHost struct{}

var _ incremental.Host = deliveryHost{}

func (deliveryHost) Attach(ctx context.Context, d *incremental.Deferral) bool {
	req := requestFrom(ctx)
	if req.Context == nil {
		return false
	}
	req.deferral = d
	return true
}

func (deliveryHost) Deferral(ctx context.Context) *incremental.Deferral {
	return requestFrom(ctx).deferral
}

// OneResult: a query over a WebSocket; graphql-transport-ws has one result
// per query, whatever the upgrade request's Accept said.
func (deliveryHost) OneResult(ctx context.Context) bool { return livetransport.IsLive(ctx) }

func (deliveryHost) FirstPayload(ctx context.Context) {
	if c := requestFrom(ctx).calls; c != nil {
		c.FirstPayload()
	}
}

func (deliveryHost) CallReport(ctx context.Context) any {
	if req := requestFrom(ctx); req.trace && req.calls != nil {
		return req.calls.Report()
	}
	return nil
}

// callPart names the part of the response an upstream call made with ctx
// serves, for the call report (incremental.Deferral.CallPart).
func callPart(ctx context.Context) string { return requestFrom(ctx).deferral.CallPart(ctx) }

// inDeferredPart reports whether ctx resolves what a payload after the
// initial one brings (a deferred part, or a stream's later items).
func inDeferredPart(ctx context.Context) bool { return incremental.InPart(ctx) }

// lookahead returns the fields the query selects on what the field of ctx
// resolves to, the fields of its deferred fragments included
// (incremental.Deferral.Lookahead).
func lookahead(ctx context.Context, satisfies []string) []graphql.CollectedField {
	return requestFrom(ctx).deferral.Lookahead(ctx, satisfies)
}

// streamsPages returns the operation's deferral and the list (nodes or
// edges) of the connection ctx resolves when that list is streamed page by
// page (incremental.Deferral.StreamsPages); nil otherwise.
func streamsPages(ctx context.Context, first *int) (*incremental.Deferral, string) {
	d := requestFrom(ctx).deferral
	if list := d.StreamsPages(ctx, first); list != "" {
		return d, list
	}
	return nil, ""
}
