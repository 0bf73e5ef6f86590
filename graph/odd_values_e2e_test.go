package graph_test

import (
	"bytes"
	"math"
	"net/http"
	"testing"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// oddTransactions wraps the local REST service: in its answers to the
// transaction list, the first transactions carry values a client must get
// exactly as GraphQL writes them (escapes, floats in exponent form, -0, an
// enum value the schema lacks, nulls, an unreadable timestamp), and a link a
// resolver fails to load.
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

// oddFeed selects every kind of plain field (ID, String, Float, Boolean,
// DateTime, JSON, the enums), repeated aliases, named and inline fragments,
// __typename, @skip/@include, and plain fields beside resolvers at every
// depth.
const oddFeed = `query Feed($l: ID!, $yes: Boolean = true) { transactions(locationId: $l, first: 30) {
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
fragment tx on Transaction { id amount currencyCode status type createDate locationRef membershipRef __typename }`

// TestOddUpstreamValues: values the upstream sends that are odd but
// representable reach the client as GraphQL writes them; an unreadable
// timestamp and an enum value the schema lacks are UPSTREAM_INVALID errors
// on their fields (each alias its own) and a link that fails to load a
// NOT_FOUND on its own path, the rest of the page answered.
func TestOddUpstreamValues(t *testing.T) {
	env := testenv.New(t, testenv.Options{NoTrace: true, Config: func(c *stack.Config) { c.UpstreamMiddleware = oddTransactions }})
	r := postOn(t, env.GraphQL, env.Bearer(), oddFeed, map[string]any{"l": env.ID(t, "location", 0)})
	if len(r.Data) < 100 {
		t.Fatalf("the answer is too small to test anything: %s", r.Raw)
	}
	for _, want := range []string{`"amount":-0,`, `"amount":1e+21,`, `"amount":1.5e-07,`, `\"b\\s/\t\r\n\u0001\u001F`, `"status":null,"type":null`, `"id":""`, `"type":"card\u0000"`,
		`"code":"UPSTREAM_INVALID"`, `"path":["transactions","edges",0,"node","createDate"]`,
		`"path":["transactions","edges",5,"node","invoice"]`,
		`"path":["transactions","edges",1,"node","status"],"locations":[{"line":16,"column":53}],"extensions":{"code":"UPSTREAM_INVALID","value":"on_hold"}`,
		`"path":["transactions","edges",1,"node","s"],"locations":[{"line":12,"column":58}],"extensions":{"code":"UPSTREAM_INVALID","value":"on_hold"}`} {
		if !bytes.Contains(r.Raw, []byte(want)) {
			t.Errorf("the answer lacks %s: %.2000s", want, r.Raw)
		}
	}
}
