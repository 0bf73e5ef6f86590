package graph_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// The cursor attacks: a tenant reading what a cursor holds (the upstream
// page token, whose position counted other tenants' rows), altering or
// forging one, or replaying one on a facade with another secret.

const cursorPage = `query($l: ID!, $first: Int, $after: String) {
  transactions(locationId: $l, first: $first, after: $after) {
    edges { cursor node { id } }
    pageInfo { hasNextPage endCursor }
  }
}`

// jsonKey is a JSON object key, as in {"t":"..."}: random bytes practically
// never hold one.
var jsonKey = regexp.MustCompile(`"[A-Za-z_]{1,16}"\s*:`)

func newSecret() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}

// secretEnv is a testenv whose facade is keyed by secret.
func secretEnv(t *testing.T, secret []byte) *testenv.Env {
	return testenv.New(t, testenv.Options{Config: func(c *stack.Config) { c.Secret = secret }})
}

// replicaFacade starts a second facade, keyed by secret, in front of env's
// upstream, as another replica of a deployment would be.
func replicaFacade(t *testing.T, env *testenv.Env, secret []byte) *gqlclient.Client {
	t.Helper()
	cfg := stack.DefaultConfig()
	cfg.Upstream, cfg.Secret = env.UpstreamURL, secret
	cfg.Budget, cfg.CacheTTL, cfg.UpstreamTrace = budget.Config{}, "", "off"
	_, base := testenv.Serve(t, cfg, nil)
	return &gqlclient.Client{URL: base + "/graphql", HTTP: &http.Client{}}
}

func postOn(t *testing.T, c *gqlclient.Client, creds testenv.Creds, query string, vars map[string]any) *testenv.Response {
	t.Helper()
	r, err := c.Post(t.Context(), gqlclient.Request{Query: query, Variables: vars}, creds.Header())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func expectAfterRefused(t *testing.T, r *testenv.Response, what string) {
	t.Helper()
	if len(r.Errors) != 1 || r.Errors[0].Code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "after" {
		t.Fatalf("%s: want BAD_USER_INPUT on after, got %+v (data %s)", what, r.Errors, r.Data)
	}
}

func TestCursorsRevealNothing(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	creds := env.Bearer()
	loc := env.ID(t, "location", 0)
	d := mustRun(t, env, creds, cursorPage, map[string]any{"l": loc, "first": 3})
	cursors := []string{str(d, "transactions.edges.0.cursor"), str(d, "transactions.edges.2.cursor")}
	for _, c := range cursors {
		// Whatever base64 a client finds in it (whole, or parts split at
		// '.'), decoded once or twice, shows no JSON, no id and no token.
		layers := []string{c}
		for _, part := range strings.Split(c, ".") {
			for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.URLEncoding, base64.StdEncoding, base64.RawStdEncoding} {
				b, err := enc.DecodeString(part)
				if err != nil {
					continue
				}
				layers = append(layers, string(b))
				for _, w := range regexp.MustCompile(`[A-Za-z0-9_-]{8,}`).FindAllString(string(b), -1) {
					if inner, err := base64.RawURLEncoding.DecodeString(w); err == nil {
						layers = append(layers, string(inner))
					}
				}
			}
		}
		for _, l := range layers {
			if json.Valid([]byte(l)) || jsonKey.MatchString(l) {
				t.Fatalf("cursor %s decodes to readable JSON: %q", c, l)
			}
			if uuidRE.MatchString(l) || strings.Contains(l, loc) || strings.Contains(l, creds.NetworkID) {
				t.Fatalf("cursor %s reveals an id: %q", c, l)
			}
		}
	}
	// Two cursors of the same position are unrelated bytes (random nonce).
	again := mustRun(t, env, creds, cursorPage, map[string]any{"l": loc, "first": 3})
	if str(again, "transactions.edges.0.cursor") == cursors[0] {
		t.Error("the same position gave the same cursor twice")
	}
}

// oldChecksumCursor builds a cursor the way the source tells anyone to: a
// JSON position and a checksum under the constant key of the source.
func oldChecksumCursor(scope string, limit, index int) string {
	sh := sha256.Sum256([]byte(scope))
	b, _ := json.Marshal(map[string]any{"s": base64.RawURLEncoding.EncodeToString(sh[:6]), "l": limit, "i": index})
	sum := sha256.Sum256(append([]byte("wsn-facade-cursor-v1"), b...))
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(sum[:6])
}

