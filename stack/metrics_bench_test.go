package stack_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// BenchmarkDashboardMetrics runs the README's dashboard through the facade's
// handler (the embedded REST service over loopback, no budget, no cache)
// with metrics off and on: the difference is the metrics' cost per query
// (both sides: the facade's and the embedded service's).
//
//	go test -run '^$' -bench DashboardMetrics -benchmem ./stack
func BenchmarkDashboardMetrics(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			cfg := stack.DefaultConfig()
			cfg.DataDir, cfg.Budget, cfg.DemoRateLimit, cfg.CacheTTL = "", budget.Config{}, 0, ""
			if on {
				cfg.MetricsAddr = "127.0.0.1:0"
			}
			st, _ := testenv.Serve(b, cfg, nil)
			m := st.Embedded.Manifest
			body, _ := json.Marshal(map[string]any{"query": queries.Dashboard, "variables": map[string]any{"locationId": m.IDs["location"][0]}})
			header := http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + m.BearerToken}, "Service-Network-Id": {m.NetworkID}}
			serveLoop(b, st.Handler, header, body)
		})
	}
}
