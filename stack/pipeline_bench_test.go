package stack_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// BenchmarkPipeline measures the request pipeline's own cost: a request
// through the program's whole router (access log, graph.NewHandler: guard,
// negotiation, context values and call hooks, limits, admission, gqlgen's
// extensions, response writing) in process, without the network.
// "typename" makes no upstream call, so it isolates the pipeline; "resource"
// adds one upstream call (its decoding and the loopback REST service's work
// included). Metrics off, as in the program with an upstream URL.
//
//	go test -run '^$' -bench Pipeline -benchmem ./stack
func BenchmarkPipeline(b *testing.B) {
	cfg := stack.DefaultConfig()
	cfg.DataDir, cfg.Budget, cfg.DemoRateLimit, cfg.CacheTTL, cfg.Playground = "", budget.Config{}, 0, "", false
	st, _ := testenv.Serve(b, cfg, nil)
	m := st.Embedded.Manifest
	header := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/graphql-response+json"},
		"Authorization": {"Bearer " + m.BearerToken}, "Service-Network-Id": {m.NetworkID}}
	for _, c := range []struct {
		name, query string
		vars        map[string]any
	}{
		{"typename", `{ __typename }`, nil},
		{"resource", `query Resource($id: ID!) { resource(id: $id) { id title type capacity } }`, map[string]any{"id": m.IDs["resource"][0]}},
	} {
		b.Run(c.name, func(b *testing.B) {
			body, _ := json.Marshal(map[string]any{"query": c.query, "variables": c.vars})
			serveLoop(b, st.Handler, header, body)
		})
	}
}

// serveLoop POSTs body with header to h's /graphql for each b.Loop
// iteration, failing on a status other than 200 or an answer with errors.
func serveLoop(b *testing.B, h http.Handler, header http.Header, body []byte) {
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header = header.Clone()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) {
			b.Fatalf("%d %.300s", rec.Code, rec.Body.String())
		}
	}
}
