package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/restserver"
)

// A paging walk, updates and deliberately bad inputs, beside the documented
// queries (internal/testsupport/queries).
const (
	qPage = `query Walk($l: ID!, $after: String) {
  transactions(locationId: $l, first: 40, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } } }`
	qComments    = `query Comments($p: ID!) { postComments(postId: $p) { id text parentComment { id } replies { id } } }`
	qUpdateVisit = `mutation UV($id: ID!, $in: UpdateVisitInput!) { updateVisit(id: $id, input: $in) { visit { id date } } }`
	qUpdatePost  = `mutation UP($id: ID!, $in: UpdatePostInput!) { updatePost(id: $id, input: $in) { post { id text } } }`
	qBadID       = `{ resource(id: "not-a-uuid") { id } }`
	qUnknownID   = `{ resource(id: "00000000-0000-4000-8000-000000000000") { id } }`
	qBadFirst    = `query($l: ID!) { transactions(locationId: $l, first: 0) { nodes { id } } }`
)

// faultCodeSet are the codes injected faults cause; any query may get them.
var faultCodeSet = map[string]bool{errcode.UpstreamUnavailable: true, errcode.RateLimited: true}

// mix picks requests from the demo data.
type mix struct {
	locations, resources, invoices, posts, visits []string
	creds                                         []http.Header // the demo's Bearer and Basic credentials
}

