package graph

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"

	"github.com/workspacenet/facade/graph/generated"
	"github.com/workspacenet/facade/graph/model"
	"github.com/workspacenet/facade/restclient"
)

// blockingRoot answers a page of transactions whose invoice and order's
// product and option are resolvers that may block (graph/generated's
// inlineTable), answered at once from memory.
type blockingRoot struct{ plainRoot }

func (blockingRoot) Transaction() generated.TransactionResolver { return blockingTransaction{} }
func (blockingRoot) TransactionOrder() generated.TransactionOrderResolver {
	return blockingOrder{}
}

type blockingTransaction struct{ fakeTransaction }

func (blockingTransaction) Invoice(_ context.Context, obj *restclient.Transaction) (*restclient.Invoice, error) {
	return &restclient.Invoice{ID: "inv-" + obj.ID}, nil
}

type blockingOrder struct{ fakeTransactionOrder }

func (blockingOrder) Product(_ context.Context, obj *model.TransactionOrder) (*restclient.Product, error) {
	return &restclient.Product{ID: "p-" + obj.ID}, nil
}

// blockingQuery selects two fields that may block on each transaction
// (invoice, and order, whose selection may) and two on each order.
const blockingQuery = `{ transactions(locationId: "l") { nodes { id invoice { id } order { id product { id } option { id } } } } }`

func blockingPage(n int) *model.TransactionConnection {
	c := transactionPage(n)
	for i, tx := range c.Nodes {
		tx.Order = &restclient.TransactionOrder{ID: fmt.Sprintf("o-%d", i), Option: &restclient.OptionNameSummary{ID: "opt-1"}}
	}
	return c
}

// TestBlockingFieldsResolved: the fields that may block are resolved, each
// into its own place, on every element of the list.
func TestBlockingFieldsResolved(t *testing.T) {
	exec := executor.New(generated.NewExecutableSchema(generated.Config{Resolvers: blockingRoot{plainRoot{plain: true, page: blockingPage(3)}}}))
	ctx := graphql.StartOperationTrace(context.Background())
	oc, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: blockingQuery})
	if errs != nil {
		t.Fatal(errs)
	}
	h, ctx := exec.DispatchOperation(ctx, oc)
	r := h(ctx)
	var want strings.Builder
	for i := range 3 {
		if i > 0 {
			want.WriteString(",")
		}
		fmt.Fprintf(&want, `{"id":"tx-%d","invoice":{"id":"inv-tx-%d"},"order":{"id":"o-%d","product":{"id":"p-o-%d"},"option":{"id":"opt-1"}}}`, i, i, i, i)
	}
	if got, w := string(r.Data), `{"transactions":{"nodes":[`+want.String()+`]}}`; len(r.Errors) > 0 || got != w {
		t.Errorf("got %v %s\nwant %s", r.Errors, got, w)
	}
}

// BenchmarkExecBlockingFields executes a page of 100 transactions with
// fields that may block (blockingQuery) through the generated executor: the
// dispatch of an object's blocking fields, no HTTP, no upstream.
func BenchmarkExecBlockingFields(b *testing.B) {
	exec := executor.New(generated.NewExecutableSchema(generated.Config{Resolvers: blockingRoot{plainRoot{plain: true, page: blockingPage(100)}}}))
	b.ReportAllocs()
	for b.Loop() {
		ctx := graphql.StartOperationTrace(context.Background())
		oc, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: blockingQuery})
		if errs != nil {
			b.Fatal(errs)
		}
		h, ctx := exec.DispatchOperation(ctx, oc)
		if r := h(ctx); len(r.Errors) > 0 {
			b.Fatal(r.Errors)
		}
	}
}
