package graph_test

import (
	"context"
	"encoding/json"
	"github.com/workspacenet/facade/restclient"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restserver/hooks"
)

// The upstream's future: values of the closed enumerations the spec lists
// (order status, transaction status and type) that a later version of the
// API may add. The local service refuses to store them (its test endpoints
// answer 400); a rewrite fault puts them in its answers.
const (
	futureOrderStatus = "onHold"
	futureTxStatus    = "refunded"
	futureTxType      = "giftCard"
)

// rewriteFuture makes the local service answer the order with id orderID
// with futureOrderStatus, and the transaction txID with futureTxStatus and
// futureTxType (either id may be empty: no rewrite of that list).
func rewriteFuture(env *testenv.Env, orderID, txID string) {
	if orderID != "" {
		env.Hooks().SetFault(restclient.OpListOrders.Pattern(), hooks.Fault{Kind: hooks.FaultRewrite, Rate: 1,
			Rewrite: &hooks.Rewrite{ID: orderID, Set: map[string]any{"status": futureOrderStatus}}})
	}
	if txID != "" {
		env.Hooks().SetFault(restclient.OpListTransactions.Pattern(), hooks.Fault{Kind: hooks.FaultRewrite, Rate: 1,
			Rewrite: &hooks.Rewrite{ID: txID, Set: map[string]any{"status": futureTxStatus, "type": futureTxType}}})
	}
}

// unknownValue is an UPSTREAM_INVALID error expected at path with value.
type unknownValue struct {
	path  string // the error's path, dotted
	value string
}

// expectUnknownValues fails t unless errs are exactly the UPSTREAM_INVALID
// errors of want, each with its path and extensions.value.
func expectUnknownValues(t *testing.T, errs []any, want ...unknownValue) {
	t.Helper()
	var got []unknownValue
	for _, e := range errs {
		m, _ := e.(map[string]any)
		ext, _ := m["extensions"].(map[string]any)
		var path []string
		for _, p := range asList(m["path"]) {
			b, _ := json.Marshal(p)
			path = append(path, strings.Trim(string(b), `"`))
		}
		if ext["code"] != errcode.UpstreamInvalid {
			t.Errorf("error %v, want only UPSTREAM_INVALID", e)
			continue
		}
		v, _ := ext["value"].(string)
		if msg, _ := m["message"].(string); !strings.Contains(msg, v) {
			t.Errorf("message %q does not name the value %q", msg, v)
		}
		got = append(got, unknownValue{strings.Join(path, "."), v})
	}
	byPath := func(a, b unknownValue) int { return strings.Compare(a.path, b.path) }
	slices.SortFunc(got, byPath)
	slices.SortFunc(want, byPath)
	if !slices.Equal(got, want) {
		t.Fatalf("errors %v, want UPSTREAM_INVALID %v", got, want)
	}
}

// withNulls returns a copy of the decoded result v with each dotted path of
// paths set to null.
func withNulls(t *testing.T, v any, paths ...string) any {
	t.Helper()
	out := jsonTree(t, v)
	for _, p := range paths {
		keys := strings.Split(p, ".")
		parent := get(out, strings.Join(keys[:len(keys)-1], "."))
		m, ok := parent.(map[string]any)
		if !ok {
			t.Fatalf("no object at %s in %s", p, pretty(out))
		}
		m[keys[len(keys)-1]] = nil
	}
	return out
}

// resultOf decodes r's whole answer as a generic JSON tree.
func resultOf(t *testing.T, r *testenv.Response) (data any, errs []any) {
	t.Helper()
	var whole struct {
		Data   any
		Errors []any
	}
	if err := json.Unmarshal(r.Raw, &whole); err != nil {
		t.Fatalf("%s: %v", r.Raw, err)
	}
	return whole.Data, whole.Errors
}

const enumsQuery = `query($l: ID!) {
  orders(locationId: $l, first: 5) { nodes { id number status product { id title } } }
  transactions(locationId: $l, first: 5) { nodes { id amount status type createDate } }
}`

