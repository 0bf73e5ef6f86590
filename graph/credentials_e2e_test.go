package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
)

// headerLog records the credential headers of every upstream request.
type headerLog struct {
	mu   sync.Mutex
	seen []testenv.Creds
}

func (h *headerLog) observe(r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = append(h.seen, testenv.Creds{Authorization: r.Header.Get("Authorization"), NetworkID: r.Header.Get("service-network-id")})
}

func (h *headerLog) take() []testenv.Creds {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.seen
	h.seen = nil
	return out
}

// nestedByNetwork selects lists and links that each need their own upstream
// calls (resources, events and invoices are loaded one by one).
const nestedByNetwork = `query($l: ID!) {
  transactions(locationId: $l, first: 60) {
    nodes { id locationRef booking { resource { id capacity } } ticket { event { id venue } } invoice { id number } order { product { id visibility } } }
  }
  orders(locationId: $l, first: 5) { nodes { id } }
}`

func idSet(ids ...[]string) map[string]bool {
	m := map[string]bool{}
	for _, l := range ids {
		for _, id := range l {
			m[id] = true
		}
	}
	return m
}

// allIDs returns every uuid-looking string in a decoded tree.
func allIDs(v any, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			allIDs(e, out)
		}
	case []any:
		for _, e := range x {
			allIDs(e, out)
		}
	case string:
		if len(x) == 36 && strings.Count(x, "-") == 4 {
			out[x] = true
		}
	}
}

func TestCredentialsReachEveryUpstreamCall(t *testing.T) {
	log := &headerLog{}
	env := testenv.New(t, testenv.Options{OnUpstreamRequest: log.observe})
	other := env.Other(t)
	om := env.Manifest.OtherNetworks[0]
	for _, c := range []struct {
		name  string
		creds testenv.Creds
		loc   string
		own   map[string][]string
	}{
		{"first network", env.Bearer(), env.ID(t, "location", 0), env.Manifest.IDs},
		{"second network", other, om.IDs["location"][0], om.IDs},
		{"basic auth", env.Basic(), env.ID(t, "location", 1), env.Manifest.IDs},
	} {
		t.Run(c.name, func(t *testing.T) {
			log.take()
			d := mustRun(t, env, c.creds, nestedByNetwork, map[string]any{"l": c.loc})
			_, total := env.Calls()
			seen := log.take()
			if int64(len(seen)) != total || total < 5 {
				t.Fatalf("%d upstream requests observed, %d counted", len(seen), total)
			}
			for i, h := range seen {
				if h != c.creds {
					t.Fatalf("upstream request %d carried other credentials (auth %t, network %q)", i, h.Authorization == c.creds.Authorization, h.NetworkID)
				}
			}
			own := idSet(c.own["transaction"], c.own["resource"], c.own["event"], c.own["invoice"], c.own["product"], c.own["order"])
			n := 0
			for _, p := range []string{"transactions.nodes.*.id", "transactions.nodes.*.booking.resource.id", "transactions.nodes.*.ticket.event.id", "transactions.nodes.*.invoice.id", "transactions.nodes.*.order.product.id", "orders.nodes.*.id"} {
				for id := range distinct(d, p) {
					n++
					if !own[id] {
						t.Errorf("%s: %s is not of this network", p, id)
					}
				}
			}
			if n < 20 {
				t.Fatalf("only %d ids checked", n)
			}
		})
	}

	t.Run("other network's ids are not found", func(t *testing.T) {
		r := run(t, env, other, `query($id: ID!) { resource(id: $id) { id } }`, map[string]any{"id": env.ID(t, "resource", 0)})
		expectErr(t, r, "NOT_FOUND")
		d := mustRun(t, env, other, `query($l: ID!) { transactions(locationId: $l) { nodes { id } } }`, map[string]any{"l": env.ID(t, "location", 0)})
		if n := len(list(d, "transactions.nodes")); n != 0 {
			t.Fatalf("the second network sees %d transactions of the first", n)
		}
	})
}

