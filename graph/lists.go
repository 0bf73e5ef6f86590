package graph

import (
	"context"
	"slices"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/graph/model"
	"github.com/workspacenet/facade/graph/paging"
	"github.com/workspacenet/facade/restclient"
)

// The connection builders below serve every paged list, whether reached from
// Query or from a Location or Invoice: same arguments, same validation, same
// Source, so identical pages asked twice in a request are fetched once.

func creditNoteConnection(ctx context.Context, cursors *paging.Codec, invoiceID, locationID string, first *int, after *string) (*model.CreditNoteConnection, error) {
	if invoiceID == "" && locationID == "" {
		return nil, gqlerr.Input("invoiceId", "one of invoiceId and locationId is required")
	}
	opts := restclient.CreditNoteListOptions{InvoiceRef: invoiceID, LocationRef: locationID}
	scope := paging.Scope("creditNotes", invoiceID, locationID)
	return connection(ctx, cursors, scope, first, after, func(ctx context.Context, token string, limit int) (*paging.Page[restclient.CreditNote], error) {
		o := opts
		o.ListOptions = restclient.ListOptions{Limit: limit, NextPageToken: token}
		return loaders.Find(ctx, restclient.OpListCreditNotes, o)
	}, setCreditNoteEdge, newCreditNoteConnection)
}

func transactionConnection(ctx context.Context, cursors *paging.Codec, locationID string, status *restclient.TransactionStatus, typ *restclient.TransactionType, createDate *model.DateRangeInput, first *int, after *string) (*model.TransactionConnection, error) {
	dates, err := dateRange(createDate)
	if err != nil {
		return nil, err
	}
	opts := restclient.TransactionListOptions{LocationRef: locationID, CreateDate: dates}
	if status != nil {
		opts.Status = *status
	}
	if typ != nil {
		opts.Type = *typ
	}
	scope := paging.Scope("transactions", locationID, string(opts.Status), string(opts.Type), scopeTime(dates.GTE), scopeTime(dates.LTE))
	return connection(ctx, cursors, scope, first, after, func(ctx context.Context, token string, limit int) (*paging.Page[restclient.Transaction], error) {
		o := opts
		o.ListOptions = restclient.ListOptions{Limit: limit, NextPageToken: token}
		return loaders.Find(ctx, restclient.OpListTransactions, o)
	}, setTransactionEdge, newTransactionConnection)
}

func orderConnection(ctx context.Context, cursors *paging.Codec, locationID string, status *restclient.OrderStatus, createDate *model.DateRangeInput, first *int, after *string) (*model.OrderConnection, error) {
	dates, err := dateRange(createDate)
	if err != nil {
		return nil, err
	}
	opts := restclient.OrderListOptions{LocationRef: locationID, CreateDate: dates}
	if status != nil {
		opts.Status = *status
	}
	scope := paging.Scope("orders", locationID, string(opts.Status), scopeTime(dates.GTE), scopeTime(dates.LTE))
	return connection(ctx, cursors, scope, first, after, func(ctx context.Context, token string, limit int) (*paging.Page[restclient.Order], error) {
		o := opts
		o.ListOptions = restclient.ListOptions{Limit: limit, NextPageToken: token}
		return loaders.Find(ctx, restclient.OpListOrders, o)
	}, setOrderEdge, newOrderConnection)
}

func redemptionConnection(ctx context.Context, cursors *paging.Codec, couponID, promocodeID string, first *int, after *string) (*model.RedemptionConnection, error) {
	if couponID == "" && promocodeID == "" {
		return nil, gqlerr.Input("couponId", "one of couponId and promocodeId is required")
	}
	opts := restclient.RedemptionListOptions{CouponRef: couponID, PromocodeRef: promocodeID}
	scope := paging.Scope("redemptions", couponID, promocodeID)
	return connection(ctx, cursors, scope, first, after, func(ctx context.Context, token string, limit int) (*paging.Page[restclient.Redemption], error) {
		o := opts
		o.ListOptions = restclient.ListOptions{Limit: limit, NextPageToken: token}
		return loaders.Find(ctx, restclient.OpListRedemptions, o)
	}, setRedemptionEdge, newRedemptionConnection)
}

