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

// plainRoot answers transactions with a page of n transactions whose plain
// fields are all set; PlainFields is plain (graph/leaf).
type plainRoot struct {
	fakeRoot
	plain bool
	page  *model.TransactionConnection
}

func (r plainRoot) PlainFields() bool                        { return r.plain }
func (r plainRoot) Query() generated.QueryResolver           { return pageQuery{page: r.page} }
func (plainRoot) Transaction() generated.TransactionResolver { return fakeTransaction{} }

type pageQuery struct {
	generated.QueryResolver
	page *model.TransactionConnection
}

func (q pageQuery) Transactions(context.Context, string, *restclient.TransactionStatus, *restclient.TransactionType, *model.DateRangeInput, *int, *string) (*model.TransactionConnection, error) {
	return q.page, nil
}

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

// execAllocs is the allocations of one execution of query (data marshalled
// as the facade writes it) through the generated executor with root.
func execAllocs(t *testing.T, root generated.ResolverRoot, query string) float64 {
	t.Helper()
	exec := executor.New(generated.NewExecutableSchema(generated.Config{Resolvers: root}))
	run := func() {
		ctx := graphql.StartOperationTrace(context.Background())
		oc, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: query})
		if errs != nil {
			t.Fatal(errs)
		}
		h, ctx := exec.DispatchOperation(ctx, oc)
		if r := h(ctx); len(r.Errors) > 0 || len(r.Data) < 100 {
			t.Fatalf("%v %s", r.Errors, r.Data)
		}
	}
	run()
	return testing.AllocsPerRun(20, run)
}

// TestPlainFieldsAllocateNothing: with graph/leaf, selecting more plain
// fields of a list's elements (String, ID, Float, enums, DateTime, JSON,
// Boolean through an object) costs no allocation; through
// graphql.ResolveField (a field interceptor's handler) it costs several
// per field.
func TestPlainFieldsAllocateNothing(t *testing.T) {
	const (
		few  = `{ transactions(locationId: "l") { nodes { id paymentMethod { label } company { id } } } }`
		many = `{ transactions(locationId: "l") { nodes { id a: id amount currencyCode status type createDate locationRef membershipRef
  paymentMethod { label type l: label } company { id metadata } } } }`
		n      = 20
		fields = 11 // in many, not in few
	)
	// Per element: the growth from n to 2n elements, so that parsing and
	// validating the longer query does not count.
	small, large := transactionPage(n), transactionPage(2*n)
	for _, plain := range []bool{true, false} {
		growth := func(query string) float64 {
			return execAllocs(t, plainRoot{plain: plain, page: large}, query) - execAllocs(t, plainRoot{plain: plain, page: small}, query)
		}
		extra := (growth(many) - growth(few)) / n
		t.Logf("plain %t: %.2f allocations per element for %d more plain fields", plain, extra, fields)
		// Under one: the response buffer grows more often for the longer
		// answer (a fraction of an allocation per element), nothing else.
		if plain && extra >= 0.5 {
			t.Errorf("graph/leaf: %.2f allocations per element for %d more plain fields, want 0", extra, fields)
		}
		if !plain && extra < fields {
			t.Errorf("graphql.ResolveField: %.2f allocations per element for %d more plain fields: is leaf on?", extra, fields)
		}
	}
}

// BenchmarkExecTransactions executes a page of 100 transactions selecting
// plain fields (and the order resolver) through the generated executor, in
// process: the executor's own cost, no HTTP, no upstream.
func BenchmarkExecTransactions(b *testing.B) {
	const q = `{ transactions(locationId: "l") { nodes { id amount currencyCode status type createDate locationRef membershipRef
  paymentMethod { label type } company { id title metadata createDate } order { id } } pageInfo { hasNextPage endCursor } } }`
	for _, plain := range []bool{true, false} {
		b.Run(fmt.Sprintf("plain=%t", plain), func(b *testing.B) {
			exec := executor.New(generated.NewExecutableSchema(generated.Config{Resolvers: plainRoot{plain: plain, page: transactionPage(100)}}))
			b.ReportAllocs()
			for b.Loop() {
				ctx := graphql.StartOperationTrace(context.Background())
				oc, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: q})
				if errs != nil {
					b.Fatal(errs)
				}
				h, ctx := exec.DispatchOperation(ctx, oc)
				if r := h(ctx); len(r.Errors) > 0 {
					b.Fatal(r.Errors)
				}
			}
		})
	}
}
