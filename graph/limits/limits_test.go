package limits_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/generated"
	"github.com/workspacenet/facade/graph/limits"
	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

func schema() *ast.Schema { return generated.NewExecutableSchema(generated.Config{}).Schema() }

func validated(t *testing.T, q string) *ast.QueryDocument {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Input: q})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if errs := validator.Validate(schema(), doc); len(errs) > 0 {
		t.Fatalf("validate: %v", errs)
	}
	return doc
}

func TestMeasureCountsDepthAliasesRootsAndCost(t *testing.T) {
	q := `query Q($n: Int) {
  a: resource(id: "x") { title parent { title parent { id } } }
  location(id: "y") {
    transactions(first: $n) { nodes { booking { resource { title } } } pageInfo { hasNextPage } }
    products { options { title } }
    ...F
  }
  __typename
}
fragment F on Location { orders { edges { node { product { title } } } } }`
	doc := validated(t, q)
	s := limits.Measure(doc.Operations[0], map[string]any{"n": int64(40)}, limits.Options{})
	// a(1) > parent(2) > parent(3) > id(4); location > transactions > nodes > booking > resource > title = 6.
	if s.Depth != 6 || s.Aliases != 1 || s.RootFields != 3 {
		t.Errorf("depth/aliases/roots = %d/%d/%d, want 6/1/3", s.Depth, s.Aliases, s.RootFields)
	}
	// resource 1+1+1 = 3; location 1 + transactions (1 + nodes 40*(1+2) + pageInfo 1 = 122)
	// + products 10*(1 + options 10*1) = 110 + orders default 25: 1 + edges 25*(1 + node(1 + product 1)) = 76.
	want := 3 + 1 + 122 + 110 + 76
	if s.Cost != want {
		t.Errorf("cost = %d, want %d", s.Cost, want)
	}
}

// TestMeasureIntrospectionBySchemaSize: GraphiQL's introspection query counts
// as one level of depth (the validator bounds its nesting) and costs about
// the objects its answer holds (graph's TestIntrospectionCostIsItsAnswer
// compares with the answer itself), within the default cost limit; every
// further __schema of an operation costs as much again, so five do not fit.
func TestMeasureIntrospectionBySchemaSize(t *testing.T) {
	size := limits.SizeOf(schema())
	doc := validated(t, testenv.IntrospectionQuery)
	s := limits.Measure(doc.Operations[0], nil, limits.Options{Schema: size})
	t.Logf("GraphiQL's introspection query: depth %d, cost %d", s.Depth, s.Cost)
	if s.Depth != 1 || s.RootFields != 1 || s.Cost < 1000 || s.Cost > limits.DefaultMaxCost/2 {
		t.Errorf("introspection query: %+v, want depth 1 and a cost between 1000 and %d", s, limits.DefaultMaxCost/2)
	}
	body := testenv.IntrospectionQuery[strings.Index(testenv.IntrospectionQuery, "__schema"):strings.Index(testenv.IntrospectionQuery, "fragment FullType")]
	body = strings.TrimSpace(body)
	body = body[:len(body)-1] // the operation's closing brace
	var five strings.Builder
	five.WriteString("{ ")
	for i := range 5 {
		fmt.Fprintf(&five, "s%d: %s ", i, body)
	}
	five.WriteString("}\n" + testenv.IntrospectionQuery[strings.Index(testenv.IntrospectionQuery, "fragment FullType"):])
	s5 := limits.Measure(validated(t, five.String()).Operations[0], nil, limits.Options{Schema: size})
	if s5.Cost != 5*s.Cost || s5.Cost <= limits.DefaultMaxCost {
		t.Errorf("five __schema cost %d, want five times %d, above the limit %d", s5.Cost, s.Cost, limits.DefaultMaxCost)
	}
	// A small selection costs little: the type's object and its name.
	one := limits.Measure(validated(t, `{ __type(name: "Query") { name } __schema { queryType { name } } }`).Operations[0], nil, limits.Options{Schema: size})
	if one.Cost != 3 {
		t.Errorf("__type { name } and __schema { queryType { name } } cost %d, want 3", one.Cost)
	}
	// Without the schema's numbers, lists count as the list estimate.
	if est := limits.Measure(doc.Operations[0], nil, limits.Options{}); est.Cost <= s.Cost {
		t.Errorf("without the schema's size: cost %d, want more than %d", est.Cost, s.Cost)
	}
}

// TestMeasureSurvivesFragmentCycles builds a document the validator would
// refuse (a fragment spreading itself) and checks the walk ends.
func TestMeasureSurvivesFragmentCycles(t *testing.T) {
	doc, err := parser.ParseQuery(&ast.Source{Input: `{ ...A } fragment A on Query { __typename ...B } fragment B on Query { ...A x: __typename }`})
	if err != nil {
		t.Fatal(err)
	}
	var link func(ast.SelectionSet)
	link = func(set ast.SelectionSet) {
		for _, s := range set {
			if fs, ok := s.(*ast.FragmentSpread); ok {
				fs.Definition = doc.Fragments.ForName(fs.Name)
			}
		}
	}
	link(doc.Operations[0].SelectionSet)
	for _, f := range doc.Fragments {
		link(f.SelectionSet)
	}
	s := limits.Measure(doc.Operations[0], nil, limits.Options{})
	if s.RootFields != 2 || s.Aliases != 1 {
		t.Errorf("cyclic fragments: %+v", s)
	}
}