func TestCursorsCannotBeForgedOrAltered(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	creds := env.Bearer()
	loc := env.ID(t, "location", 0)

	// A forged cursor skipping 50 items into the list is refused unsent.
	forged := oldChecksumCursor(strings.Join([]string{"transactions", loc, "", "", "", ""}, "\x1f"), 100, 50)
	r := run(t, env, creds, cursorPage, map[string]any{"l": loc, "first": 2, "after": forged})
	expectAfterRefused(t, r, "forged cursor")
	env.ExpectNoCalls(t)

	d := mustRun(t, env, creds, cursorPage, map[string]any{"l": loc, "first": 3})
	c := str(d, "transactions.edges.1.cursor")
	if r := run(t, env, creds, cursorPage, map[string]any{"l": loc, "first": 2, "after": c}); len(r.Errors) != 0 {
		t.Fatalf("the genuine cursor is refused: %+v", r.Errors)
	}
	// Every character of the cursor, changed, makes it BAD_USER_INPUT with
	// no upstream call.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range len(c) {
		b := []byte(c)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		r := run(t, env, creds, cursorPage, map[string]any{"l": loc, "first": 2, "after": string(b)})
		expectAfterRefused(t, r, fmt.Sprintf("character %d changed", i))
		env.ExpectNoCalls(t)
	}
	// Every byte it encodes, with a bit flipped, too.
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		t.Fatalf("cursor %q is not base64url: %v", c, err)
	}
	for i := range raw {
		b := bytes.Clone(raw)
		b[i] ^= 1 << (i % 8)
		r := run(t, env, creds, cursorPage, map[string]any{"l": loc, "first": 2, "after": base64.RawURLEncoding.EncodeToString(b)})
		expectAfterRefused(t, r, fmt.Sprintf("bit %d of byte %d flipped", i%8, i))
		env.ExpectNoCalls(t)
	}
	// Truncated or extended, likewise.
	for _, bad := range []string{c[:len(c)-1], c + "A", c[:len(c)/2], strings.TrimRight(alphabet, "_")} {
		r := run(t, env, creds, cursorPage, map[string]any{"l": loc, "first": 2, "after": bad})
		expectAfterRefused(t, r, "truncated or extended cursor")
		env.ExpectNoCalls(t)
	}
}

func TestCursorsAreKeyedByTheServerSecret(t *testing.T) {
	secret := newSecret()
	env := secretEnv(t, secret)
	creds := env.Bearer()
	loc := env.ID(t, "location", 0)
	d := mustRun(t, env, creds, cursorPage, map[string]any{"l": loc, "first": 3})
	c := str(d, "transactions.edges.1.cursor")
	want := mustRun(t, env, creds, cursorPage, map[string]any{"l": loc, "first": 4, "after": c})
	_, wantCalls := env.Calls()

	// A facade with another secret refuses it, without calling upstream.
	other := replicaFacade(t, env, newSecret())
	env.ResetCalls()
	expectAfterRefused(t, postOn(t, other, creds, cursorPage, map[string]any{"l": loc, "first": 4, "after": c}), "cursor of another secret")
	env.ExpectNoCalls(t)

	// A replica sharing the secret resumes it exactly as its maker would.
	replica := replicaFacade(t, env, secret)
	r := postOn(t, replica, creds, cursorPage, map[string]any{"l": loc, "first": 4, "after": c})
	var got any
	testenv.MustData(t, r, &got)
	if g, w := ids(got, "transactions.edges.*.node"), ids(want, "transactions.edges.*.node"); !equalStrings(g, w) || len(g) != 4 {
		t.Fatalf("replica resumed at %v, want %v", g, w)
	}
	if _, n := env.Calls(); n != wantCalls {
		t.Errorf("the replica resumed with %d upstream calls, its peer with %d", n, wantCalls)
	}
	// And a cursor of the replica works on the first facade.
	rc := str(got, "transactions.pageInfo.endCursor")
	if r := run(t, env, creds, cursorPage, map[string]any{"l": loc, "first": 1, "after": rc}); len(r.Errors) != 0 {
		t.Fatalf("the replica's cursor is refused by its peer: %+v", r.Errors)
	}
}
