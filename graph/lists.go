package graph

import (
	"context"
	"time"

	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/graph/model"
	"github.com/workspacenet/facade/graph/paging"
	"github.com/workspacenet/facade/restclient"
)

// The connection builders below serve every paged list, whether reached from
// Query or from a Location or Invoice: same arguments, same validation, same
// loaders, so identical pages asked twice in a request are fetched once.

func pageInfo[T any](r *paging.Result[T]) *model.PageInfo {
	return &model.PageInfo{HasNextPage: r.HasNextPage, EndCursor: r.EndCursor()}
}

func creditNoteConnection(ctx context.Context, invoiceID, locationID string, first *int, after *string) (*model.CreditNoteConnection, error) {
	if invoiceID == "" && locationID == "" {
		return nil, gqlerr.Input("invoiceId", "one of invoiceId and locationId is required")
	}
	scope := paging.Scope("creditNotes", invoiceID, locationID)
	r, err := paging.Paginate(ctx, scope, first, after, func(ctx context.Context, token string, limit int) (*paging.Page[restclient.CreditNote], error) {
		p, err := loaders.CreditNotes(ctx, loaders.CreditNotePageKey{InvoiceRef: invoiceID, LocationRef: locationID, Token: token, Limit: limit})
		return toPage(p, err)
	})
	if err != nil {
		return nil, err
	}
	c := &model.CreditNoteConnection{Nodes: r.Nodes(), PageInfo: pageInfo(r), Edges: make([]*model.CreditNoteEdge, len(r.Edges))}
	for i, e := range r.Edges {
		c.Edges[i] = &model.CreditNoteEdge{Cursor: e.Cursor, Node: e.Node}
	}
	return c, nil
}

func transactionConnection(ctx context.Context, locationID string, status *restclient.TransactionStatus, typ *restclient.TransactionType, createDate *model.DateRangeInput, first *int, after *string) (*model.TransactionConnection, error) {
	gte, lte, err := dateRange(createDate)
	if err != nil {
		return nil, err
	}
	key := loaders.TransactionPageKey{LocationRef: locationID, GTE: gte, LTE: lte}
	if status != nil {
		key.Status = *status
	}
	if typ != nil {
		key.Type = *typ
	}
	scope := paging.Scope("transactions", locationID, string(key.Status), string(key.Type), gte, lte)
	r, err := paging.Paginate(ctx, scope, first, after, func(ctx context.Context, token string, limit int) (*paging.Page[restclient.Transaction], error) {
		k := key
		k.Token, k.Limit = token, limit
		p, err := loaders.Transactions(ctx, k)
		return toPage(p, err)
	})
	if err != nil {
		return nil, err
	}
	c := &model.TransactionConnection{Nodes: r.Nodes(), PageInfo: pageInfo(r), Edges: make([]*model.TransactionEdge, len(r.Edges))}
	for i, e := range r.Edges {
		c.Edges[i] = &model.TransactionEdge{Cursor: e.Cursor, Node: e.Node}
	}
	return c, nil
}

func orderConnection(ctx context.Context, locationID string, status *restclient.OrderStatus, createDate *model.DateRangeInput, first *int, after *string) (*model.OrderConnection, error) {
	gte, lte, err := dateRange(createDate)
	if err != nil {
		return nil, err
	}
	key := loaders.OrderPageKey{LocationRef: locationID, GTE: gte, LTE: lte}
	if status != nil {
		key.Status = *status
	}
	scope := paging.Scope("orders", locationID, string(key.Status), gte, lte)
	r, err := paging.Paginate(ctx, scope, first, after, func(ctx context.Context, token string, limit int) (*paging.Page[restclient.Order], error) {
		k := key
		k.Token, k.Limit = token, limit
		p, err := loaders.Orders(ctx, k)
		return toPage(p, err)
	})
	if err != nil {
		return nil, err
	}
	c := &model.OrderConnection{Nodes: r.Nodes(), PageInfo: pageInfo(r), Edges: make([]*model.OrderEdge, len(r.Edges))}
	for i, e := range r.Edges {
		c.Edges[i] = &model.OrderEdge{Cursor: e.Cursor, Node: e.Node}
	}
	return c, nil
}

func redemptionConnection(ctx context.Context, couponID, promocodeID string, first *int, after *string) (*model.RedemptionConnection, error) {
	if couponID == "" && promocodeID == "" {
		return nil, gqlerr.Input("couponId", "one of couponId and promocodeId is required")
	}
	scope := paging.Scope("redemptions", couponID, promocodeID)
	r, err := paging.Paginate(ctx, scope, first, after, func(ctx context.Context, token string, limit int) (*paging.Page[restclient.Redemption], error) {
		p, err := loaders.Redemptions(ctx, loaders.RedemptionPageKey{CouponRef: couponID, PromocodeRef: promocodeID, Token: token, Limit: limit})
		return toPage(p, err)
	})
	if err != nil {
		return nil, err
	}
	c := &model.RedemptionConnection{Nodes: r.Nodes(), PageInfo: pageInfo(r), Edges: make([]*model.RedemptionEdge, len(r.Edges))}
	for i, e := range r.Edges {
		c.Edges[i] = &model.RedemptionEdge{Cursor: e.Cursor, Node: e.Node}
	}
	return c, nil
}

func toPage[T any](p *loaders.Page[T], err error) (*paging.Page[T], error) {
	if err != nil {
		return nil, err
	}
	return &paging.Page[T]{Items: p.Items, Next: p.Next}, nil
}

// dateRange validates a createDate filter and renders its bounds as RFC 3339.
func dateRange(r *model.DateRangeInput) (gte, lte string, err error) {
	if r == nil {
		return "", "", nil
	}
	if r.Gte != nil && !r.Gte.IsZero() {
		gte = r.Gte.UTC().Format(time.RFC3339Nano)
	}
	if r.Lte != nil && !r.Lte.IsZero() {
		lte = r.Lte.UTC().Format(time.RFC3339Nano)
	}
	if gte != "" && lte != "" && r.Lte.Before(r.Gte.Time) {
		return "", "", gqlerr.Input("createDate", "lte is before gte")
	}
	return gte, lte, nil
}
