package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// routerSecret is the facade's ROUTER_SECRET in the federation test: both
// routers send it to the facade, as docs/federation.md configures them.
const routerSecret = "e2e-router-secret-0123456789abcdef0123456789"

// fedResult is one scenario of federation.mjs: the router's answer, the
// local REST service's counters over it (GET /_stats) and the requests the
// reviews subgraph received.
type fedResult struct {
	Status int
	Data   map[string]any
	Errors []struct {
		Message    string
		Path       []any
		Extensions map[string]any
	}
	Parts int
	Raw   string // an incremental response as received
	Stats struct {
		Routes      map[string]int64
		Total       int64
		PerSecond   map[string]int
		RateLimited int64
	}
	ReviewsRequests int
}

func (r fedResult) codes() []string {
	var out []string
	for _, e := range r.Errors {
		c, _ := e.Extensions["code"].(string)
		out = append(out, c)
	}
	return out
}

// TestFederationThroughRealRouters composes the facade's subgraph schema
// (schema.graphqls, which `_service { sdl }` returns: graph's
// TestServiceSDLIsTheSchemaFile) with a second subgraph of reviews, with
// @theguild/federation-composition and @apollo/composition (no error, no
// hint), serves the supergraph with Hive Gateway and with @apollo/gateway,
// and through each router: a query that starts in the reviews subgraph and
// enters the facade through `_entities` (12 reviews of 4 resources: 4 REST
// calls); one that starts in the facade and crosses to the reviews subgraph;
// a mutation; not found; forbidden for one caller and allowed for another
// (each caller's credentials reach the upstream); `_entities` without caller
// credentials (UNAUTHENTICATED, unsent, although the facade has
// server-to-server credentials); the budget (30 distinct resources in one
// batch under the local service's 10 requests/s: no 429, at most 10 calls
// in any second, all answered); and @defer through Hive Gateway
// (@apollo/gateway has no @defer). The facade runs as `go run .` does, with
// ROUTER_SECRET set (both routers send it) and the response cache off so
// each scenario's calls are its own.
func TestFederationThroughRealRouters(t *testing.T) {
	node := requireNode(t)
	_, probe := startDemo(t, nil)
	m := probe.Embedded.Manifest
	server := &restclient.Credentials{Authorization: "Bearer " + m.BearerToken, NetworkID: m.NetworkID}
	base, st := startDemo(t, func(c *stack.Config) {
		c.CacheTTL = ""
		c.Graph.RouterSecret = routerSecret
		c.Graph.ServerCredentials = server
	})
	m = st.Embedded.Manifest
	res := m.IDs["resource"]
	booking := func(day int) map[string]any {
		return map[string]any{"resourceRef": res[0], "title": "federation e2e",
			"startDate": fmt.Sprintf("2031-03-%02dT09:00:00Z", day), "endDate": fmt.Sprintf("2031-03-%02dT10:00:00Z", day)}
	}
	config, _ := json.Marshal(map[string]any{
		"facadeURL": base + "/graphql", "statsURL": st.UpstreamURL + "/_stats",
		"routerSecretHeader": graph.DefaultRouterSecretHeader, "routerSecret": routerSecret,
		"bearer": "Bearer " + m.BearerToken, "readonly": "Bearer " + m.ReadonlyBearerToken, "networkId": m.NetworkID,
		"resources": res[:30], "products": m.IDs["product"][:2], "unknownResource": "00000000-0000-4000-8000-000000000000",
		"location": m.IDs["location"][0], "bookings": map[string]any{"hive": booking(3), "apollo": booking(4)},
	})
	var out struct {
		Composition struct {
			Guild  struct{ Errors []string }
			Apollo struct{ Errors, Hints []string }
		}
		Routers map[string]map[string]fedResult
	}
	runNodeJSON(t, node, "federation.mjs", &out, string(config))

	c := out.Composition
	if len(c.Guild.Errors) > 0 || len(c.Apollo.Errors) > 0 {
		t.Fatalf("the subgraph schema does not compose:\n@theguild/federation-composition: %q\n@apollo/composition: %q", c.Guild.Errors, c.Apollo.Errors)
	}
	// One hint is expected: @live stays out of the supergraph (a router
	// serves no live query; docs/federation.md). No other is accepted.
	hints := slices.DeleteFunc(slices.Clone(c.Apollo.Hints), func(h string) bool {
		return strings.HasPrefix(h, `INCONSISTENT_EXECUTABLE_DIRECTIVE_PRESENCE: Executable directive "@live" will not be part of the supergraph`)
	})
	if len(hints) > 0 {
		t.Errorf("@apollo/composition hints (none is accepted):\n%s", strings.Join(hints, "\n"))
	}

	const getResource, getProduct, createBooking = "GET /resources/v1/{id}", "GET /shop/products/v1/{productId}", "POST /resources/bookings/v1"
	for _, router := range []string{"hive", "apollo"} {
		t.Run(router, func(t *testing.T) {
			rs := out.Routers[router]
			if rs == nil {
				t.Fatalf("no results for %s", router)
			}
			calls := func(name string, r fedResult, want map[string]int64) {
				t.Helper()
				var total int64
				for _, n := range want {
					total += n
				}
				if r.Stats.Total != total || !reflect.DeepEqual(nonZero(r.Stats.Routes), want) {
					t.Errorf("%s: REST calls %v (total %d), want %v", name, r.Stats.Routes, r.Stats.Total, want)
				}
				if r.Stats.RateLimited != 0 {
					t.Errorf("%s: the local service answered %d requests 429", name, r.Stats.RateLimited)
				}
			}
			clean := func(name string, r fedResult) {
				t.Helper()
				if len(r.Errors) > 0 || r.Data == nil {
					t.Errorf("%s: errors %+v, data %v", name, r.Errors, r.Data)
				}
			}

			// Into the facade: 12 reviews of 4 resources, 4 calls.
			r := rs["intoFacade"]
			clean("intoFacade", r)
			reviews, _ := r.Data["reviews"].([]any)
			for i, x := range reviews {
				rsc, _ := x.(map[string]any)["resource"].(map[string]any)
				if rsc == nil || rsc["id"] != res[i%4] || rsc["title"] == nil || rsc["title"] == "" {
					t.Errorf("intoFacade: review %d's resource %v, want %s with its title", i, rsc, res[i%4])
				}
			}
			if len(reviews) != 12 {
				t.Errorf("intoFacade: %d reviews, want 12", len(reviews))
			}
			calls("intoFacade", r, map[string]int64{getResource: 4})

			// From the facade: 1 call, and the reviews subgraph asked.
			r = rs["fromFacade"]
			clean("fromFacade", r)
			rsc, _ := r.Data["resource"].(map[string]any)
			loc, _ := rsc["location"].(map[string]any)
			if rsc["id"] != res[0] || rsc["title"] == nil || len(asSlice(rsc["reviews"])) != 2 || rsc["averageStars"] == nil || loc["rating"] != 4.5 {
				t.Errorf("fromFacade: %v", rsc)
			}
			if r.ReviewsRequests == 0 {
				t.Error("fromFacade: the reviews subgraph was not asked")
			}
			calls("fromFacade", r, map[string]int64{getResource: 1})

			// A mutation: the booking, its resource, its reviews.
			r = rs["mutation"]
			clean("mutation", r)
			b, _ := r.Data["createBooking"].(map[string]any)["booking"].(map[string]any)
			if b["id"] == nil || b["resourceRef"] != res[0] || b["resource"].(map[string]any)["averageStars"] == nil {
				t.Errorf("mutation: %v", r.Data)
			}
			calls("mutation", r, map[string]int64{createBooking: 1, getResource: 1})

			// Not found: the review answered, NOT_FOUND for its resource,
			// whose fields from the facade are null (the router keeps the id
			// it had).
			r = rs["notFound"]
			rv, _ := r.Data["review"].(map[string]any)
			if rv == nil || rv["id"] == nil || fromFacade(rv["resource"]) || !contains(r.codes(), errcode.NotFound) {
				t.Errorf("notFound: data %v, errors %+v", r.Data, r.Errors)
			}
			calls("notFound", r, map[string]int64{getResource: 1})

			// Forbidden for the read-only caller, allowed for the other:
			// the same 2 products, each caller's own calls.
			f, a := rs["forbidden"], rs["allowed"]
			if !contains(f.codes(), errcode.Forbidden) {
				t.Errorf("forbidden: errors %+v", f.Errors)
			}
			for _, x := range asSlice(f.Data["productReviews"]) {
				if x != nil && fromFacade(x.(map[string]any)["product"]) {
					t.Errorf("forbidden: a product answered: %v", x)
				}
			}
			calls("forbidden", f, map[string]int64{getProduct: 2})
			clean("allowed", a)
			for _, x := range asSlice(a.Data["productReviews"]) {
				if p, _ := x.(map[string]any)["product"].(map[string]any); p == nil || p["title"] == nil {
					t.Errorf("allowed: %v", x)
				}
			}
			calls("allowed", a, map[string]int64{getProduct: 2})
			if len(f.Stats.PerSecond) != 1 || len(a.Stats.PerSecond) != 1 || reflect.DeepEqual(keys(f.Stats.PerSecond), keys(a.Stats.PerSecond)) {
				t.Errorf("each caller's credentials upstream: read-only %v, all scopes %v", f.Stats.PerSecond, a.Stats.PerSecond)
			}

			// No caller credentials: UNAUTHENTICATED, nothing sent.
			r = rs["noCredentials"]
			if !contains(r.codes(), errcode.Unauthenticated) {
				t.Errorf("noCredentials: errors %+v", r.Errors)
			}
			for _, x := range asSlice(r.Data["reviews"]) {
				if x != nil && fromFacade(x.(map[string]any)["resource"]) {
					t.Errorf("noCredentials: a resource answered: %v", x)
				}
			}
			calls("noCredentials", r, map[string]int64{})

			// The budget: 30 distinct resources, 30 calls, none refused,
			// at most 10 in any one second, all answered.
			r = rs["budget"]
			clean("budget", r)
			for i, x := range asSlice(r.Data["reviews"]) {
				if p, _ := x.(map[string]any)["resource"].(map[string]any); p == nil || p["id"] != res[i] || p["title"] == nil {
					t.Errorf("budget: review %d: %v", i, x)
				}
			}
			calls("budget", r, map[string]int64{getResource: 30})
			for client, n := range r.Stats.PerSecond {
				if n > 10 {
					t.Errorf("budget: client %s sent %d requests in one second", client, n)
				}
			}

			if router != "hive" {
				return
			}
			// @defer through Hive Gateway: the same data in several parts,
			// the same 2 calls.
			p, d := rs["deferPlain"], rs["defer"]
			clean("deferPlain", p)
			clean("defer", d)
			if d.Parts < 2 || !reflect.DeepEqual(d.Data, p.Data) {
				t.Errorf("@defer: %d parts, data %v; without @defer %v\n%s", d.Parts, d.Data, p.Data, d.Raw)
			}
			calls("defer", d, map[string]int64{getResource: 2})
		})
	}
}

// fromFacade reports whether entity v (a resource or a product) holds a
// title, which only the facade answers.
func fromFacade(v any) bool {
	m, _ := v.(map[string]any)
	return m != nil && m["title"] != nil
}

func nonZero(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