// TestUnknownEnumValuesInAQuery: an order status, a transaction status and
// a transaction type the schema lacks, in the upstream's answers, are each
// null with UPSTREAM_INVALID on its own path (extensions.value: what the
// upstream sent); every other value of the result is what it is without
// them, for the same upstream calls.
func TestUnknownEnumValuesInAQuery(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	vars := map[string]any{"l": env.ID(t, "location", 0)}
	want := mustRun(t, env, env.Bearer(), enumsQuery, vars)
	wantCalls, _ := env.Calls()
	order, tx := str(want, "orders.nodes.1.id"), str(want, "transactions.nodes.2.id")
	if order == "" || tx == "" || str(want, "orders.nodes.1.status") == "" || str(want, "transactions.nodes.2.type") == "" {
		t.Fatalf("the demo data lacks what the test changes: %s", pretty(want))
	}

	rewriteFuture(env, order, tx)
	r := run(t, env, env.Bearer(), enumsQuery, vars)
	expectCalls(t, env, callsOf(t, wantCalls))
	data, errs := resultOf(t, r)
	expectUnknownValues(t, errs,
		unknownValue{"orders.nodes.1.status", futureOrderStatus},
		unknownValue{"transactions.nodes.2.status", futureTxStatus},
		unknownValue{"transactions.nodes.2.type", futureTxType})
	mustSameData(t, "the result with unknown values", data,
		withNulls(t, want, "orders.nodes.1.status", "transactions.nodes.2.status", "transactions.nodes.2.type"))
	if inj := env.Hooks().Injected(); inj[restclient.OpListOrders.Pattern()][hooks.FaultRewrite] != 1 || inj[restclient.OpListTransactions.Pattern()][hooks.FaultRewrite] != 1 {
		t.Fatalf("rewrites injected %v, want one per list", inj)
	}
}

// TestUnknownEnumValueInADeferredPart: in each incremental format, an
// unknown order status in a deferred part is null with its UPSTREAM_INVALID
// error in that part (the initial payload has none), the merged result the
// plain query's with that one null, for the same upstream calls.
func TestUnknownEnumValueInADeferredPart(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	vars := map[string]any{"l": env.ID(t, "location", 0)}
	const query = `query($l: ID!) {
  location(id: $l) { id ... @defer(label: "orders") { orders(first: 5) { nodes { id number status product { title } } } } }
}`
	env.ResetCalls()
	plain := mergeParts(t, parts(t, incrementalRequest(t, env, "application/json", withoutDefer(query), vars)))
	wantCalls, wantTotal := env.Calls()
	order := str(plain.data, "location.orders.nodes.1.id")
	if len(plain.errors) > 0 || order == "" {
		t.Fatalf("without @defer: %v %s", plain.errors, pretty(plain.data))
	}
	rewriteFuture(env, order, "")
	for _, accept := range []string{acceptDefer2022, acceptV02, acceptSSE, acceptSSEV02} {
		t.Run(accept, func(t *testing.T) {
			env.ResetCalls()
			next := parts(t, incrementalRequest(t, env, accept, query, vars))
			first := next()
			if first == nil || first["errors"] != nil || first["hasNext"] != true {
				t.Fatalf("initial payload %v, want no error and more to come", first)
			}
			got := mergeParts(t, func() map[string]any {
				if p := first; p != nil {
					first = nil
					return p
				}
				return next()
			})
			if got.payloads < 2 {
				t.Fatalf("%d payloads: the part was not deferred", got.payloads)
			}
			expectUnknownValues(t, got.errors, unknownValue{"location.orders.nodes.1.status", futureOrderStatus})
			mustSameData(t, "the merged result", got.data, withNulls(t, plain.data, "location.orders.nodes.1.status"))
			expectSameCalls(t, env, accept, "without @defer", wantCalls, wantTotal)
		})
	}
}

