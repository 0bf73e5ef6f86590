package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// liveReport is one line of live_query.mjs.
type liveReport struct {
	Client, Kind, Query, Error string
	Revision                   int
	Fields                     []string
	Patch                      []map[string]any
	Bytes                      int
	Data                       json.RawMessage
	Errors                     json.RawMessage
}

// TestLiveQueryGraphqlWsAndUrql: the README dashboard as a @live query, with the two
// clients of docs/live-data.md: graphql-ws directly, its results through
// the graphql-live-query JSON Patch applier, and urql's subscriptionExchange
// over graphql-ws through the same applier. Each gets the whole result
// (revision 1); a status change of one order made on the local REST
// service's test endpoint reaches each as a patch (revision 2, no data),
// and the patched result equals a fresh query's; more polls of an unchanged
// upstream send nothing more.
func TestLiveQueryGraphqlWsAndUrql(t *testing.T) {
	node := requireNode(t)
	t.Setenv("NODE_OPTIONS", "--experimental-websocket") // Node 20: WebSocket behind a flag
	d := startLiveDemo(t)
	base, st, creds, loc, order, status := d.base, d.st, d.creds, d.loc, d.order, d.status
	live := strings.Replace(queries.Dashboard, "query Dashboard($locationId: ID!) {", "query Dashboard($locationId: ID!) @live {", 1)
	if live == queries.Dashboard {
		t.Fatal("queries.Dashboard's first line changed: mark it @live here")
	}
	vars := map[string]any{"locationId": loc}
	varsJSON, _ := json.Marshal(vars)

	reports := startLiveClients(t, node, base+"/graphql", creds, live, string(varsJSON))
	results := func(client string) []liveReport { return reports(client, "result") }
	testenv.WaitFor(t, "both clients' first result", func() bool {
		return len(results("graphqlWs")) == 1 && len(results("urql")) == 1
	})
	testenv.WaitFor(t, "every watched source polled once", func() bool {
		s := st.Live.Stats()
		return s.Pollers > 0 && s.Ready == s.Pollers
	})

	if err := setOrder(st.UpstreamURL, order.ID, string(status)); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "both clients' second result", func() bool {
		return len(results("graphqlWs")) == 2 && len(results("urql")) == 2
	})
	// Nothing changes for three more polls of the orders: nothing is sent.
	polls := st.Live.Stats().Polls[restclient.OpListOrders.Route]
	testenv.WaitFor(t, "three more polls of the orders", func() bool {
		return st.Live.Stats().Polls[restclient.OpListOrders.Route] >= polls+3
	})

	sent := reports("urql", "sent")
	if len(sent) != 1 {
		t.Fatalf("urql sent %d operations, want 1", len(sent))
	}
	fresh := map[string]any{
		"graphqlWs": freshData(t, base, creds, queries.Dashboard, vars),
		"urql":      freshData(t, base, creds, sent[0].Query, vars), // with urql's __typename
	}
	for _, client := range []string{"graphqlWs", "urql"} {
		if e := reports(client, "error"); len(e) != 0 {
			t.Errorf("%s: %+v", client, e)
		}
		wire, got := reports(client, "wire"), results(client)
		if len(wire) != 2 || len(got) != 2 {
			t.Fatalf("%s: %d results on the wire, %d to the user, want 2 and 2: %+v", client, len(wire), len(got), wire)
		}
		if w := wire[0]; w.Revision != 1 || !slices.Contains(w.Fields, "data") || slices.Contains(w.Fields, "patch") {
			t.Errorf("%s: first result %+v, want the whole data with revision 1", client, w)
		}
		if w := wire[1]; w.Revision != 2 || slices.Contains(w.Fields, "data") || len(w.Patch) == 0 {
			t.Errorf("%s: update %+v, want a patch with revision 2 and no data", client, w)
		}
		t.Logf("%s: first result %d bytes, update %d bytes: %v", client, wire[0].Bytes, wire[1].Bytes, wire[1].Patch)
		for i, r := range got {
			if len(r.Errors) != 0 && string(r.Errors) != "null" {
				t.Errorf("%s: result %d has errors %s", client, i+1, r.Errors)
			}
		}
		// Cursors are sealed with a random nonce: each run's differ, so they
		// are compared as present, not by value.
		patched := withoutCursors(decode(t, got[1].Data))
		if !reflect.DeepEqual(patched, withoutCursors(fresh[client])) {
			t.Errorf("%s: the patched result differs from a fresh query's:\npatched %s\nfresh   %s", client, got[1].Data, mustJSON(fresh[client]))
		}
		if s := orderStatus(patched, order.ID); s != strings.ToUpper(string(status)) {
			t.Errorf("%s: order %s is %q in the patched result, want %q", client, order.ID, s, strings.ToUpper(string(status)))
		}
		if reflect.DeepEqual(withoutCursors(decode(t, got[0].Data)), patched) {
			t.Errorf("%s: the update changed nothing", client)
		}
	}
}

