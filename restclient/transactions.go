package restclient

import (
	"context"
	"iter"
	"net/url"
)

// The decoders of the operations' answers, made once.
var (
	parseTransactionList = parseList[Transaction]("transactions")
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

func (o *TransactionListOptions) query() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	setIf(q, "locationRef", o.LocationRef)
	setIf(q, "status", string(o.Status))
	setIf(q, "type", string(o.Type))
	o.CreateDate.encode(q, "createDate")
	o.ListOptions.encode(q)
	return q
}

// ListTransactions lists one page of money transactions;
// Response.NextPageToken leads to the next.
//
// REST: GET /transactions/money/v1.
func (s *TransactionsService) ListTransactions(ctx context.Context, opts *TransactionListOptions) ([]*Transaction, *Response, error) {
	return doList[Transaction](ctx, s.client, "/transactions/money/v1", "", opts.query(), parseTransactionList)
}

// AllTransactions iterates over every money transaction matching opts,
// following pages from opts.NextPageToken; an error ends the sequence.
//
// REST: GET /transactions/money/v1, once per page.
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
