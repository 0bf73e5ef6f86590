package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"

	"github.com/workspacenet/facade/graph/generated"
	"github.com/workspacenet/facade/graph/model"
	"github.com/workspacenet/facade/restclient"
)

// pageRoot answers transactions with a page of transactions held in memory.
type pageRoot struct {
	fakeRoot
	page *model.TransactionConnection
}

func (r pageRoot) Query() generated.QueryResolver { return pageQuery{page: r.page} }

type pageQuery struct {
	generated.QueryResolver
	page *model.TransactionConnection
}

func (q pageQuery) Transactions(context.Context, string, *restclient.TransactionStatus, *restclient.TransactionType, *model.DateRangeInput, *int, *string) (*model.TransactionConnection, error) {
	return q.page, nil
}

// transactionPage is a page of n transactions whose plain fields are all set.
func transactionPage(n int) *model.TransactionConnection {
	c := &model.TransactionConnection{PageInfo: &model.PageInfo{}}
	for i := range n {
		c.Nodes = append(c.Nodes, &restclient.Transaction{
			ID:            fmt.Sprintf("tx-%d", i),
			Amount:        new(12.5 + float64(i)),
			CurrencyCode:  new("EUR"),
			LocationRef:   new("loc-1"),
			MembershipRef: new("m-1"),
			Status:        new(restclient.TransactionStatusSucceeded),
			Type:          new(restclient.TransactionTypeOrder),
			CreateDate:    restclient.NewTimestamp(time.Date(2021, 5, 21, 12, 0, i, 0, time.UTC)),
			PaymentMethod: &restclient.PaymentMethod{Label: new("card"), Type: new("stripe")},
			Company:       &restclient.Company{ID: "c-1", Metadata: json.RawMessage(`{"k":"v"}`)},
		})
	}
	return c
}

// BenchmarkExecTransactions executes a page of 100 transactions selecting
// plain fields (and the order resolver) through the generated executor, in
// process: the executor's own cost, no HTTP, no upstream.
func BenchmarkExecTransactions(b *testing.B) {
	const q = `{ transactions(locationId: "l") { nodes { id amount currencyCode status type createDate locationRef membershipRef
  paymentMethod { label type } company { id title metadata createDate } order { id } } pageInfo { hasNextPage endCursor } } }`
	exec := executor.New(generated.NewExecutableSchema(generated.Config{Resolvers: pageRoot{page: transactionPage(100)}}))
	b.ReportAllocs()
	for b.Loop() {
		ctx := graphql.StartOperationTrace(context.Background())
		oc, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: q})
		if errs != nil {
			b.Fatal(errs)
		}
		h, ctx := exec.DispatchOperation(ctx, oc)
		if r := h(ctx); len(r.Errors) > 0 || len(r.Data) < 1000 {
			b.Fatal(r.Errors)
		}
	}
}