// startLiveClients starts live_query.mjs and returns what its clients have
// reported so far, by client and kind; the script stops when t ends.
func startLiveClients(t *testing.T, node, endpoint string, creds restclient.Credentials, query, vars string) func(client, kind string) []liveReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	cmd := exec.CommandContext(ctx, node, "live_query.mjs", endpoint, creds.Authorization, creds.NetworkID, query, vars)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []liveReport
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var r liveReport
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				r = liveReport{Kind: "error", Error: "not JSON: " + sc.Text()}
			}
			mu.Lock()
			seen = append(seen, r)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		<-done
		if err := cmd.Wait(); err != nil || t.Failed() {
			t.Logf("live_query.mjs: %v; stderr:\n%.4000s", err, stderr.String())
		}
		cancel()
	})
	return func(client, kind string) []liveReport {
		mu.Lock()
		defer mu.Unlock()
		var out []liveReport
		for _, r := range seen {
			if (r.Client == client || r.Client == "") && r.Kind == kind {
				out = append(out, r)
			}
		}
		return out
	}
}

// liveDemo is the demo stack of a live-query test (polls every 100 ms),
// its first location's newest order, and the status it is to be changed to.
type liveDemo struct {
	base   string
	st     *stack.Stack
	creds  restclient.Credentials
	loc    string
	order  *restclient.Order
	status restclient.OrderStatus
}

func startLiveDemo(t *testing.T) liveDemo {
	t.Helper()
	base, st := startDemo(t, func(c *stack.Config) {
		c.Live.Interval, c.Live.AllowFastPolls = 100*time.Millisecond, true
	})
	m := st.Embedded.Manifest
	d := liveDemo{base: base, st: st, loc: m.IDs["location"][0],
		creds: restclient.Credentials{Authorization: "Bearer " + m.BearerToken, NetworkID: m.NetworkID}}
	orders, _, err := st.Client.Shop.ListOrders(restclient.WithCredentials(t.Context(), d.creds),
		&restclient.OrderListOptions{LocationRef: d.loc, ListOptions: restclient.ListOptions{Limit: 1}})
	if err != nil || len(orders) == 0 {
		t.Fatalf("orders: %v", err)
	}
	d.order, d.status = orders[0], restclient.OrderStatusCanceled
	if d.order.Status != nil && *d.order.Status == d.status {
		d.status = restclient.OrderStatusCompleted
	}
	return d
}

// setOrder sets an order's status on the local REST service (a test
// endpoint: a change made outside the facade).
func setOrder(upstream, id, status string) error {
	body, _ := json.Marshal(map[string]string{"status": status})
	resp, err := http.Post(upstream+"/_test/orders/"+id+"/set", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("set order %s: HTTP %d", id, resp.StatusCode)
	}
	return nil
}

// freshData runs query over plain HTTP and returns its data, decoded.
func freshData(t *testing.T, base string, creds restclient.Credentials, query string, vars map[string]any) any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", creds.Authorization)
	req.Header.Set("service-network-id", creds.NetworkID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data   json.RawMessage
		Errors json.RawMessage
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || len(r.Errors) != 0 {
		t.Fatalf("fresh query: HTTP %d %v %s", resp.StatusCode, err, r.Errors)
	}
	return decode(t, r.Data)
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%.300s: %v", b, err)
	}
	return v
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// withoutCursors replaces, in place, every non-empty cursor string of v
// (a decoded result) by "<cursor>" and returns v.
func withoutCursors(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && s != "" && (k == "endCursor" || k == "startCursor" || k == "cursor") {
				v[k] = "<cursor>"
			} else {
				withoutCursors(x)
			}
		}
	case []any:
		for _, x := range v {
			withoutCursors(x)
		}
	}
	return v
}

// orderStatus is the status of order id among the dashboard's orders.
func orderStatus(data any, id string) string {
	loc, _ := data.(map[string]any)["location"].(map[string]any)
	orders, _ := loc["orders"].(map[string]any)
	nodes, _ := orders["nodes"].([]any)
	for _, n := range nodes {
		if o, _ := n.(map[string]any); o["id"] == id {
			s, _ := o["status"].(string)
			return s
		}
	}
	return ""
}
