// Package paging turns the upstream's token-paged lists into Relay
// connections: per-edge cursors that resume right after their edge, and
// `first` values above the upstream's page limit served by following
// nextPageToken.
//
// A cursor holds the upstream page token of the page its edge came from, the
// page size that page was fetched with, the edge's index in it, and a hash of
// the list and filters it belongs to; the last edge of a page instead points
// at the start of the next page, so resuming there needs no refetch. Cursors
// are sealed with AES-256-GCM under a key derived (HKDF-SHA256) from the
// server secret (Codec): a client can neither read them (the upstream token,
// the list, the position) nor make or alter one, and a cursor that does not
// open, or that belongs to another list, is BAD_USER_INPUT on `after`.
// Replicas must share the secret for one replica's cursors to work on another.
package paging

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/internal/sealbox"
)

const (
	// DefaultFirst is the page size when a query gives no `first`.
	DefaultFirst = 25
	// MaxFirst is the largest `first` a connection serves (README.md's
	// limits, docs/querying.md); above the upstream's 100 it follows pages.
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
	// HasPreviousPage is exact: true when the page starts after a cursor.
	// Every cursor points after an item of the list (none names its start),
	// so items precede such a page; the first page has none.
	HasPreviousPage bool
}

// StartCursor returns the first edge's cursor, or nil for an empty result.
func (r *Result[T]) StartCursor() *string {
	if len(r.Edges) == 0 {
		return nil
	}
	c := r.Edges[0].Cursor
	return &c
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
// before any fetch. codec seals and opens the cursors.
func Paginate[T any](ctx context.Context, codec *Codec, scope string, first *int, after *string, fetch FetchFunc[T]) (*Result[T], error) {
	res, cs, err := paginate(ctx, codec, scope, first, after, fetch)
	if err != nil {
		return nil, err
	}
	codec.encodeAll(cs, func(i int, cursor string) { res.Edges[i].Cursor = cursor })
	return res, nil
}

// PaginateNodes is Paginate for a connection whose query shows no cursor:
// the same edges, calls and errors, every Cursor "" (sealing a cursor costs
// about as much as resolving a few fields of its node).
func PaginateNodes[T any](ctx context.Context, codec *Codec, scope string, first *int, after *string, fetch FetchFunc[T]) (*Result[T], error) {
	res, _, err := paginate(ctx, codec, scope, first, after, fetch)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// paginate is Paginate with the edges' cursors returned unsealed, to be
// sealed together.
func paginate[T any](ctx context.Context, codec *Codec, scope string, first *int, after *string, fetch FetchFunc[T]) (*Result[T], []cursor, error) {
	n := DefaultFirst
	if first != nil {
		n = *first
	}
	if n < 1 || n > MaxFirst {
		return nil, nil, gqlerr.Input("first", "must be between 1 and %d", MaxFirst)
	}
	sh := scopeHash(scope)
	token, limit, skip := "", min(n, UpstreamMaxLimit), 0
	if after != nil {
		c, err := codec.decode(*after)
		if err != nil {
			return nil, nil, gqlerr.Input("after", "malformed cursor")
		}
		if c.Scope != sh {
			return nil, nil, gqlerr.Input("after", "the cursor belongs to another list or to other filters")
		}
		token, limit, skip = c.Token, c.Limit, c.Index+1
		if c.Index == startOfPage {
			limit = min(n, UpstreamMaxLimit)
		}
	}
	res := &Result[T]{HasPreviousPage: after != nil}
	var cs []cursor
	for {
		page, err := fetch(ctx, token, limit)
		if err != nil {
			return nil, nil, err
		}
		if res.Edges == nil {
			size := min(n, max(len(page.Items)-skip, 0))
			res.Edges, cs = make([]Edge[T], 0, size), make([]cursor, 0, size)
		}
		for i := skip; i < len(page.Items); i++ {
			if len(res.Edges) == n {
				res.HasNextPage = true
				return res, cs, nil
			}
			c := cursor{Scope: sh, Token: token, Limit: limit, Index: i}
			if i == len(page.Items)-1 && page.Next != "" {
				// The last edge of a page resumes at the start of the
				// next one: walking by endCursor costs one call per page.
				c.Token, c.Index = page.Next, startOfPage
			}
			res.Edges = append(res.Edges, Edge[T]{Node: page.Items[i]})
			cs = append(cs, c)
		}
		if page.Next == "" {
			return res, cs, nil
		}
		if len(res.Edges) == n {
			res.HasNextPage = true
			return res, cs, nil
		}
		token, limit, skip = page.Next, min(n-len(res.Edges), UpstreamMaxLimit), 0
	}
}

// startOfPage is the index of a cursor that points before the first item of
// the page its token names.
const startOfPage = -1

type cursor struct {
	Scope [scopeLen]byte // scopeHash of the list
	Token string         // upstream page token ("" = first page)
	Limit int            // page size the token's page is fetched with
	Index int            // the edge's index in the page, or startOfPage
}

const (
	scopeLen = 16
	// cursorVersion is the first byte of a cursor's plaintext.
	cursorVersion = 2
	// maxCursorLen bounds the cursors decode looks at.
	maxCursorLen = 4096
	// hkdfInfo separates the cursor key from anything else derived from
	// the server secret.
	hkdfInfo = "wsn-facade graph/paging cursor key v2"
)

func scopeHash(scope string) [scopeLen]byte {
	h := sha256.Sum256([]byte(scope))
	return [scopeLen]byte(h[:scopeLen])
}

// Codec seals and opens cursors (internal/sealbox: AES-256-GCM under a key
// derived by HKDF-SHA256 from a server secret). It is safe for concurrent use.
type Codec struct {
	box *sealbox.Box
}

// NewCodec returns the Codec of secret. Facades that must accept each
// other's cursors (replicas) need the same secret; an empty secret draws a
// random one, good for this process only.
func NewCodec(secret []byte) *Codec {
	if len(secret) == 0 {
		secret = make([]byte, 32)
		_, _ = rand.Read(secret)
	}
	return &Codec{box: sealbox.New(secret, hkdfInfo)}
}

// encode seals c: base64url(nonce || AES-GCM(version, scope, limit,
// index+1, token)), with a random nonce.
func (k *Codec) encode(c cursor) string {
	var s string
	k.encodeAll([]cursor{c}, func(_ int, cursor string) { s = cursor })
	return s
}

// adCursor is the additional data of every cursor.
var adCursor = []byte(hkdfInfo)

// encodeAll seals every cursor of cs as encode does, each under its own
// random nonce, and gives set each one's text. The texts share one
// allocation, and one work buffer serves them all.
func (k *Codec) encodeAll(cs []cursor, set func(i int, cursor string)) {
	if len(cs) == 0 {
		return
	}
	total, work := 0, 0
	for _, c := range cs {
		p := plainLen(c)
		e := base64.RawURLEncoding.EncodedLen(k.box.SealedLen(p))
		total += e
		work = max(work, p+k.box.SealedLen(p)+e)
	}
	var text strings.Builder
	text.Grow(total)
	buf := make([]byte, 0, work)
	for _, c := range cs {
		plain := append(buf[:0], cursorVersion)
		plain = append(plain, c.Scope[:]...)
		plain = append(plain, byte(c.Limit), byte(c.Index+1))
		plain = append(plain, c.Token...)
		sealed := k.box.Seal(plain[len(plain):], plain, adCursor)
		text.Write(base64.RawURLEncoding.AppendEncode(sealed[len(sealed):], sealed))
	}
	all, start := text.String(), 0
	for i, c := range cs {
		end := start + base64.RawURLEncoding.EncodedLen(k.box.SealedLen(plainLen(c)))
		set(i, all[start:end])
		start = end
	}
}

// plainLen is the length of c's plaintext.
func plainLen(c cursor) int { return 1 + scopeLen + 2 + len(c.Token) }

var errCursor = errors.New("malformed cursor")

// decode opens a cursor sealed by encode with the same secret; any other
// string is errCursor.
func (k *Codec) decode(s string) (cursor, error) {
	var c cursor
	if len(s) > maxCursorLen {
		return c, errCursor
	}
	// Strict: the unused low bits of the last character must be zero, so
	// exactly one string opens to a given cursor.
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return c, errCursor
	}
	plain, err := k.box.Open(b, []byte(hkdfInfo))
	if err != nil || len(plain) < 1+scopeLen+2 || plain[0] != cursorVersion {
		return c, errCursor
	}
	c.Scope = [scopeLen]byte(plain[1 : 1+scopeLen])
	c.Limit, c.Index = int(plain[1+scopeLen]), int(plain[2+scopeLen])-1
	c.Token = string(plain[3+scopeLen:])
	if c.Limit < 1 || c.Limit > UpstreamMaxLimit || c.Index < startOfPage || c.Index >= c.Limit || (c.Index == startOfPage && c.Token == "") {
		return c, errCursor
	}
	return c, nil
}
