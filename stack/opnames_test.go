package stack_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/workspacenet/facade/internal/policy/metrics"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
)

// TestUnauthenticatedNamesTakeNoLabel: operations whose credentials the
// upstream never accepted (a token it refuses, or no credentials and no
// upstream call) do not take operation_name label slots, however many
// distinct names they bring: they count as "other". An operation whose
// calls were answered afterwards gets its own label.
func TestUnauthenticatedNamesTakeNoLabel(t *testing.T) {
	st, base := start(t, nil, nil, "-metrics-addr=127.0.0.1:0", "-upstream-rps=0", "-demo-rate-limit=0")
	m := st.Embedded.Manifest
	resource := m.IDs["resource"][0]
	post := func(c *gqlclient.Client, q string) *gqlclient.Response {
		t.Helper()
		r, err := c.Post(context.Background(), gqlclient.Request{Query: q}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	garbage := &gqlclient.Client{URL: base + "/graphql", Header: gqlclient.Credentials("Bearer not-a-token", m.NetworkID)}
	anonymous := &gqlclient.Client{URL: base + "/graphql"}
	n := metrics.DefaultMaxOperations + 10
	for i := range n {
		if r := post(garbage, fmt.Sprintf(`query Probe%d { resource(id: %q) { id } }`, i, resource)); len(r.Errors) == 0 {
			t.Fatalf("a refused token got data: %s", r.Raw)
		}
		post(anonymous, fmt.Sprintf(`query Anon%d { __typename }`, i))
	}
	bearer := &gqlclient.Client{URL: base + "/graphql", Header: gqlclient.Credentials("Bearer "+m.BearerToken, m.NetworkID)}
	if r := post(bearer, fmt.Sprintf(`query Accepted { resource(id: %q) { id } }`, resource)); len(r.Errors) > 0 {
		t.Fatalf("Accepted: %s", r.Raw)
	}

	fams := scrape(t, st.MetricsURL)
	names := map[string]float64{}
	for _, s := range fams["facade_graphql_requests_total"].GetMetric() {
		for _, l := range s.GetLabel() {
			if l.GetName() == "operation_name" {
				names[l.GetValue()] += s.GetCounter().GetValue()
			}
		}
	}
	for name := range names {
		if strings.HasPrefix(name, "Probe") || strings.HasPrefix(name, "Anon") {
			t.Errorf("operation_name %q: an unauthenticated operation took a label", name)
		}
	}
	if names["other"] != float64(2*n) {
		t.Errorf("operation_name \"other\" counted %v requests, want the %d unauthenticated ones", names["other"], 2*n)
	}
	if names["Accepted"] != 1 {
		t.Errorf("the authenticated operation's own label counted %v requests, want 1 (labels: %v)", names["Accepted"], names)
	}
}