// TestMeasureBoundsExponentialFragments: fragments spread twice per level
// expand to 2^24 fields; the walk stops at its budget and reports it.
func TestMeasureBoundsExponentialFragments(t *testing.T) {
	var b strings.Builder
	b.WriteString("{ ...F0 }\n")
	const levels = 24
	for i := range levels {
		if i == levels-1 {
			b.WriteString("fragment F23 on Query { __typename }\n")
			continue
		}
		b.WriteString("fragment F" + itoa(i) + " on Query { ...F" + itoa(i+1) + " ...F" + itoa(i+1) + " }\n")
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: b.String()})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(ast.FragmentDefinitionList{}, doc.Fragments...) {
		for _, s := range f.SelectionSet {
			if fs, ok := s.(*ast.FragmentSpread); ok {
				fs.Definition = doc.Fragments.ForName(fs.Name)
			}
		}
	}
	doc.Operations[0].SelectionSet[0].(*ast.FragmentSpread).Definition = doc.Fragments.ForName("F0")
	s := limits.Measure(doc.Operations[0], nil, limits.Options{})
	if !s.Truncated {
		t.Fatalf("2^24 expansion not truncated: %+v", s)
	}
	x := limits.New(limits.DefaultConfig())
	oc := &graphql.OperationContext{Operation: doc.Operations[0]}
	if e := x.MutateOperationContext(context.Background(), oc); e == nil || e.Extensions["code"] != errcode.QueryTooComplex {
		t.Fatalf("truncated walk not refused: %v", e)
	}
	// With the cost limit off (0), the walk's budget bounds the measuring,
	// not the operation.
	if e := limits.New(limits.Config{}).MutateOperationContext(context.Background(), oc); e != nil {
		t.Fatalf("truncated walk refused with the cost limit off: %v", e)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestZeroTurnsEachLimitOff(t *testing.T) {
	doc, err := parser.ParseQuery(&ast.Source{Input: `{ a: location(id: "1") { b: orders(first: 500) { nodes { id } } } c: location(id: "2") { id } }`})
	if err != nil {
		t.Fatal(err)
	}
	if errs := validator.Validate(schema(), doc); len(errs) > 0 {
		t.Fatal(errs)
	}
	op := &graphql.OperationContext{Operation: doc.Operations[0]}
	// Each limit alone, set to 1, refuses the operation; set to 0, it does not.
	for _, tc := range []struct {
		name string
		set  func(*limits.Config, int)
	}{
		{limits.RootFields, func(c *limits.Config, v int) { c.MaxRootFields = v }},
		{limits.Aliases, func(c *limits.Config, v int) { c.MaxAliases = v }},
		{limits.Depth, func(c *limits.Config, v int) { c.MaxDepth = v }},
		{limits.Cost, func(c *limits.Config, v int) { c.MaxCost = v }},
	} {
		var c limits.Config
		tc.set(&c, 1)
		if e := limits.New(c).MutateOperationContext(context.Background(), op); e == nil || e.Extensions["limit"] != tc.name {
			t.Errorf("%s = 1: %v", tc.name, e)
		}
		tc.set(&c, 0)
		if e := limits.New(c).MutateOperationContext(context.Background(), op); e != nil {
			t.Errorf("%s = 0 still refuses: %v", tc.name, e)
		}
	}
}

func TestTokenLimitRewritesOnlyTheParserError(t *testing.T) {
	e := limits.TokenLimit(gqlerror.Errorf("exceeded token limit of 100"), 100)
	if e.Extensions["code"] != errcode.QueryTooComplex || e.Extensions["limit"] != limits.Tokens || e.Extensions["maximum"] != 100 {
		t.Fatalf("token error = %+v", e)
	}
	other := gqlerror.Errorf("Unexpected Name")
	if limits.TokenLimit(other, 100) != other {
		t.Fatal("other parse errors must pass unchanged")
	}
}

// TestReadmeStatesTheDashboardsDepthAndCost keeps the documentation's
// figures for its dashboard query measured: "... query has depth D and
// costs C".
func TestReadmeStatesTheDashboardsDepthAndCost(t *testing.T) {
	m := regexp.MustCompile(`dashboard\s+query has depth (\d+) and costs (\d+)`).FindStringSubmatch(testenv.DocsText(t, "../.."))
	if m == nil {
		t.Fatal("the documentation does not state the dashboard query's depth and cost")
	}
	for _, rq := range testenv.DocQueries(t, "../..") {
		if !strings.HasPrefix(rq.Query, "query Dashboard") {
			continue
		}
		doc := validated(t, rq.Query)
		s := limits.Measure(doc.Operations[0], rq.Vars, limits.Options{})
		t.Logf("documented dashboard: %+v", s)
		if got := fmt.Sprintf("depth %d and costs %d", s.Depth, s.Cost); got != fmt.Sprintf("depth %s and costs %s", m[1], m[2]) {
			t.Errorf("the documented dashboard measures %s; the documentation says depth %s and costs %s", got, m[1], m[2])
		}
		if s.Cost > limits.DefaultMaxCost/10 {
			t.Errorf("the documented dashboard uses %d of the default cost limit %d", s.Cost, limits.DefaultMaxCost)
		}
		return
	}
	t.Fatal("the documentation has no dashboard query")
}

// BenchmarkMeasure measures the dashboard operation, as every request does.
func BenchmarkMeasure(b *testing.B) {
	doc, err := parser.ParseQuery(&ast.Source{Input: queries.Dashboard})
	if err != nil {
		b.Fatal(err)
	}
	if errs := validator.Validate(schema(), doc); len(errs) > 0 {
		b.Fatal(errs)
	}
	vars := map[string]any{"locationId": "l"}
	b.ReportAllocs()
	for b.Loop() {
		if s := limits.Measure(doc.Operations[0], vars, limits.Options{}); s.Cost == 0 {
			b.Fatal("no cost")
		}
	}
}
