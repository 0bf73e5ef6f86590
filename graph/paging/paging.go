// Package paging turns the upstream's token-paged lists into Relay
// connections: per-edge cursors that resume right after their edge, and
// `first` values above the upstream's page limit served by following
// nextPageToken.
//
// A cursor holds the upstream page token of the page its edge came from, the
// page size that page was fetched with, the edge's index in it, and a hash of
// the list and filters it belongs to; the last edge of a page instead points
// at the start of the next page, so resuming there needs no refetch. It carries a checksum, so a malformed or
// modified cursor is rejected with BAD_USER_INPUT instead of giving a wrong
// page. The checksum is an integrity check, not a secret: cursors give access
// to nothing, as every page is fetched with the caller's own credentials.
package paging

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"

	"github.com/workspacenet/facade/graph/gqlerr"
)

const (
	// DefaultFirst is the page size when a query gives no `first`.
	DefaultFirst = 25
	// MaxFirst is the largest `first` a connection serves (documented in the
	// README); above the upstream's 100 it follows pages.
	MaxFirst = 500
	// UpstreamMaxLimit is the largest `limit` the REST API accepts.
	UpstreamMaxLimit = 100
)

// Page is one upstream page.
type Page[T any] struct {
	Items []*T
	Next  string // upstream nextPageToken; "" on the last page
}

// FetchFunc fetches the upstream page at token ("" = first page) with limit.
type FetchFunc[T any] func(ctx context.Context, token string, limit int) (*Page[T], error)

// Edge is one node with its cursor.
type Edge[T any] struct {
	Cursor string
	Node   *T
}

// Result is a connection's content.
type Result[T any] struct {
	Edges       []Edge[T]
	HasNextPage bool
}

// EndCursor returns the last edge's cursor, or nil for an empty result.
func (r *Result[T]) EndCursor() *string {
	if len(r.Edges) == 0 {
		return nil
	}
	c := r.Edges[len(r.Edges)-1].Cursor
	return &c
}

// Nodes returns the edges' nodes.
func (r *Result[T]) Nodes() []*T {
	out := make([]*T, len(r.Edges))
	for i, e := range r.Edges {
		out[i] = e.Node
	}
	return out
}

// Scope identifies a list and its filters; cursors of one scope are refused
// by another. Build it from every argument that changes the list.
func Scope(parts ...string) string { return strings.Join(parts, "\x1f") }

// Paginate serves `first` edges after the cursor `after` (nil = from the
// start) of the list identified by scope, fetching upstream pages as needed:
// ceil(first/100) calls from the start, one more when resuming mid-page.
// Argument errors are *gqlerr.InputError naming "first" or "after", returned
// before any fetch.
func Paginate[T any](ctx context.Context, scope string, first *int, after *string, fetch FetchFunc[T]) (*Result[T], error) {
	n := DefaultFirst
	if first != nil {
		n = *first
	}
	if n < 1 || n > MaxFirst {
		return nil, gqlerr.Input("first", "must be between 1 and %d", MaxFirst)
	}
	token, limit, skip := "", min(n, UpstreamMaxLimit), 0
	if after != nil {
		c, err := decode(*after)
		if err != nil {
			return nil, gqlerr.Input("after", "malformed cursor")
		}
		if c.Scope != scopeHash(scope) {
			return nil, gqlerr.Input("after", "the cursor belongs to another list or to other filters")
		}
		token, limit, skip = c.Token, c.Limit, c.Index+1
		if c.Index == startOfPage {
			limit = min(n, UpstreamMaxLimit)
		}
	}
	res := &Result[T]{}
	for {
		page, err := fetch(ctx, token, limit)
		if err != nil {
			return nil, err
		}
		for i := skip; i < len(page.Items); i++ {
			if len(res.Edges) == n {
				res.HasNextPage = true
				return res, nil
			}
			c := cursor{Scope: scopeHash(scope), Token: token, Limit: limit, Index: i}
			if i == len(page.Items)-1 && page.Next != "" {
				// The last edge of a page resumes at the start of the
				// next one: walking by endCursor costs one call per page.
				c.Token, c.Index = page.Next, startOfPage
			}
			res.Edges = append(res.Edges, Edge[T]{Cursor: encode(c), Node: page.Items[i]})
		}
		if page.Next == "" {
			return res, nil
		}
		if len(res.Edges) == n {
			res.HasNextPage = true
			return res, nil
		}
		token, limit, skip = page.Next, min(n-len(res.Edges), UpstreamMaxLimit), 0
	}
}

// startOfPage is the index of a cursor that points before the first item of
// the page its token names.
const startOfPage = -1

type cursor struct {
	Scope string `json:"s"`
	Token string `json:"t,omitempty"`
	Limit int    `json:"l"`
	Index int    `json:"i"`
}

const checksumKey = "wsn-facade-cursor-v1"

func scopeHash(scope string) string {
	h := sha256.Sum256([]byte(scope))
	return base64.RawURLEncoding.EncodeToString(h[:6])
}

func checksum(payload []byte) string {
	h := sha256.Sum256(append([]byte(checksumKey), payload...))
	return base64.RawURLEncoding.EncodeToString(h[:6])
}

func encode(c cursor) string {
	b, _ := json.Marshal(c) // cannot fail: plain strings and ints
	return base64.RawURLEncoding.EncodeToString(b) + "." + checksum(b)
}

var errCursor = errors.New("malformed cursor")

func decode(s string) (cursor, error) {
	var c cursor
	body, sum, ok := strings.Cut(s, ".")
	if !ok || len(s) > 4096 {
		return c, errCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || checksum(b) != sum {
		return c, errCursor
	}
	if err := json.Unmarshal(b, &c); err != nil || c.Limit < 1 || c.Limit > UpstreamMaxLimit || c.Index < startOfPage || c.Index >= c.Limit || (c.Index == startOfPage && c.Token == "") {
		return c, errCursor
	}
	return c, nil
}
