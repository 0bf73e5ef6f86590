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
	"github.com/workspacenet/facade/internal/base/sealbox"
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
	p, err := newPager[T](codec, scope, first, after)
	if err != nil {
		return nil, nil, err
	}
	res := &Result[T]{HasPreviousPage: after != nil}
	var cs []cursor
	for !p.done {
		if res.Edges, cs, err = p.page(ctx, fetch, res.Edges, cs); err != nil {
			return nil, nil, err
		}
	}
	res.HasNextPage = p.hasNext
	return res, cs, nil
}

// pager walks the upstream pages of a connection: `first` edges after
// `after`.
type pager[T any] struct {
	sh            [scopeLen]byte
	n, got        int
	token         string
	limit, skip   int
	done, hasNext bool
}

// newPager checks first and after (errors naming them) and returns the
// pager at the start of the page to fetch first.
func newPager[T any](codec *Codec, scope string, first *int, after *string) (*pager[T], error) {
	n := DefaultFirst
	if first != nil {
		n = *first
	}
	if n < 1 || n > MaxFirst {
		return nil, gqlerr.Input("first", "must be between 1 and %d", MaxFirst)
	}
	p := &pager[T]{sh: scopeHash(scope), n: n, limit: min(n, UpstreamMaxLimit)}
	if after != nil {
		c, err := codec.decode(*after)
		if err != nil {
			return nil, gqlerr.Input("after", "malformed cursor")
		}
		if c.Scope != p.sh {
			return nil, gqlerr.Input("after", "the cursor belongs to another list or to other filters")
		}
		p.token, p.limit, p.skip = c.Token, c.Limit, c.Index+1
		if c.Index == startOfPage {
			p.limit = min(n, UpstreamMaxLimit)
		}
	}
	return p, nil
}

// page fetches the next page and appends its edges, and their cursors
// unsealed, to edges and cs (allocated for the page when nil); done once
// the connection has its edges or the list ends.
func (p *pager[T]) page(ctx context.Context, fetch FetchFunc[T], edges []Edge[T], cs []cursor) ([]Edge[T], []cursor, error) {
	page, err := fetch(ctx, p.token, p.limit)
	if err != nil {
		return edges, cs, err
	}
	if edges == nil {
		size := min(p.n-p.got, max(len(page.Items)-p.skip, 0))
		edges, cs = make([]Edge[T], 0, size), make([]cursor, 0, size)
	}
	for i := p.skip; i < len(page.Items); i++ {
		if p.got == p.n {
			p.done, p.hasNext = true, true
			return edges, cs, nil
		}
		c := cursor{Scope: p.sh, Token: p.token, Limit: p.limit, Index: i}
		if i == len(page.Items)-1 && page.Next != "" {
			// The last edge of a page resumes at the start of the
			// next one: walking by endCursor costs one call per page.
			c.Token, c.Index = page.Next, startOfPage
		}
		edges = append(edges, Edge[T]{Node: page.Items[i]})
		cs = append(cs, c)
		p.got++
	}
	switch {
	case page.Next == "":
		p.done = true
	case p.got == p.n:
		p.done, p.hasNext = true, true
	default:
		p.token, p.limit, p.skip = page.Next, min(p.n-p.got, UpstreamMaxLimit), 0
	}
	return edges, cs, nil
}

// Pages serves a connection page by page, for a list delivered as its pages
// arrive (@stream): the same edges, calls and errors as Paginate (its
// cursors sealed, or all "" when nodes is true, as PaginateNodes), each
// page's edges as soon as that page is fetched.
type Pages[T any] struct {
	p     *pager[T]
	codec *Codec
	fetch FetchFunc[T]
	nodes bool
}

// PaginatePages fetches the first page of the connection Paginate would
// serve and returns its edges (the Result has HasPreviousPage, but
// HasNextPage and the end cursor only once Done) and the Pages that fetch
// the others.
func PaginatePages[T any](ctx context.Context, codec *Codec, scope string, first *int, after *string, fetch FetchFunc[T], nodes bool) (*Result[T], *Pages[T], error) {
	p, err := newPager[T](codec, scope, first, after)
	if err != nil {
		return nil, nil, err
	}
	ps := &Pages[T]{p: p, codec: codec, fetch: fetch, nodes: nodes}
	edges, err := ps.Next(ctx)
	if err != nil {
		return nil, nil, err
	}
	return &Result[T]{Edges: edges, HasPreviousPage: after != nil, HasNextPage: p.hasNext}, ps, nil
}

// Done reports whether every page is fetched.
func (ps *Pages[T]) Done() bool { return ps.p.done }

// Next fetches the next page and returns its edges (none once Done).
func (ps *Pages[T]) Next(ctx context.Context) ([]Edge[T], error) {
	if ps.p.done {
		return nil, nil
	}
	edges, cs, err := ps.p.page(ctx, ps.fetch, nil, nil)
	if err != nil {
		return nil, err
	}
	if !ps.nodes {
		ps.codec.encodeAll(cs, func(i int, cursor string) { edges[i].Cursor = cursor })
	}
	return edges, nil
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

// Codec seals and opens cursors (internal/base/sealbox: AES-256-GCM under a key
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