// TestUnknownEnumValuesInSubscriptionEvents: a poll that sees an order, over
// WebSocket, and a transaction, over SSE, in a status (and type) the schema
// lacks, and with an unreadable create date, sends an UPDATED event whose
// node has those values null with their UPSTREAM_INVALID errors (the
// timestamp's raised as the event is written), its other fields and links
// intact.
func TestUnknownEnumValuesInSubscriptionEvents(t *testing.T) {
	env := liveEnv(t, nil)
	loc := env.ID(t, "location", 0)
	order := firstOrder(t, env, loc)
	var txs struct {
		Transactions struct{ Nodes []struct{ ID string } }
	}
	testenv.MustData(t, env.Query(t, env.Bearer(), `query($l: ID!) { transactions(locationId: $l, first: 1) { nodes { id } } }`, map[string]any{"l": loc}), &txs)
	if len(txs.Transactions.Nodes) == 0 {
		t.Fatal("no transaction in the location")
	}
	tx := txs.Transactions.Nodes[0].ID

	ws := connectLive(t, env, initOf(env.Bearer()))
	ws.subscribe("1", `subscription($loc: ID!) { orderEvents(locationId: $loc) { kind node { id createDate status product { title } } } }`, map[string]any{"loc": loc})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const txEvents = `subscription($l: ID!) { transactionEvents(locationId: $l) { kind node { id amount createDate status type location { id } } } }`
	resp := sseDo(t, ctx, env, env.Bearer(), map[string]any{"query": txEvents, "variables": map[string]any{"l": loc}}, nil, nil)
	defer resp.Body.Close()
	mustStream(t, "transactionEvents over SSE", resp)
	testenv.WaitFor(t, "two subscriptions", func() bool { return env.Stack.Live.Stats().Subscriptions == 2 })
	waitPolls(t, env, restclient.OpListOrders.Route, 1) // the baselines are set
	waitPolls(t, env, restclient.OpListTransactions.Route, 1)

	env.Hooks().SetFault(restclient.OpListOrders.Pattern(), hooks.Fault{Kind: hooks.FaultRewrite, Rate: 1,
		Rewrite: &hooks.Rewrite{ID: order.ID, Set: map[string]any{"status": futureOrderStatus, "createDate": badOrderDate}}})
	env.Hooks().SetFault(restclient.OpListTransactions.Pattern(), hooks.Fault{Kind: hooks.FaultRewrite, Rate: 1,
		Rewrite: &hooks.Rewrite{ID: tx, Set: map[string]any{"status": futureTxStatus, "type": futureTxType, "createDate": badTxDate}}})

	m := ws.next("1")
	var ev struct {
		Data   any
		Errors []any
	}
	if m.Type != "next" || json.Unmarshal(m.Payload, &ev) != nil {
		t.Fatalf("order event: %s %s", m.Type, m.Payload)
	}
	if get(ev.Data, "orderEvents.kind") != "UPDATED" || str(ev.Data, "orderEvents.node.id") != order.ID ||
		!selected(ev.Data, "orderEvents.node.status") || get(ev.Data, "orderEvents.node.status") != nil ||
		!selected(ev.Data, "orderEvents.node.createDate") || get(ev.Data, "orderEvents.node.createDate") != nil || str(ev.Data, "orderEvents.node.product.title") == "" {
		t.Fatalf("order event %s, want UPDATED of %s, status and createDate null, its product", m.Payload, order.ID)
	}
	// An unreadable timestamp's error has no extensions.value.
	expectUnknownValues(t, ev.Errors, unknownValue{"orderEvents.node.status", futureOrderStatus}, unknownValue{"orderEvents.node.createDate", ""})

	select {
	case e := <-sseEvents(resp):
		kind, payload, _ := strings.Cut(e, " ")
		ev.Data, ev.Errors = nil, nil
		if kind != "next" || json.Unmarshal([]byte(payload), &ev) != nil {
			t.Fatalf("transaction event %s", e)
		}
		if get(ev.Data, "transactionEvents.kind") != "UPDATED" || str(ev.Data, "transactionEvents.node.id") != tx ||
			get(ev.Data, "transactionEvents.node.status") != nil || get(ev.Data, "transactionEvents.node.type") != nil ||
			!selected(ev.Data, "transactionEvents.node.createDate") || get(ev.Data, "transactionEvents.node.createDate") != nil ||
			get(ev.Data, "transactionEvents.node.amount") == nil || str(ev.Data, "transactionEvents.node.location.id") != loc {
			t.Fatalf("transaction event %s, want UPDATED of %s, status, type and createDate null, the rest intact", payload, tx)
		}
		expectUnknownValues(t, ev.Errors,
			unknownValue{"transactionEvents.node.status", futureTxStatus},
			unknownValue{"transactionEvents.node.type", futureTxType},
			unknownValue{"transactionEvents.node.createDate", ""})
	case <-time.After(30 * time.Second):
		t.Fatal("no transaction event")
	}
}