func newMix(m *restserver.DemoManifest) *mix {
	first := func(ids []string, n int) []string { return ids[:min(n, len(ids))] }
	x := &mix{
		locations: first(m.IDs["location"], 3),
		resources: m.IDs["resource"],
		invoices:  first(m.IDs["invoice"], 20),
		posts:     m.IDs["post"],
		visits:    m.IDs["visit"],
		creds:     []http.Header{gqlclient.Credentials("Bearer "+m.BearerToken, m.NetworkID), gqlclient.Credentials(m.BasicAuth, m.NetworkID)},
	}
	return x
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// one runs one scenario and records its outcome in st.
func (x *mix) one(ctx context.Context, gc *gqlclient.Client, rng *rand.Rand, st *stats) {
	c := pick(rng, x.creds)
	type req struct {
		name  string
		query string
		vars  map[string]any
		want  string // the code this request must get ("" = none)
	}
	var r req
	switch n := rng.IntN(100); {
	case n < 20:
		r = req{"first", queries.First, map[string]any{"id": pick(rng, x.resources)}, ""}
	case n < 35:
		r = req{"dashboard", queries.Dashboard, map[string]any{"locationId": pick(rng, x.locations)}, ""}
	case n < 50:
		r = req{"invoice", queries.Invoice, map[string]any{"id": pick(rng, x.invoices)}, ""}
	case n < 62:
		x.walk(ctx, gc, c, pick(rng, x.locations), st)
		return
	case n < 72:
		r = req{"comments", qComments, map[string]any{"p": pick(rng, x.posts)}, ""}
	case n < 78:
		date := time.Date(2026, 7, 1+rng.IntN(28), 9, 0, 0, 0, time.UTC).Format(time.RFC3339)
		r = req{"updateVisit", qUpdateVisit, map[string]any{"id": pick(rng, x.visits), "in": map[string]any{"date": date, "comment": "soak"}}, ""}
	case n < 84:
		r = req{"updatePost", qUpdatePost, map[string]any{"id": pick(rng, x.posts), "in": map[string]any{"text": fmt.Sprintf("soak %d", rng.IntN(1000))}}, ""}
	case n < 90:
		r = req{"badID", qBadID, nil, errcode.BadUserInput}
	case n < 95:
		r = req{"unknownID", qUnknownID, nil, errcode.NotFound}
	default:
		r = req{"badFirst", qBadFirst, map[string]any{"l": pick(rng, x.locations)}, errcode.BadUserInput}
	}
	status, errs, _, err := send(ctx, gc, c, r.query, r.vars)
	x.record(ctx, st, r.name, r.want, status, errs, err)
}

// walk follows a location's transactions by endCursor for up to 3 pages.
func (x *mix) walk(ctx context.Context, gc *gqlclient.Client, c http.Header, loc string, st *stats) {
	var after any
	for range 3 {
		status, errs, data, err := send(ctx, gc, c, qPage, map[string]any{"l": loc, "after": after})
		x.record(ctx, st, "walk", "", status, errs, err)
		if err != nil || len(errs) > 0 {
			return
		}
		var d struct {
			Transactions struct {
				Nodes    []struct{ ID string } `json:"nodes"`
				PageInfo struct {
					HasNextPage bool   `json:"hasNextPage"`
					EndCursor   string `json:"endCursor"`
				} `json:"pageInfo"`
			} `json:"transactions"`
		}
		if json.Unmarshal(data, &d) != nil || len(d.Transactions.Nodes) == 0 {
			st.problem("walk: a page without transactions: %.200s", data)
			return
		}
		if !d.Transactions.PageInfo.HasNextPage {
			return
		}
		after = d.Transactions.PageInfo.EndCursor
	}
}

// send posts one GraphQL request and returns the HTTP status, errors and
// data; an answer that is not JSON or holds a stack trace is an error.
func send(ctx context.Context, gc *gqlclient.Client, creds http.Header, query string, vars map[string]any) (int, []gqlclient.Error, json.RawMessage, error) {
	r, err := gc.Post(ctx, gqlclient.Request{Query: query, Variables: vars}, creds)
	var notJSON *gqlclient.NotJSONError
	if errors.As(err, &notJSON) {
		return notJSON.Status, nil, nil, fmt.Errorf("answer is not JSON (%d): %.200s", notJSON.Status, notJSON.Body)
	}
	if err != nil {
		return 0, nil, nil, err
	}
	if bytes.Contains(r.Raw, []byte("goroutine ")) || bytes.Contains(r.Raw, []byte(".go:")) {
		return r.Status, r.Errors, nil, fmt.Errorf("answer holds a stack trace: %.200s", r.Raw)
	}
	return r.Status, r.Errors, r.Data, nil
}

// upstreamRoute is "METHOD /route" of the upstream call an error names in
// extensions.upstream, or "".
func upstreamRoute(e gqlclient.Error) string {
	up, ok := e.Extensions["upstream"].(map[string]any)
	if !ok {
		return ""
	}
	method, _ := up["method"].(string)
	path, _ := up["path"].(string)
	return method + " " + path
}

// record checks one answer: 200, JSON, no stack trace; the wanted code when
// there is one; otherwise only codes injected faults cause, each attributed
// to its upstream route.
func (x *mix) record(ctx context.Context, st *stats, name, want string, status int, errs []gqlclient.Error, err error) {
	if err != nil {
		if ctx.Err() != nil {
			return // the run ended mid-request
		}
		st.problem("%s: %v", name, err)
		return
	}
	st.requests.Add(1)
	if status != http.StatusOK {
		st.problem("%s: HTTP %d", name, status)
	}
	got, faulted := false, false
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, e := range errs {
		code := e.Code()
		st.codes[code]++
		st.total[code]++
		switch {
		case want != "" && code == want:
			got = true
		case faultCodeSet[code]:
			faulted = true
			route := "(no upstream route)"
			if u := upstreamRoute(e); u != "" {
				route = u
			}
			if st.byRoute[route] == nil {
				st.byRoute[route] = map[string]int64{}
			}
			st.byRoute[route][code]++
		default:
			st.nProblem++
			if len(st.problems) < 20 {
				st.problems = append(st.problems, fmt.Sprintf("%s: unexpected %s: %s", name, code, e.Message))
			}
		}
	}
	// A fault on the route may stand in for the wanted answer.
	if want != "" && !got && !faulted {
		st.nProblem++
		if len(st.problems) < 20 {
			st.problems = append(st.problems, fmt.Sprintf("%s: no %s error", name, want))
		}
	}
}
