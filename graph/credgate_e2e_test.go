package graph_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver"
	"github.com/workspacenet/facade/stack"
)

// gateEnv is an Env whose authentication gate has refusedTTL and waits for
// a probe's answer however long it takes (so that no count below depends on
// the machine's speed), with 20 root fields allowed.
func gateEnv(t *testing.T, refusedTTL time.Duration) *testenv.Env {
	t.Helper()
	return testenv.New(t, testenv.Options{
		Config: func(c *stack.Config) {
			c.AuthGate.RefusedTTL = refusedTTL
			c.AuthGate.ProbeWait = 0
		},
		GraphOpts: func(o *graph.Options) { o.Limits.MaxRootFields, o.Limits.MaxAliases = 0, 0 },
	})
}

// expectAll marks t failed unless each of the fields of r has an error of
// code and message msg (safe on any goroutine).
func expectAll(t *testing.T, r *testenv.Response, fields int, code, msg string) {
	t.Helper()
	if len(r.Errors) != fields {
		t.Errorf("%d errors, want %d: %+v", len(r.Errors), fields, r.Errors)
		return
	}
	for _, e := range r.Errors {
		if e.Code() != code || e.Message != msg {
			t.Errorf("%s: %s %q, want %s %q", e.PathString(), e.Code(), e.Message, code, msg)
			return
		}
	}
}

const msgUnauthenticated = "the upstream service refused the credentials"

// TestGarbageCredentialsCostOneCall: a request of 20 fields with a token the
// upstream does not know makes one upstream call, and every field is
// UNAUTHENTICATED; the same token 50 more times within the refusal TTL, 25 of
// them at once, makes none; once the TTL has passed, one again.
func TestGarbageCredentialsCostOneCall(t *testing.T) {
	const fields = 20
	const ttl = 2 * time.Second
	env := gateEnv(t, ttl)
	bad := testenv.Creds{Authorization: "Bearer garbage-" + strings.Repeat("x", 40), NetworkID: env.Manifest.NetworkID}

	r := run(t, env, bad, manyResources(fields), nil)
	refusedAt := time.Now()
	expectAll(t, r, fields, "UNAUTHENTICATED", msgUnauthenticated)
	expectCalls(t, env, calls{restclient.OpGetResource: 1})

	var wg sync.WaitGroup
	for range 25 {
		wg.Go(func() {
			expectAll(t, env.Query(t, bad, manyResources(fields), nil), fields, "UNAUTHENTICATED", msgUnauthenticated)
		})
	}
	wg.Wait()
	for range 25 {
		expectAll(t, env.Query(t, bad, manyResources(fields), nil), fields, "UNAUTHENTICATED", msgUnauthenticated)
	}
	// The 50 requests may have outlasted the TTL on a slow machine: then,
	// and only then, one more call.
	want := int64(1)
	if time.Since(refusedAt) >= ttl {
		want = 2
	}
	if _, n := env.Calls(); n > want {
		t.Fatalf("%d upstream calls for 51 requests of one refused token within its TTL, want %d", n, want)
	}

	time.Sleep(max(0, ttl-time.Since(refusedAt))) // the refusal expires
	env.ResetCalls()
	expectAll(t, env.Query(t, bad, manyResources(fields), nil), fields, "UNAUTHENTICATED", msgUnauthenticated)
	expectCalls(t, env, calls{restclient.OpGetResource: 1})
}

// TestGarbageCredentialsAtOnce: 30 requests of 20 fields each, all at once,
// with one unknown token, and 30 with 30 other unknown tokens: one upstream
// call per distinct token.
func TestGarbageCredentialsAtOnce(t *testing.T) {
	const fields = 20
	env := gateEnv(t, restclient.DefaultAuthRefusedTTL)
	var wg sync.WaitGroup
	for i := range 60 {
		tok := "Bearer garbage-shared"
		if i%2 == 1 {
			tok = "Bearer garbage-" + string(rune('A'+i/2))
		}
		bad := testenv.Creds{Authorization: tok, NetworkID: env.Manifest.NetworkID}
		wg.Go(func() {
			expectAll(t, env.Query(t, bad, manyResources(fields), nil), fields, "UNAUTHENTICATED", msgUnauthenticated)
		})
	}
	wg.Wait()
	expectCalls(t, env, calls{restclient.OpGetResource: 1 + 30})
}

