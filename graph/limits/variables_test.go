package limits_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/validator"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/limits"
)

// attackCost is the cost of attackDoc with first = 500 and 250:
// location 1 + transactions 1 + 500 × (node 1 + invoice 1 + creditNotes 1 + 250 × (node 1 + invoice 1)).
const attackCost = 1 + 1 + 500*(1+1+1+250*(1+1))

const attackLiterals = `{ location(id: "x") { transactions(first: 500) { nodes { invoice { creditNotes(first: 250) { nodes { id invoice { id } } } } } } } }`

const attackVars = `query($n: Int, $m: Int) { location(id: "x") { transactions(first: $n) { nodes { invoice { creditNotes(first: $m) { nodes { id invoice { id } } } } } } } }`

// TestMeasureUsesTheCoercedVariables: a variable holding 500 in any
// numeric form the coercion produces costs what the literal 500 costs, and
// the variables coerced from a JSON request body (json.Number) measure the same.
func TestMeasureUsesTheCoercedVariables(t *testing.T) {
	lit := limits.Measure(validated(t, attackLiterals).Operations[0], nil, limits.Options{})
	if lit.Cost != attackCost {
		t.Fatalf("literal cost = %d, want %d", lit.Cost, attackCost)
	}
	doc := validated(t, attackVars)
	forms := map[string][2]any{
		"int":         {500, 250},
		"int64":       {int64(500), int64(250)},
		"float64":     {500.0, 250.0},
		"json.Number": {json.Number("500"), json.Number("250")},
	}
	for name, f := range forms {
		s := limits.Measure(doc.Operations[0], map[string]any{"n": f[0], "m": f[1]}, limits.Options{})
		if s.Cost != lit.Cost {
			t.Errorf("%s: cost = %d, want %d as with literals", name, s.Cost, lit.Cost)
		}
	}
	// As gqlparser coerces a request's variables.
	var raw map[string]any
	dec := json.NewDecoder(stringsReader(`{"n": 500, "m": 250}`))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		t.Fatal(err)
	}
	coerced, err := validator.VariableValues(schema(), doc.Operations[0], raw)
	if err != nil {
		t.Fatal(err)
	}
	if s := limits.Measure(doc.Operations[0], coerced, limits.Options{}); s.Cost != lit.Cost {
		t.Errorf("coerced request variables %#v: cost = %d, want %d", coerced, s.Cost, lit.Cost)
	}
	// An absent variable is an absent argument: the argument's default (25).
	def := limits.Measure(validated(t, `{ location(id: "x") { transactions { nodes { invoice { creditNotes(first: 250) { nodes { id invoice { id } } } } } } } }`).Operations[0], nil, limits.Options{})
	if s := limits.Measure(doc.Operations[0], map[string]any{"m": 250}, limits.Options{}); s.Cost != def.Cost {
		t.Errorf("absent $n: cost = %d, want %d (the default first)", s.Cost, def.Cost)
	}
}

// TestCheckVariablesRefusesNonIntegers: gqlparser's coercion keeps a string
// for an Int variable; CheckVariables refuses it, and fractions, naming the
// variable, and accepts every whole-number form.
func TestCheckVariablesRefusesNonIntegers(t *testing.T) {
	doc := validated(t, attackVars)
	op := doc.Operations[0]
	for _, bad := range []any{"500", "5e2", 500.5, json.Number("500.0"), true, int64(1) << 40} {
		e := limits.CheckVariables(op, map[string]any{"n": bad})
		if e == nil || e.Extensions["code"] != errcode.BadUserInput || e.Extensions["field"] != "$n" {
			t.Errorf("%#v: %v", bad, e)
		}
	}
	for _, good := range []any{nil, 500, int64(500), 500.0, json.Number("500")} {
		if e := limits.CheckVariables(op, map[string]any{"n": good, "m": 2}); e != nil {
			t.Errorf("%#v refused: %v", good, e)
		}
	}
	// What gqlparser lets through for a JSON string.
	coerced, err := validator.VariableValues(schema(), op, map[string]any{"n": "500"})
	if err != nil {
		t.Fatalf("gqlparser refuses the string itself now: %v", err)
	}
	if limits.CheckVariables(op, coerced) == nil {
		t.Errorf("coerced %#v accepted", coerced)
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
