package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// TestLiveQueryClients: a @live query through the npm graphql-ws client,
// its results through @n1ru4l/graphql-live-query-patch-json-patch: the
// first result is the query's, and an order's status changed on the local
// REST service comes as revision 2, whose patch, applied by the package,
// gives what a fresh query returns.
func TestLiveQueryClients(t *testing.T) {
	node := requireNode(t)
	t.Setenv("NODE_OPTIONS", "--experimental-websocket") // Node 20: WebSocket behind a flag
	base, st := startDemo(t, func(c *stack.Config) {
		c.Live.Interval, c.Live.AllowFastPolls = 100*time.Millisecond, true
	})
	m := st.Embedded.Manifest
	loc := m.IDs["location"][0]
	ctx := restclient.WithCredentials(t.Context(), restclient.Credentials{Authorization: "Bearer " + m.BearerToken, NetworkID: m.NetworkID})
	orders, _, err := st.Client.Shop.ListOrders(ctx, &restclient.OrderListOptions{LocationRef: loc, ListOptions: restclient.ListOptions{Limit: 1}})
	if err != nil || len(orders) == 0 {
		t.Fatalf("orders: %v", err)
	}
	status := "canceled"
	if s := orders[0].Status; s != nil && *s == restclient.OrderStatusCanceled {
		status = "completed"
	}
	out := runNode(t, node, "livequery.mjs", base+"/graphql", "Bearer "+m.BearerToken, m.NetworkID, loc, st.UpstreamURL, orders[0].ID, status)
	var got struct {
		First, Second map[string]any
		Revisions     []int
		Error         string
	}
	if err := json.Unmarshal(out, &got); err != nil || got.Error != "" {
		t.Fatalf("livequery.mjs: %v %s", err, out)
	}
	if !reflect.DeepEqual(got.Revisions, []int{1, 2}) || !strings.Contains(string(out), strings.ToUpper(status)) {
		t.Fatalf("revisions %v, want [1 2] and the new status: %s", got.Revisions, out)
	}
	fresh := freshQuery(t, base, m.BearerToken, m.NetworkID, loc)
	if !reflect.DeepEqual(got.Second, fresh) {
		t.Fatalf("patched result %v\nfresh query %v", got.Second, fresh)
	}
}

// freshQuery is the data of the live query's selection, asked over HTTP.
func freshQuery(t *testing.T, base, token, network, loc string) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": `query($l: ID!) { location(id: $l) { id orders(first: 5) { nodes { id status product { title } } } } }`, "variables": map[string]any{"l": loc}})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("service-network-id", network)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct{ Data map[string]any }
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return r.Data
}
