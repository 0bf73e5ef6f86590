package restclient

import (
	"context"
	"iter"
	"net/url"
)

// TransactionsService covers the transactions area: money transactions.
type TransactionsService service

// TransactionListOptions filter ListTransactions. LocationRef is required by
// the upstream; the other filters are optional.
type TransactionListOptions struct {
	LocationRef string            // sent as locationRef
	Status      TransactionStatus // sent as status
	Type        TransactionType   // sent as type
	CreateDate  DateRange         // sent as createDate[gte], createDate[lte]
	ListOptions
}

// Values returns o as the list's query.
func (o TransactionListOptions) Values() url.Values {
	q := url.Values{}
	setIf(q, "locationRef", o.LocationRef)
	setIf(q, "status", string(o.Status))
	setIf(q, "type", string(o.Type))
	o.CreateDate.encode(q, "createDate")
	o.ListOptions.encode(q)
	return q
}

// ListTransactions lists one page of money transactions
// (OpListTransactions); Response.NextPageToken leads to the next.
func (s *TransactionsService) ListTransactions(ctx context.Context, opts *TransactionListOptions) ([]*Transaction, *Response, error) {
	return query(ctx, s.client, OpListTransactions, valuesOf(opts))
}

// AllTransactions iterates over every money transaction matching opts,
// following pages from opts.NextPageToken; an error ends the sequence
// (OpListTransactions, once per page).
func (s *TransactionsService) AllTransactions(ctx context.Context, opts *TransactionListOptions) iter.Seq2[*Transaction, error] {
	o := TransactionListOptions{}
	if opts != nil {
		o = *opts
	}
	return paginate(o.NextPageToken, func(token string) ([]*Transaction, *Response, error) {
		o.NextPageToken = token
		return s.ListTransactions(ctx, &o)
	})
}