// connection serves `first` items after the cursor `after` of the list
// identified by scope (paging.Paginate, cursors sealed by cursors) as a
// connection C with edges *E: edge fills an edge of the generated model
// type, conn builds the connection. The edges share one allocation. The
// cursors are sealed only when the query selects edges or pageInfo, the
// fields that show them (selectsCursors).
func connection[T, E, C any](ctx context.Context, cursors *paging.Codec, scope string, first *int, after *string, fetch paging.FetchFunc[T],
	edge func(e *E, cursor string, node *T), conn func(edges []*E, nodes []*T, info *model.PageInfo) C) (C, error) {
	toEdges := func(es []paging.Edge[T]) []*E {
		all := make([]E, len(es))
		edges := make([]*E, len(es))
		for i, e := range es {
			edge(&all[i], e.Cursor, e.Node)
			edges[i] = &all[i]
		}
		return edges
	}
	if d, list := streamsPages(ctx, first); d != nil {
		// The list is streamed and nothing else of the connection needs
		// its last page: the later pages are fetched as the stream goes.
		r, pages, err := paging.PaginatePages(ctx, cursors, scope, first, after, fetch, list == "nodes")
		if err != nil {
			var none C
			return none, err
		}
		if !pages.Done() {
			d.RegisterPages(ctx, func(ctx context.Context) (any, bool, error) {
				es, err := pages.Next(ctx)
				if err != nil {
					return nil, true, err
				}
				r := &paging.Result[T]{Edges: es}
				if list == "nodes" {
					return r.Nodes(), pages.Done(), nil
				}
				return toEdges(es), pages.Done(), nil
			})
		}
		return conn(toEdges(r.Edges), r.Nodes(), &model.PageInfo{HasPreviousPage: r.HasPreviousPage}), nil
	}
	paginate := paging.PaginateNodes[T]
	if selectsCursors(ctx) {
		paginate = paging.Paginate[T]
	}
	r, err := paginate(ctx, cursors, scope, first, after, fetch)
	if err != nil {
		var none C
		return none, err
	}
	info := &model.PageInfo{HasNextPage: r.HasNextPage, HasPreviousPage: r.HasPreviousPage, StartCursor: r.StartCursor(), EndCursor: r.EndCursor()}
	return conn(toEdges(r.Edges), r.Nodes(), info), nil
}

// selectsCursors reports whether the query selects edges or pageInfo on
// the connection field ctx resolves (true outside a field). Plain fields are
// read as they are; a fragment or a directive goes through gqlgen's field
// collection (@skip, @include, type conditions; lookahead: deferred
// fragments included).
func selectsCursors(ctx context.Context) bool {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return true
	}
	shows := func(name string) bool { return name == "edges" || name == "pageInfo" }
	for _, sel := range fc.Field.Selections {
		f, ok := sel.(*ast.Field)
		if !ok || len(f.Directives) > 0 {
			return slices.ContainsFunc(lookahead(ctx, nil), func(f graphql.CollectedField) bool { return shows(f.Name) })
		}
		if shows(f.Name) {
			return true
		}
	}
	return false
}

func setCreditNoteEdge(e *model.CreditNoteEdge, c string, n *restclient.CreditNote) {
	e.Cursor, e.Node = c, n
}

func newCreditNoteConnection(e []*model.CreditNoteEdge, n []*restclient.CreditNote, p *model.PageInfo) *model.CreditNoteConnection {
	return &model.CreditNoteConnection{Edges: e, Nodes: n, PageInfo: p}
}

func setTransactionEdge(e *model.TransactionEdge, c string, n *restclient.Transaction) {
	e.Cursor, e.Node = c, n
}

func newTransactionConnection(e []*model.TransactionEdge, n []*restclient.Transaction, p *model.PageInfo) *model.TransactionConnection {
	return &model.TransactionConnection{Edges: e, Nodes: n, PageInfo: p}
}

func setOrderEdge(e *model.OrderEdge, c string, n *restclient.Order) {
	e.Cursor, e.Node = c, n
}

func newOrderConnection(e []*model.OrderEdge, n []*restclient.Order, p *model.PageInfo) *model.OrderConnection {
	return &model.OrderConnection{Edges: e, Nodes: n, PageInfo: p}
}

func setRedemptionEdge(e *model.RedemptionEdge, c string, n *restclient.Redemption) {
	e.Cursor, e.Node = c, n
}

func newRedemptionConnection(e []*model.RedemptionEdge, n []*restclient.Redemption, p *model.PageInfo) *model.RedemptionConnection {
	return &model.RedemptionConnection{Edges: e, Nodes: n, PageInfo: p}
}

// dateRange validates a createDate filter and returns it as sent upstream:
// ends in UTC without a monotonic clock reading (so equal filters are equal
// loader keys), a missing or zero end left zero.
func dateRange(r *model.DateRangeInput) (restclient.DateRange, error) {
	var d restclient.DateRange
	if r == nil {
		return d, nil
	}
	if r.Gte != nil {
		d.GTE = r.Gte.UTC().Round(0)
	}
	if r.Lte != nil {
		d.LTE = r.Lte.UTC().Round(0)
	}
	if !d.GTE.IsZero() && !d.LTE.IsZero() && d.LTE.Before(d.GTE) {
		return restclient.DateRange{}, gqlerr.Input("createDate", "lte is before gte")
	}
	return d, nil
}

// scopeTime renders a date filter's end for paging.Scope ("" when absent).
func scopeTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}
