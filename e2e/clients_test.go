package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/workspacenet/facade/graph/errcode"
)

// clientCase is one case of clients.mjs.
type clientCase struct {
	Method string          `json:"method"`
	Data   json.RawMessage `json:"data"`
	Error  *struct {
		Name, Message, Code string
	} `json:"error"`
}

// TestClientsGETAsTheReadmeSetsThemUp: the GET set-ups that
// docs/graphql-over-http.md shows, of Apollo Client 4 (useGETForQueries, nothing else; persisted queries by GET) and
// graphql-request 7 (method GET and Apollo-Require-Preflight) fetch data by
// GET through CSRF prevention; without the header graphql-request gets the refusal as a
// GraphQL error with its code, and Apollo Client surfaces a 400 answer as
// the server's GraphQL errors (not "Received status code 400"): the answer
// is in the application/graphql-response+json it asked for.
func TestClientsGETAsTheReadmeSetsThemUp(t *testing.T) {
	node := requireNode(t)
	base, st := startDemo(t, nil)
	m := st.Embedded.Manifest
	res := m.IDs["resource"][0]
	hooks := st.Embedded.Server.Hooks()
	hooks.Reset()
	out := runNode(t, node, "clients.mjs", base+"/graphql", "Bearer "+m.BearerToken, m.NetworkID, res)
	var got map[string]clientCase
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("clients.mjs output: %v\n%s", err, out)
	}
	for _, name := range []string{"apolloGET", "graphqlRequestGET"} {
		c := got[name]
		if c.Method != "GET" || c.Error != nil || !strings.Contains(string(c.Data), res) {
			t.Errorf("%s: %+v %s", name, c, c.Data)
		}
	}
	// Automatic persisted queries by GET: the miss (PERSISTED_QUERY_NOT_FOUND,
	// a 400 in application/graphql-response+json) is understood by Apollo's
	// link, which retries with the query (a POST); the next run is a GET hit.
	if c := got["apolloPersisted"]; c.Method != "GET,POST,GET" || c.Error != nil || strings.Count(string(c.Data), res) != 2 {
		t.Errorf("apolloPersisted: %+v %s", c, c.Data)
	}
	for name, want := range map[string]struct{ errName, code string }{
		"apolloInvalid":                  {"CombinedGraphQLErrors", errcode.ValidationFailed},
		"graphqlRequestGETWithoutHeader": {"", errcode.CSRFPrevented},
	} {
		c := got[name]
		if c.Method != "GET" || c.Error == nil || c.Error.Code != want.code || want.errName != "" && c.Error.Name != want.errName || c.Data != nil {
			t.Errorf("%s: %+v, want a %s error with code %s", name, c, want.errName, want.code)
		}
	}
	// Four fetches of one resource (all but the first may come from the
	// response cache); the refused, invalid and not-found requests cost
	// nothing.
	counts, total := hooks.Counts(), hooks.Total()
	if n := counts["GET /resources/v1/{id}"]; n < 1 || n > 4 || total != n {
		t.Errorf("upstream calls %v", counts)
	}
}
