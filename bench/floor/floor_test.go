package floor

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/workspacenet/facade/restserver"
)

// TestFloorAnswersItsTwoQueriesOnly: the floor answers the resource and the
// orders queries with the REST service's data (the orders' statuses by
// their GraphQL names, each product from its location's list), and refuses
// any other text, a missing variable and a GET. That it answers as the
// facade does, byte for byte and with the same upstream calls, is the
// bench's TestFloorAnswersAsTheFacade.
func TestFloorAnswersItsTwoQueriesOnly(t *testing.T) {
	srv, err := restserver.New(t.Context(), restserver.Config{DBPath: ":memory:", DemoScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	up := httptest.NewServer(srv.Handler())
	t.Cleanup(up.Close)
	m, err := srv.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	floor := httptest.NewServer(f)
	t.Cleanup(floor.Close)

	send := func(method, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, floor.URL+"/graphql", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+m.BearerToken)
		req.Header.Set("Service-Network-Id", m.NetworkID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("answer is not JSON: %v", err)
		}
		return resp.StatusCode, out
	}
	request := func(query string, vars map[string]string) string {
		b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		return string(b)
	}

	id := m.IDs["resource"][0]
	status, out := send(http.MethodPost, request(ResourceQuery, map[string]string{"id": id}))
	r, _ := out["data"].(map[string]any)["resource"].(map[string]any)
	if status != http.StatusOK || r["id"] != id || r["title"] == nil || r["type"] == nil || r["capacity"] == nil {
		t.Errorf("resource: %d %v", status, out)
	}

	status, out = send(http.MethodPost, request(OrdersQuery, map[string]string{"l": m.IDs["location"][0]}))
	orders, _ := out["data"].(map[string]any)["orders"].(map[string]any)
	nodes, _ := orders["nodes"].([]any)
	if status != http.StatusOK || len(nodes) == 0 {
		t.Fatalf("orders: %d %v", status, out)
	}
	for _, n := range nodes {
		o := n.(map[string]any)
		p, _ := o["product"].(map[string]any)
		if o["status"] != "COMPLETED" || o["locationRef"] != m.IDs["location"][0] || p == nil || p["visibility"] == nil || p["options"] == nil {
			t.Errorf("order %v", o)
		}
	}

	for what, body := range map[string]string{
		"another query":              request(`query Resource($id: ID!) { resource(id: $id) { id } }`, map[string]string{"id": id}),
		"the resource without $id":   request(ResourceQuery, nil),
		"the orders without $l":      request(OrdersQuery, map[string]string{"id": id}),
		"a body that is not JSON":    "{",
		"a query text with no query": `{"query":"{ x }"}`,
	} {
		if status, out := send(http.MethodPost, body); status != http.StatusBadRequest || out["errors"] == nil || out["data"] != nil {
			t.Errorf("%s: %d %v", what, status, out)
		}
	}
	if status, out := send(http.MethodGet, ""); status != http.StatusBadRequest || out["errors"] == nil {
		t.Errorf("GET: %d %v", status, out)
	}
}
