package graph_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

// spellings returns c's credentials spelled eight ways the upstream takes
// for one client: scheme case, blanks around and inside, network id case.
func spellings(c testenv.Creds) []testenv.Creds {
	tok := strings.TrimPrefix(c.Authorization, "Bearer ")
	up := strings.ToUpper(c.NetworkID)
	return []testenv.Creds{
		{Authorization: "Bearer " + tok, NetworkID: c.NetworkID},
		{Authorization: "bearer " + tok, NetworkID: c.NetworkID},
		{Authorization: "BEARER " + tok, NetworkID: c.NetworkID},
		{Authorization: "Bearer   " + tok, NetworkID: up},
		{Authorization: "bEaReR " + tok, NetworkID: up},
		{Authorization: "BeaRer " + tok + " ", NetworkID: c.NetworkID},
		{Authorization: "bearer  " + tok + "\t", NetworkID: " " + up + " "},
		{Authorization: "BEARER \t " + tok, NetworkID: up},
	}
}

// TestOneTokenManySpellingsOneBudget: eight spellings of one Bearer token,
// each a request of five resources sent at once, are one client to the
// facade's rate budget and to the local service's rate limit: the service
// saw one client, never more than its 10 requests in a second, and refused
// none; every field has its answer (NOT_FOUND: the ids are unknown), one
// call each.
func TestOneTokenManySpellingsOneBudget(t *testing.T) {
	env := realLimit(t, true, func(o *graph.Options) { o.Limits.MaxRootFields, o.Limits.MaxAliases = 0, 0 })
	creds := spellings(env.Bearer())
	const perRequest = 5
	var wg sync.WaitGroup
	start := time.Now()
	results := make([]*testenv.Response, len(creds))
	for i, c := range creds {
		var q strings.Builder
		q.WriteString("{ ")
		for j := range perRequest {
			fmt.Fprintf(&q, `r%d: resource(id: "00000000-0000-4000-8000-%012d") { id } `, j, i*perRequest+j)
		}
		q.WriteString("}")
		wg.Go(func() { results[i] = env.Query(t, c, q.String(), nil) })
	}
	wg.Wait()
	took := time.Since(start)
	for i, r := range results {
		if len(r.Errors) != perRequest {
			t.Fatalf("spelling %d: %d errors, want %d NOT_FOUND: %+v", i, len(r.Errors), perRequest, r.Errors)
		}
		for _, e := range r.Errors {
			if e.Code() != "NOT_FOUND" {
				t.Errorf("spelling %d: %+v, want NOT_FOUND", i, e)
			}
		}
	}
	if _, total := env.Calls(); total != int64(len(creds)*perRequest) {
		t.Errorf("%d upstream calls, want %d (one per field)", total, len(creds)*perRequest)
	}
	clients := env.Hooks().MaxPerSecond()
	t.Logf("%d requests of %d fields in %v; the service's clients and their most requests in a second: %v", len(creds), perRequest, took.Round(time.Millisecond), clients)
	if len(clients) != 1 {
		t.Errorf("the local service counted %d clients, want 1: %v", len(clients), clients)
	}
	expectPaced(t, env)
}

// TestLocalServiceRateLimitsOneClientHowEverSpelled: the local service,
// called directly over HTTP, counts the eight spellings of one token as one
// client of its rate limit.
func TestLocalServiceRateLimitsOneClientHowEverSpelled(t *testing.T) {
	env := realLimit(t, true, nil)
	for _, c := range spellings(env.Bearer()) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, env.UpstreamURL+"/resources/v1/00000000-0000-4000-8000-000000000001", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = c.Header()
		resp, err := env.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("%q: %d, want 404 (or 429)", c.Authorization, resp.StatusCode)
		}
	}
	if clients := env.Hooks().MaxPerSecond(); len(clients) != 1 {
		t.Errorf("the local service counted %d clients, want 1: %v", len(clients), clients)
	}
}
