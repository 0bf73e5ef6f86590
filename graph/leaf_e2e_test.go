package graph_test

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"regexp"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/workspacenet/facade/internal/budget"
	"github.com/workspacenet/facade/internal/gqlclient"
	"github.com/workspacenet/facade/internal/queries"
	"github.com/workspacenet/facade/internal/stack"
	"github.com/workspacenet/facade/internal/testenv"
)

// oddTransactions wraps the local REST service: in its answers to the
// transaction list, the first transactions carry the values a plain field
// must write exactly as gqlgen does (escapes, floats in exponent form, -0,
// an enum value the schema lacks, nulls, an unreadable timestamp), and a
// link a resolver fails to load.
func oddTransactions(next http.Handler) http.Handler {
	odd := []map[string]any{
		{"createDate": "last tuesday", "amount": math.Copysign(0, -1), "currencyCode": "q\"b\\s/\t\r\n\x01\x1f\u007f é 日本 \u2028🙂", "membershipRef": "<&>"},
		{"status": "on_hold", "type": nil, "amount": 1e21, "currencyCode": "", "locationRef": nil},
		{"id": nil, "amount": 1.5e-7, "createDate": "2021-05-21", "membershipRef": nil},
		{"amount": 123456789.125, "createDate": "2021-05-21T12:00:00.123456789012+02:00", "status": nil},
		{"amount": 0.1, "createDate": "", "paymentMethod": map[string]any{"label": nil, "type": "card\u0000"}},
		// An invoice the upstream does not know: NOT_FOUND from a nested resolver.
		{"invoice": map[string]any{"id": "00000000-0000-4000-8000-000000000000", "title": "gone"}},
	}
	return rewriteTransactionPages(next, func(txs []any) bool {
		for i, o := range odd {
			if i < len(txs) {
				for k, v := range o {
					txs[i].(map[string]any)[k] = v
				}
			}
		}
		return true
	})
}

// leafQueries select every kind of plain field graph/leaf writes (ID,
// String, Float, Boolean, DateTime, JSON, the enums), nulls, repeated
// aliases, named and inline fragments, __typename, @skip/@include, and
// plain fields beside resolvers at every depth.
var leafQueries = map[string]struct {
	query     string
	key, kind string // the variable holding the id of demo record idx of kind
	idx       int
}{
	"first":     {queries.First, "id", "resource", 0},
	"dashboard": {queries.Dashboard, "locationId", "location", 0},
	"bench":     {queries.BenchDashboard, "l", "location", 0},
	"invoice":   {queries.Invoice, "id", "invoice", 0},
	"feed": {`query Feed($l: ID!, $yes: Boolean = true) { transactions(locationId: $l, first: 30) {
  __typename
  edges { cursor node { ...tx a: id a: id b: amount
    location { id __typename }
    paymentMethod { label type t: type __typename }
    company { id title metadata createDate deleteDate legalName credits { expiring permanent } }
    booking { id price { netAmount taxAmount } resource { id title capacity type description dayPassesEnabled createDate } }
    order { id price { netAmount taxAmount } product { id title visibility } option { id title description } }
    ticket { id createDate event { id title venue startDate } }
    invoice { id number status totalAmount amountDue createDate dueDate }
    refund { amount createDate }
    ... on Transaction { createDate typename: __typename s: status @include(if: $yes) x: type @skip(if: $yes) }
  } }
  pageInfo { hasNextPage hasPreviousPage endCursor }
} }
fragment tx on Transaction { id amount currencyCode status type createDate locationRef membershipRef __typename }`,
		"l", "location", 0},
	"orders": {`query Orders($l: ID!) { orders(locationId: $l, first: 25) {
  nodes { id number status comment quantity createDate deleteDate locationRef membershipRef
    product { id title description visibility featured options { id title price { money { amount currencyCode } } } }
    payment { __typename }
  }
  pageInfo { hasNextPage }
} }`, "l", "location", 0},
	"resource": {`query R($id: ID!) { resource(id: $id) { ...on Resource { id title } id title description locale imageUrl createDate type
  visibility bookingPermission capacity bookingStepMinutes dayPassesEnabled preparationMinutes refundThreshold
  image { __typename } t1: title t2: title t1: title parent { id title capacity createDate } } }`,
		"id", "resource", 1},
}

// cursor matches a connection cursor: sealed with a random nonce, so it
// differs on every answer.
var cursor = regexp.MustCompile(`"(cursor|endCursor|startCursor)":"[^"]*"`)

// TestPlainFieldsAsGqlgen: the answers of a facade whose executor takes its
// fast paths (plain fields through graph/leaf, other struct fields and
// resolver fields without graphql.ResolveField) are byte for byte those of
// the same facade with a field interceptor (which turns them off: every
// field through graphql.ResolveField), for queries over every kind of plain
// field, odd upstream values included, and errors with their paths. (No plain non-null
// field of the schema is a Go pointer, so none can be null: a missing id is
// "".)
func TestPlainFieldsAsGqlgen(t *testing.T) {
	env := testenv.New(t, testenv.Options{NoTrace: true, Config: func(c *stack.Config) { c.UpstreamMiddleware = oddTransactions }})
	var intercepted atomic.Int64
	facade := func(exts ...graphql.HandlerExtension) *gqlclient.Client {
		cfg := stack.DefaultConfig()
		cfg.Upstream = env.UpstreamURL
		cfg.Budget, cfg.CacheTTL, cfg.UpstreamTrace = budget.Config{}, "", "off"
		cfg.Graph.Extensions = exts
		_, base := testenv.Serve(t, cfg, nil)
		return &gqlclient.Client{URL: base + "/graphql", HTTP: &http.Client{}}
	}
	fast := facade()
	slow := facade(testenv.FieldInterceptor(func(ctx context.Context, next graphql.Resolver) (any, error) {
		if fc := graphql.GetFieldContext(ctx); fc.Object == "Transaction" && fc.Field.Name == "currencyCode" {
			intercepted.Add(1)
		}
		return next(ctx)
	}))
	creds := env.Bearer()
	for name, q := range leafQueries {
		t.Run(name, func(t *testing.T) {
			vars := map[string]any{q.key: env.ID(t, q.kind, q.idx)}
			a, b := postOn(t, fast, creds, q.query, vars), postOn(t, slow, creds, q.query, vars)
			ra, rb := cursor.ReplaceAll(a.Raw, []byte(`"$1":"…"`)), cursor.ReplaceAll(b.Raw, []byte(`"$1":"…"`))
			if !bytes.Equal(ra, rb) {
				t.Fatalf("leaf's answer differs from gqlgen's:\nleaf   %s\ngqlgen %s", ra, rb)
			}
			if len(a.Data) < 100 {
				t.Fatalf("the answer is too small to test anything: %s", a.Raw)
			}
			if name == "feed" {
				// The odd values reached the answer: escapes, exponents,
				// the unknown enum value, the unreadable timestamp's error.
				for _, want := range []string{`"amount":-0,`, `"amount":1e+21,`, `"amount":1.5e-07,`, `\"b\\s/\t\r\n\u0001\u001F`, `"status":""`, `"id":""`, `"type":"card\u0000"`, `"code":"UPSTREAM_INVALID"`, `"path":["transactions","edges",0,"node","createDate"]`,
					`"path":["transactions","edges",5,"node","invoice"]`} {
					if !bytes.Contains(a.Raw, []byte(want)) {
						t.Errorf("the answer lacks %s: %.2000s", want, a.Raw)
					}
				}
			}
		})
	}
	if intercepted.Load() == 0 {
		t.Error("the field interceptor saw no plain field: the oracle compared leaf with itself")
	}
}
