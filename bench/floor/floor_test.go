package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/workspacenet/facade/restserver"
)

// TestFloorAnswersAsTheFacade: the floor answers the single-resource query with the resource the REST service holds, and refuse
// anything else; so its figure is that of the same work.
func TestFloorAnswersAsTheFacade(t *testing.T) {
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
	f, err := newFloor(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	viaNet := httptest.NewServer(f)
	t.Cleanup(viaNet.Close)

	id := m.IDs["resource"][0]
	base := viaNet.URL
	post := func(body string) (int, map[string]any) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/graphql", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+m.BearerToken)
		req.Header.Set("Service-Network-Id", m.NetworkID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("%s: answer is not JSON: %v", base, err)
		}
		return resp.StatusCode, out
	}
	status, out := post(`{"query":"query Resource($id: ID!) { resource(id: $id) { id title type capacity } }","variables":{"id":"` + id + `"}}`)
	data, _ := out["data"].(map[string]any)
	r, _ := data["resource"].(map[string]any)
	if status != http.StatusOK || r["id"] != id || r["title"] == nil || r["type"] == nil {
		t.Errorf("%s: %d %v", base, status, out)
	}
	if status, out := post(`{"query":"{ x }"}`); status != http.StatusBadRequest || out["errors"] == nil {
		t.Errorf("%s: a query without $id: %d %v", base, status, out)
	}
	if status, out := post(`{"query":"query Resource($id: ID!) { resource(id: $id) { id } }","variables":{"id":"` + id + `"}}`); status != http.StatusBadRequest || out["errors"] == nil {
		t.Errorf("%s: another query: %d %v", base, status, out)
	}
}
