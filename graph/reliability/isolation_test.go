package reliability_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/base/accesslog"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restserver"
)

// idsOf returns every id of every kind the manifest lists.
func idsOf(m *restserver.DemoManifest) map[string]bool {
	out := map[string]bool{m.NetworkID: true}
	for _, ids := range m.IDs {
		for _, id := range ids {
			out[id] = true
		}
	}
	return out
}

// collectStrings adds every string value of decoded JSON to seen.
func collectStrings(v any, seen map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			collectStrings(e, seen)
		}
	case []any:
		for _, e := range x {
			collectStrings(e, seen)
		}
	case string:
		seen[x] = true
	}
}

// TestIsolationUnderConcurrentLoad: 12 goroutines, half for the demo network
// (Bearer and Basic), the rest for the second network, run a mix of nested
// queries, paged lists, foreign ids and a write, 10 times each. No answer
// holds any id of the other network (every kind in its manifest), and the
// JSON log of the run holds no credential.
func TestIsolationUnderConcurrentLoad(t *testing.T) {
	noLeaks(t)
	var logs testenv.LogBuffer
	env := testenv.New(t, testenv.Options{Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	om := env.Manifest.OtherNetworks[0]
	mine, theirs := idsOf(env.Manifest), idsOf(&om)
	for id := range mine {
		if theirs[id] {
			t.Fatalf("the manifests share id %s", id)
		}
	}
	type caller struct {
		name         string
		creds        testenv.Creds
		m            *restserver.DemoManifest
		own, foreign map[string]bool
	}
	callers := []caller{
		{"demo bearer", env.Bearer(), env.Manifest, mine, theirs},
		{"demo basic", env.Basic(), env.Manifest, mine, theirs},
		{"other bearer", env.Other(t), &om, theirs, mine},
	}
	queries := func(m *restserver.DemoManifest, foreign *restserver.DemoManifest, i int) (string, map[string]any) {
		loc := m.IDs["location"][i%len(m.IDs["location"])]
		switch i % 6 {
		case 0:
			return `query($l: ID!) { location(id: $l) { products { id options { id } }
				transactions(first: 30) { nodes { id invoice { id } booking { resource { id parent { id } } } order { product { id } } ticket { event { id } } } }
				creditNotes(first: 5) { nodes { id invoice { id items { id } } } } } }`, map[string]any{"l": loc}
		case 1:
			return `query($inv: ID!) { invoice(id: $inv) { id items { id booking { resource { id } } order { product { id } } }
				creditNotes(first: 5) { nodes { id lines { id invoiceItem { id } } } } } }`, map[string]any{"inv": m.IDs["invoice"][i%len(m.IDs["invoice"])]}
		case 2:
			return `query($l: ID!) { orders(locationId: $l, first: 40) { nodes { id product { id } option { id } } pageInfo { endCursor } } }`, map[string]any{"l": loc}
		case 3:
			return `query($p: ID!) { postComments(postId: $p) { id parentComment { id } replies { id } } }`, map[string]any{"p": m.IDs["post"][i%len(m.IDs["post"])]}
		case 4:
			// The other network's ids, asked for directly: NOT_FOUND, never data.
			return `query($r: ID!, $inv: ID!, $l: ID!) { resource(id: $r) { id } invoice(id: $inv) { id } transactions(locationId: $l) { nodes { id } } }`,
				map[string]any{"r": foreign.IDs["resource"][0], "inv": foreign.IDs["invoice"][0], "l": foreign.IDs["location"][0]}
		default:
			return `mutation($in: CreatePostInput!) { createPost(input: $in) { post { id location { id } } } }`,
				map[string]any{"in": map[string]any{"locationRef": loc, "text": fmt.Sprintf("isolation %d", i)}}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := range 12 {
		c := callers[g%len(callers)]
		foreign := &om
		if c.m == &om {
			foreign = env.Manifest
		}
		wg.Go(func() {
			for i := range 10 {
				k := g + i
				if c.name == "demo basic" && k%6 == 5 {
					k++ // createPost is Bearer only
				}
				q, vars := queries(c.m, foreign, k)
				r, err := post(env, 20*time.Second, c.creds, q, vars)
				if err != nil {
					errs <- err
					return
				}
				seen := map[string]bool{}
				var data any
				if err := json.Unmarshal(r.Data, &data); err != nil {
					errs <- err
					return
				}
				collectStrings(data, seen)
				own := 0
				for s := range seen {
					if c.own[s] {
						own++
					}
					if c.foreign[s] {
						errs <- fmt.Errorf("%s got %s, an id of the other network (query %d): %.300s", c.name, s, k%6, r.Raw)
						return
					}
				}
				if k%6 < 4 && own == 0 {
					errs <- fmt.Errorf("%s query %d: no id of its own network: %.300s", c.name, k%6, r.Raw)
				}
				for _, e := range r.Errors {
					// Only the foreign ids asked for directly may fail, as
					// NOT_FOUND (a foreign list filter gives an empty list).
					if k%6 != 4 || e.Code() != "NOT_FOUND" || e.PathString() != "resource" && e.PathString() != "invoice" {
						errs <- fmt.Errorf("%s query %d: %s at %s: %s", c.name, k%6, e.Code(), e.PathString(), e.Message)
					}
				}
				if k%6 == 4 && len(r.Errors) != 2 {
					errs <- fmt.Errorf("%s: foreign ids: %d errors, want 2 NOT_FOUND: %.300s", c.name, len(r.Errors), r.Raw)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	out := logs.String()
	if !strings.Contains(out, `"msg":"`+accesslog.Message+`"`) {
		t.Fatal("the run logged no request line")
	}
	basicValue := strings.TrimPrefix(env.Manifest.BasicAuth, "Basic ")
	decoded, _ := base64.StdEncoding.DecodeString(basicValue)
	secret := strings.SplitN(string(decoded), ":", 2)
	for _, s := range []string{env.Manifest.BearerToken, om.BearerToken, basicValue, "Bearer ", "Basic ", secret[len(secret)-1]} {
		if strings.Contains(out, s) {
			t.Errorf("the log holds %q", s)
		}
	}
}
