package e2e

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestDeferClientsGetTheWholeResult: Apollo Client 4 with its
// Defer20220824Handler and with its GraphQL17Alpha9Handler (Accept asking
// for incrementalSpec=v0.2), and urql's fetchExchange over Server-Sent
// Events (its own Accept) and over multipart/mixed, and urql configured as
// docs/incremental-delivery.md's snippet says, get, from a query with
// two parts deferred, the result of the query without @defer; and
// Defer20220824Handler gets a connection's nodes under @stream whole. With
// Apollo Client's cache and each handler, the first result of a deferred
// query is "streaming", not "complete" (the first payload leaves the
// deferred fields out), and the last is the whole result.
func TestDeferClientsGetTheWholeResult(t *testing.T) {
	node := requireNode(t)
	base, st := startDemo(t, nil)
	m := st.Embedded.Manifest
	var got map[string]struct {
		Data    map[string]any
		Results int
		States  []string
		Error   any
	}
	out := runNode(t, node, "defer.mjs", base+"/graphql", "Bearer "+m.BearerToken, m.NetworkID, m.IDs["location"][0])
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("defer.mjs output: %v\n%s", err, out)
	}
	want := got["plain"]
	if want.Error != nil || want.Data["location"] == nil {
		t.Fatalf("without @defer: %+v", want)
	}
	for _, name := range []string{"defer20220824", "graphql17Alpha9", "urqlSSE", "urqlMultipart", "urqlDocumented"} {
		c := got[name]
		// Apollo Client adds __typename to the query; urql, without its
		// document cache, does not.
		if c.Error != nil || !reflect.DeepEqual(withoutTypename(c.Data), withoutTypename(want.Data)) {
			g, _ := json.Marshal(c.Data)
			w, _ := json.Marshal(want.Data)
			t.Errorf("%s: error %v\ngot  %.1500s\nwant %.1500s", name, c.Error, g, w)
		}
		t.Logf("%s: %d results", name, c.Results)
	}
	// Through the cache, the first result is streaming (the deferred
	// fields are missing, not null: nothing says they are empty), the last
	// complete and the query's without @defer.
	for name, plain := range map[string]string{
		"statesDefer20220824": "plain", "statesGraphql17Alpha9": "plain",
		"linksStatesDefer20220824": "linksPlain", "linksStatesGraphql17Alpha9": "linksPlain",
	} {
		c, want := got[name], got[plain]
		if c.Error != nil || len(c.States) < 2 || c.States[0] != "streaming" || c.States[len(c.States)-1] != "complete" {
			t.Errorf("%s: dataState of each result %v, error %v: want streaming first, complete last", name, c.States, c.Error)
		}
		if want.Error != nil || want.Data["location"] == nil || !reflect.DeepEqual(withoutTypename(c.Data), withoutTypename(want.Data)) {
			g, _ := json.Marshal(c.Data)
			w, _ := json.Marshal(want.Data)
			t.Errorf("%s: last result\ngot  %.1500s\nwant %.1500s", name, g, w)
		}
		t.Logf("%s: %v", name, c.States)
	}
	// @stream: Defer20220824Handler appends the later items.
	sp, sd := got["streamPlain"], got["streamDefer20220824"]
	if sp.Error != nil || sd.Error != nil || sp.Data["location"] == nil || !reflect.DeepEqual(sd.Data, sp.Data) {
		g, _ := json.Marshal(sd.Data)
		w, _ := json.Marshal(sp.Data)
		t.Errorf("@stream: errors %v %v\ngot  %.1500s\nwant %.1500s", sp.Error, sd.Error, g, w)
	}
	t.Logf("@stream through Defer20220824Handler: %d results", sd.Results)
}

// withoutTypename is v without its __typename members.
func withoutTypename(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k != "__typename" {
				out[k] = withoutTypename(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutTypename(e)
		}
		return out
	}
	return v
}
