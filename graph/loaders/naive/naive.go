// Package naive is the benchmark's baseline loaders.Source: every field that
// needs an upstream object makes its own call. It has no batching, no
// per-request cache, no answers from embedded summaries and no lookups of
// products in their location's list. The benchmark and the tests that
// compare against the baseline select it with graph.Options.NewLoaders;
// production code does not import it.
package naive

import (
	"context"

	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/graph/paging"
	"github.com/workspacenet/facade/restclient"
)

// New returns a naive Source for one GraphQL request. Its calls are bounded
// as the batching loaders' are: at most loaders.DefaultMaxConcurrency in
// flight (the request's call hooks cap and report them, as for every call).
func New(client *restclient.Client) loaders.Source {
	return &source{up: loaders.Upstream{Client: client}, sem: make(chan struct{}, loaders.DefaultMaxConcurrency)}
}

type source struct {
	up  loaders.Upstream
	sem chan struct{}
}

// call makes the upstream call fetch(ctx, k) within the request's bounds.
func call[K, V any](ctx context.Context, s *source, k K, fetch func(context.Context, K) (V, error)) (V, error) {
	var zero V
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	defer func() { <-s.sem }()
	return fetch(ctx, k)
}

func (s *source) Resource(ctx context.Context, id string) (*restclient.Resource, error) {
	return call(ctx, s, id, s.up.Resource)
}

func (s *source) Event(ctx context.Context, id string) (*restclient.Event, error) {
	return call(ctx, s, id, s.up.Event)
}

func (s *source) Visit(ctx context.Context, id string) (*restclient.Visit, error) {
	return call(ctx, s, id, s.up.Visit)
}

func (s *source) Product(ctx context.Context, id string) (*restclient.Product, error) {
	return call(ctx, s, id, s.up.Product)
}

func (s *source) ProductsInLocation(ctx context.Context, locationID string) ([]*restclient.Product, error) {
	return call(ctx, s, locationID, s.up.ProductsInLocation)
}

// ProductInLocation gets the product by id, ignoring its location.
func (s *source) ProductInLocation(ctx context.Context, _, id string) (*restclient.Product, error) {
	return s.Product(ctx, id)
}

func (s *source) Invoice(ctx context.Context, id string) (*restclient.InvoiceItems, error) {
	return call(ctx, s, id, s.up.Invoice)
}

func (s *source) Comments(ctx context.Context, postID string) ([]*restclient.Comment, error) {
	return call(ctx, s, postID, s.up.Comments)
}

func (s *source) CreditNotes(ctx context.Context, o restclient.CreditNoteListOptions) (*paging.Page[restclient.CreditNote], error) {
	return call(ctx, s, o, s.up.CreditNotes)
}

func (s *source) Transactions(ctx context.Context, o restclient.TransactionListOptions) (*paging.Page[restclient.Transaction], error) {
	return call(ctx, s, o, s.up.Transactions)
}

func (s *source) Orders(ctx context.Context, o restclient.OrderListOptions) (*paging.Page[restclient.Order], error) {
	return call(ctx, s, o, s.up.Orders)
}

func (s *source) Redemptions(ctx context.Context, o restclient.RedemptionListOptions) (*paging.Page[restclient.Redemption], error) {
	return call(ctx, s, o, s.up.Redemptions)
}

// EmbeddedFirst is false: every link makes its call, even when the embedded
// summary would answer it.
func (s *source) EmbeddedFirst() bool { return false }
