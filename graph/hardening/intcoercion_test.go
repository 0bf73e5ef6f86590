package hardening_test

import (
	"net/http"
	"testing"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/limits"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

// TestIntVariableAsStringCannotBypassTheCostLimit: gqlgen coerces an Int
// leniently (`"500"` is 500), and the cost limit measured a string `first`
// as the list estimate, so this query, costing 251502 with 500 as a number,
// ran when 500 came as a string. Now the string is BAD_USER_INPUT before any
// upstream call, and the number is refused by the cost limit.
func TestIntVariableAsStringCannotBypassTheCostLimit(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	loc := env.ID(t, "location", 0)
	q := `query($n: Int) { location(id: "` + loc + `") { transactions(first: $n) { nodes { invoice { creditNotes(first: 250) { nodes { id invoice { id } } } } } } } }`
	const cost = 1 + 1 + 500*(1+1+1+250*(1+1))

	t.Run("string", func(t *testing.T) {
		for _, v := range []any{"500", "2"} {
			env.ResetCalls()
			r := query(t, env, env.Bearer(), q, map[string]any{"n": v})
			e := only(t, r, errcode.BadUserInput)
			if e.Extensions["field"] != "$n" {
				t.Errorf("%q: extensions = %v", v, e.Extensions)
			}
			if r.Status != http.StatusOK || r.Data != nil {
				t.Errorf("%q: status %d, data %s: want a request error, 200 (application/json) and no data entry", v, r.Status, r.Data)
			}
			env.ExpectNoCalls(t)
		}
	})
	t.Run("number", func(t *testing.T) {
		env.ResetCalls()
		r := query(t, env, env.Bearer(), q, map[string]any{"n": 500})
		e := only(t, r, errcode.QueryTooComplex)
		if e.Extensions["limit"] != limits.Cost || e.Extensions["value"] != float64(cost) {
			t.Errorf("extensions = %v, want cost %d", e.Extensions, cost)
		}
		if r.Status != http.StatusOK || r.Data != nil {
			t.Errorf("status %d, data %s: want 200 (application/json) and no data entry", r.Status, r.Data)
		}
		env.ExpectNoCalls(t)
	})
	t.Run("fraction", func(t *testing.T) {
		env.ResetCalls()
		r := query(t, env, env.Bearer(), q, map[string]any{"n": 2.5})
		if len(r.Errors) == 0 {
			t.Fatalf("want an error: %s", r.Raw)
		}
		for _, e := range r.Errors {
			if e.Code() == "" {
				t.Errorf("uncoded error: %+v", e)
			}
		}
		env.ExpectNoCalls(t)
	})
}
