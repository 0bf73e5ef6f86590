package graph_test

import (
	"testing"

	"github.com/workspacenet/facade/internal/testenv"
)

func TestSmoke(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	loc := env.ID(t, "location", 0)
	r := env.Query(t, env.Bearer(), `query($l: ID!) { location(id: $l) { products { id title } transactions(first: 5) { nodes { id type status amount booking { resource { id title } } order { product { title } option { title } } ticket { event { title } } invoice { id title } } pageInfo { hasNextPage endCursor } } orders(first: 3) { nodes { number status product { title } option { title } } } creditNotes(first: 2) { nodes { id number invoice { id number } lines { invoiceItem { id description } } } } } }`, map[string]any{"l": loc})
	t.Logf("errors: %+v", r.Errors)
	t.Logf("data: %.3000s", r.Data)
	counts, total := env.Calls()
	t.Logf("calls %d\n%s", total, testenv.FormatCalls(counts))
}
