package graph_test

import (
	"testing"

	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

// BenchmarkNestedQuery executes the nested dashboard query end to end (HTTP
// in, loopback REST calls out) against a zero-latency upstream. ns/op and
// allocs/op include the in-process REST service's work.
func BenchmarkNestedQuery(b *testing.B) {
	env := testenv.New(b, testenv.Options{NoTrace: true})
	vars := map[string]any{"l": env.ID(b, "location", 0)}
	creds := env.Bearer()
	if r := env.Query(b, creds, queries.BenchDashboard, vars); len(r.Errors) > 0 {
		b.Fatalf("errors: %+v", r.Errors)
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := env.Query(b, creds, queries.BenchDashboard, vars); len(r.Errors) > 0 {
			b.Fatalf("errors: %+v", r.Errors)
		}
	}
}
