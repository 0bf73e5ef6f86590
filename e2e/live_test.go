package e2e

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// TestLiveClients: the npm graphql-ws client, graphql-sse's client in
// distinct connections mode and Apollo Client's GraphQLWsLink each receive
// CREATED events of the orders made in a location, with the node's links
// resolved, all three fed by one poller.
func TestLiveClients(t *testing.T) {
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
	out := runNode(t, node, "live.mjs", base+"/graphql", "Bearer "+m.BearerToken, m.NetworkID, loc, st.UpstreamURL, orders[0].ID)
	type client struct {
		Events []struct{ Kind, ID, Product string }
		Error  string
	}
	var got struct {
		Created                       []string
		GraphqlWs, GraphqlSse, Apollo client
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("live.mjs: %v\n%s", err, out)
	}
	for name, c := range map[string]client{"graphql-ws": got.GraphqlWs, "graphql-sse": got.GraphqlSse, "Apollo GraphQLWsLink": got.Apollo} {
		if c.Error != "" || len(c.Events) == 0 {
			t.Errorf("%s: error %q, %d events; output %s", name, c.Error, len(c.Events), out)
			continue
		}
		for _, e := range c.Events {
			if e.Kind != "CREATED" || !slices.Contains(got.Created, e.ID) || e.Product == "" {
				t.Errorf("%s: event %+v, want CREATED of an order made, with its product", name, e)
			}
		}
	}
	// One poller fed the three: every order list the upstream served but
	// the test's own is one of its polls (the last, cancelled in flight
	// when the clients left, may have reached it uncounted).
	served := st.Embedded.Server.Hooks().Counts()["GET /shop/orders/v1"] - 1
	if polls := st.Live.Stats().Polls["/shop/orders/v1"]; served != polls && served != polls+1 {
		t.Errorf("the upstream served %d order lists, the hub made %d polls", served, polls)
	}
}
