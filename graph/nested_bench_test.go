package graph_test

import (
	"testing"

	"github.com/workspacenet/facade/internal/testenv"
)

// nestedQuery is the benchmark suite's location dashboard: four lists and
// every kind of nested link (resource, product via the location's list,
// event, invoice).
const nestedQuery = `query($l: ID!) { location(id: $l) {
  products { id title description visibility options { id title } }
  orders(first: 10) { nodes { id number status locationRef product { id title visibility } } }
  transactions(first: 20) { nodes { id amount status type locationRef
    booking { id resource { id title capacity type } }
    order { id product { id title visibility } }
    ticket { id event { id title venue } } } }
  creditNotes(first: 10) { nodes { id number totalAmount invoice { id number status totalAmount } } }
} }`

// BenchmarkNestedQuery executes the nested dashboard query end to end (HTTP
// in, loopback REST calls out) against a zero-latency upstream. ns/op and
// allocs/op include the in-process REST service's work.
func BenchmarkNestedQuery(b *testing.B) {
	env := testenv.New(b, testenv.Options{NoTrace: true})
	vars := map[string]any{"l": env.ID(b, "location", 0)}
	creds := env.Bearer()
	if r := env.Query(b, creds, nestedQuery, vars); len(r.Errors) > 0 {
		b.Fatalf("errors: %+v", r.Errors)
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := env.Query(b, creds, nestedQuery, vars); len(r.Errors) > 0 {
			b.Fatalf("errors: %+v", r.Errors)
		}
	}
}