// TestConcurrentCallersOfDifferentNetworks runs 40 requests at once,
// alternating between the two networks: no response holds an id of the
// other network.
func TestConcurrentCallersOfDifferentNetworks(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	om := env.Manifest.OtherNetworks[0]
	first := idSet(env.Manifest.IDs["transaction"], env.Manifest.IDs["resource"], env.Manifest.IDs["event"], env.Manifest.IDs["invoice"], env.Manifest.IDs["product"], env.Manifest.IDs["order"], env.Manifest.IDs["location"])
	second := idSet(om.IDs["transaction"], om.IDs["resource"], om.IDs["event"], om.IDs["invoice"], om.IDs["product"], om.IDs["order"], om.IDs["location"])
	type caller struct {
		creds     testenv.Creds
		loc       string
		own, foes map[string]bool
	}
	callers := []caller{
		{env.Bearer(), env.ID(t, "location", 0), first, second},
		{env.Other(t), om.IDs["location"][0], second, first},
	}
	const n = 40
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		c := callers[i%2]
		wg.Go(func() {
			d, err := post(env, c.creds, nestedByNetwork, map[string]any{"l": c.loc})
			if err != nil {
				errs <- err
				return
			}
			seen := map[string]bool{}
			allIDs(d, seen)
			own := 0
			for id := range seen {
				if c.foes[id] {
					errs <- fmt.Errorf("caller %d (network %s) got %s of the other network", i, c.creds.NetworkID, id)
					return
				}
				if c.own[id] {
					own++
				}
			}
			if own < 20 {
				errs <- fmt.Errorf("caller %d saw only %d of its own ids", i, own)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// post runs a query from any goroutine; errors are returned, not reported.
func post(env *testenv.Env, c testenv.Creds, query string, vars map[string]any) (any, error) {
	r, err := env.GraphQL.Post(context.Background(), gqlclient.Request{Query: query, Variables: vars}, c.Header())
	if err != nil {
		return nil, err
	}
	if len(r.Errors) > 0 {
		return nil, fmt.Errorf("errors: %+v", r.Errors[0])
	}
	var data any
	if err := json.Unmarshal(r.Data, &data); err != nil {
		return nil, err
	}
	return data, nil
}

// TestServerCredentials: with server credentials configured, a request
// without Authorization is served with them; a request's own credentials
// still win.
func TestServerCredentials(t *testing.T) {
	// The demo data is deterministic: a first env tells the demo bearer
	// credentials, which the env under test then holds as its own.
	probe := testenv.New(t, testenv.Options{})
	server := &restclient.Credentials{Authorization: "Bearer " + probe.Manifest.BearerToken, NetworkID: probe.Manifest.NetworkID}
	log := &headerLog{}
	env := testenv.New(t, testenv.Options{OnUpstreamRequest: log.observe, ServerCreds: server})
	log.take()

	loc := env.ID(t, "location", 0)
	d := mustRun(t, env, testenv.Creds{}, nestedByNetwork, map[string]any{"l": loc})
	seen := log.take()
	if _, total := env.Calls(); total < 5 || int64(len(seen)) != total {
		t.Fatalf("%d upstream requests observed, %d counted", len(seen), total)
	}
	for i, h := range seen {
		if h.Authorization != server.Authorization || h.NetworkID != server.NetworkID {
			t.Fatalf("upstream request %d did not carry the server credentials", i)
		}
	}
	if len(list(d, "transactions.nodes")) == 0 {
		t.Fatal("no data with server credentials")
	}
	other := env.Other(t)
	d = mustRun(t, env, other, nestedByNetwork, map[string]any{"l": env.Manifest.OtherNetworks[0].IDs["location"][0]})
	seen = log.take()
	if _, total := env.Calls(); total < 5 || int64(len(seen)) != total {
		t.Fatalf("%d upstream requests observed, %d counted", len(seen), total)
	}
	for i, h := range seen {
		if h != other {
			t.Fatalf("upstream request %d did not carry the request's own credentials", i)
		}
	}
	if len(list(d, "transactions.nodes")) == 0 {
		t.Fatal("no data with the request's credentials")
	}
}