// TestValidCredentialsThroughTheGate: a valid token's first request of 20
// fields gets all its data with one call per field (its first call went
// alone, the others after it); so does its next one.
func TestValidCredentialsThroughTheGate(t *testing.T) {
	env := gateEnv(t, restclient.DefaultAuthRefusedTTL)
	ids := env.Manifest.IDs["resource"]
	if len(ids) < 4 {
		t.Fatalf("demo data has %d resources", len(ids))
	}
	var q strings.Builder
	q.WriteString("{")
	for i := range 20 {
		// Four resources, five fields each asking one of them: 20 fields,
		// 4 distinct GETs (a request loads each id once).
		q.WriteString(" r" + string(rune('a'+i)) + `: resource(id: "` + ids[i%4] + `") { id }`)
	}
	q.WriteString(" }")
	for round := range 2 {
		d := mustRun(t, env, env.Bearer(), q.String(), nil)
		for i := range 20 {
			if got := str(d, "r"+string(rune('a'+i))+".id"); got != ids[i%4] {
				t.Fatalf("round %d, field %d: id %q, want %q", round, i, got, ids[i%4])
			}
		}
		expectCalls(t, env, calls{restclient.OpGetResource: 4})
	}
}

// TestRevokedToken: a token in use (trusted) that the upstream revokes:
// the next request's calls get 401 (at most one per field: they were on
// their way), every field UNAUTHENTICATED; from then on its requests make
// no call within the refusal TTL. Another client's token is not affected.
func TestRevokedToken(t *testing.T) {
	const fields = 20
	env := gateEnv(t, restclient.DefaultAuthRefusedTTL)
	m := env.Manifest
	tok, err := env.Upstream.IssueToken(t.Context(), m.NetworkID, m.IDs["membership"][0], restserver.AllScopes(), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	c := testenv.Creds{Authorization: "Bearer " + tok, NetworkID: m.NetworkID}
	mustRun(t, env, c, `{ resource(id: "`+env.ID(t, "resource", 0)+`") { id } }`, nil)
	expectCalls(t, env, calls{restclient.OpGetResource: 1})

	if err := env.Upstream.RevokeToken(t.Context(), tok); err != nil {
		t.Fatal(err)
	}
	r := run(t, env, c, manyResources(fields), nil)
	expectAll(t, r, fields, "UNAUTHENTICATED", msgUnauthenticated)
	if _, n := env.Calls(); n < 1 || n > fields {
		t.Fatalf("%d upstream calls, want 1..%d", n, fields)
	}
	for range 10 {
		expectAll(t, run(t, env, c, manyResources(fields), nil), fields, "UNAUTHENTICATED", msgUnauthenticated)
		env.ExpectNoCalls(t)
	}
	mustRun(t, env, env.Bearer(), `{ resource(id: "`+env.ID(t, "resource", 0)+`") { id } }`, nil)
	expectCalls(t, env, calls{restclient.OpGetResource: 1})
}

// TestTokenOfAnotherNetwork: a valid token sent with another network's id is
// refused by the upstream with 403 on its first call; the request's other
// fields wait for that answer and fail FORBIDDEN without a call.
func TestTokenOfAnotherNetwork(t *testing.T) {
	const fields = 20
	env := gateEnv(t, restclient.DefaultAuthRefusedTTL)
	wrong := testenv.Creds{Authorization: env.Bearer().Authorization, NetworkID: env.Manifest.OtherNetworks[0].NetworkID}
	r := run(t, env, wrong, manyResources(fields), nil)
	expectAll(t, r, fields, "FORBIDDEN", "the credentials do not belong to the network named by the service-network-id header")
	expectCalls(t, env, calls{restclient.OpGetResource: 1})
}
