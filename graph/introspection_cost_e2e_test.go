package graph_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"log/slog"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/limits"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

// objects counts the JSON objects in v.
func objects(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		n = 1
		for _, e := range x {
			n += objects(e)
		}
	case []any:
		for _, e := range x {
			n += objects(e)
		}
	}
	return n
}

// loggedCost returns the cost the access log gave the last GraphQL request.
func loggedCost(t *testing.T, logs *testenv.LogBuffer) int {
	t.Helper()
	cost := -1
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Msg  string
			Cost *int
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "http request" && line.Cost != nil {
			cost = *line.Cost
		}
	}
	if cost < 0 {
		t.Fatal("no access log line with a cost")
	}
	return cost
}

// TestIntrospectionCostIsItsAnswer: GraphiQL's introspection query, without
// credentials, is admitted and answered, and costs about the objects of its
// answer (graph/limits measures it with the schema's own numbers); an
// operation repeating __schema pays for each one, so 19 aliased __schema
// (3.8 MB of answer) are refused as too costly before they run.
func TestIntrospectionCostIsItsAnswer(t *testing.T) {
	logs := &testenv.LogBuffer{}
	env := testenv.New(t, testenv.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})

	r := env.Query(t, testenv.Creds{}, testenv.IntrospectionQuery, nil)
	if r.Status != 200 || len(r.Errors) > 0 {
		t.Fatalf("GraphiQL's introspection query: HTTP %d %.300s", r.Status, r.Raw)
	}
	var data any
	if err := json.Unmarshal(r.Data, &data); err != nil {
		t.Fatal(err)
	}
	held, cost := objects(data)-1, loggedCost(t, logs) // data's own object is not the answer's
	t.Logf("GraphiQL's introspection query: cost %d, its answer %d objects, %d bytes", cost, held, len(r.Raw))
	if cost < held*9/10 || cost > held*3/2 {
		t.Errorf("cost %d for an answer of %d objects: want it within -10%%..+50%% of them", cost, held)
	}

	schema := `__schema { types { ...FullType } directives { name args { ...InputValue } } }`
	fragments := testenv.IntrospectionQuery[strings.Index(testenv.IntrospectionQuery, "fragment FullType"):]
	var many strings.Builder
	many.WriteString("{ ")
	for i := range 19 {
		many.WriteString("s" + string(rune('a'+i)) + ": " + schema + " ")
	}
	many.WriteString("}\n" + fragments)
	r = env.Query(t, testenv.Creds{}, many.String(), nil)
	if len(r.Errors) != 1 || r.Errors[0].Code() != errcode.QueryTooComplex || r.Errors[0].Extensions["limit"] != limits.Cost || len(r.Raw) > 2000 {
		t.Fatalf("19 aliased __schema: want QUERY_TOO_COMPLEX on cost and a small answer, got HTTP %d %.500s", r.Status, r.Raw)
	}
	t.Logf("19 aliased __schema: %s", r.Errors[0].Message)
}
