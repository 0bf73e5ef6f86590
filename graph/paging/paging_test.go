package paging

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"testing"

	"github.com/workspacenet/facade/graph/gqlerr"
)

// testCodec seals the cursors of these tests.
var testCodec = NewCodec([]byte("paging test secret, 32 bytes long"))

// list is an upstream list of n items paged by an offset token, recording the
// limits it was asked for.
type list struct {
	n      int
	limits []int
}

func (l *list) fetch(_ context.Context, token string, limit int) (*Page[int], error) {
	l.limits = append(l.limits, limit)
	off := 0
	if token != "" {
		off, _ = strconv.Atoi(token)
	}
	p := &Page[int]{}
	for i := off; i < min(off+limit, l.n); i++ {
		v := i
		p.Items = append(p.Items, &v)
	}
	if off+limit < l.n {
		p.Next = strconv.Itoa(off + limit)
	}
	return p, nil
}

func values(r *Result[int]) []int {
	out := make([]int, len(r.Edges))
	for i, e := range r.Edges {
		out[i] = *e.Node
	}
	return out
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPaginateFollowsPagesAboveUpstreamLimit(t *testing.T) {
	l := &list{n: 260}
	r, err := Paginate(context.Background(), testCodec, "s", new(250), nil, l.fetch)
	if err != nil {
		t.Fatal(err)
	}
	if got := values(r); !equal(got, seq(0, 250)) {
		t.Fatalf("got %d items, first %v", len(got), got[:3])
	}
	if !r.HasNextPage {
		t.Error("HasNextPage = false with 10 items left")
	}
	if !equal(l.limits, []int{100, 100, 50}) {
		t.Errorf("upstream limits = %v, want [100 100 50]", l.limits)
	}
}

func TestPaginateLastPage(t *testing.T) {
	l := &list{n: 30}
	r, err := Paginate(context.Background(), testCodec, "s", new(30), nil, l.fetch)
	if err != nil {
		t.Fatal(err)
	}
	if r.HasNextPage || len(r.Edges) != 30 || len(l.limits) != 1 {
		t.Fatalf("hasNext=%v edges=%d calls=%d", r.HasNextPage, len(r.Edges), len(l.limits))
	}
	if *r.EndCursor() != r.Edges[29].Cursor {
		t.Error("EndCursor is not the last edge's cursor")
	}
}

func TestResumeFromEveryEdgeSeesNothingTwice(t *testing.T) {
	l := &list{n: 57}
	first, err := Paginate(context.Background(), testCodec, "s", new(25), nil, l.fetch)
	if err != nil {
		t.Fatal(err)
	}
	for k, e := range first.Edges {
		r, err := Paginate(context.Background(), testCodec, "s", new(10), &e.Cursor, l.fetch)
		if err != nil {
			t.Fatalf("edge %d: %v", k, err)
		}
		if want := seq(k+1, k+11); !equal(values(r), want) {
			t.Fatalf("after edge %d: got %v want %v", k, values(r), want)
		}
		if !r.HasNextPage || !r.HasPreviousPage {
			t.Fatalf("after edge %d: HasNextPage %v, HasPreviousPage %v", k, r.HasNextPage, r.HasPreviousPage)
		}
		if *r.StartCursor() != r.Edges[0].Cursor {
			t.Fatalf("after edge %d: StartCursor is not the first edge's cursor", k)
		}
	}
	if first.HasPreviousPage {
		t.Error("the first page has HasPreviousPage")
	}
	past, err := Paginate(context.Background(), testCodec, "s", new(5), first.EndCursor(), (&list{n: 25}).fetch)
	if err != nil {
		t.Fatal(err)
	}
	if len(past.Edges) != 0 || past.StartCursor() != nil || past.EndCursor() != nil || !past.HasPreviousPage || past.HasNextPage {
		t.Errorf("empty page after the end: %+v", past)
	}
	// Walking the whole list by endCursor yields every item exactly once.
	var all []int
	var after *string
	for {
		r, err := Paginate(context.Background(), testCodec, "s", new(7), after, l.fetch)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, values(r)...)
		if !r.HasNextPage {
			break
		}
		after = r.EndCursor()
	}
	if !equal(all, seq(0, 57)) {
		t.Fatalf("walk got %v", all)
	}
}

func TestWalkingByEndCursorFetchesEachPageOnce(t *testing.T) {
	l := &list{n: 95}
	var after *string
	var all []int
	for {
		r, err := Paginate(context.Background(), testCodec, "s", new(20), after, l.fetch)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, values(r)...)
		if !r.HasNextPage {
			break
		}
		after = r.EndCursor()
	}
	if !equal(all, seq(0, 95)) {
		t.Fatalf("walk got %v", all)
	}
	if len(l.limits) != 5 {
		t.Errorf("walking 95 items by 20 made %d upstream calls, want 5", len(l.limits))
	}
}

func TestBadArgumentsAreInputErrorsWithoutFetching(t *testing.T) {
	l := &list{n: 10}
	good, _ := Paginate(context.Background(), testCodec, "s", new(2), nil, l.fetch)
	l.limits = nil
	c := good.Edges[0].Cursor
	raw, _ := base64.RawURLEncoding.DecodeString(c)
	raw[len(raw)/2] ^= 1
	tampered := base64.RawURLEncoding.EncodeToString(raw)
	foreign := NewCodec([]byte("another secret, also 32 bytes long")).encode(cursor{Scope: scopeHash("s"), Limit: 2, Index: 0})
	cases := []struct {
		name  string
		first *int
		after string
		field string
	}{
		{"zero first", new(0), "", "first"},
		{"negative first", new(-1), "", "first"},
		{"first above max", new(MaxFirst + 1), "", "first"},
		{"garbage", nil, "not-a-cursor", "after"},
		{"tampered", nil, tampered, "after"},
		{"bad base64", nil, "%%%" + c, "after"},
		{"old format", nil, "eyJzIjoiIn0.AAAA", "after"},
		{"other secret", nil, foreign, "after"},
		{"other scope", nil, c, "after"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var after *string
			if tc.after != "" {
				after = &tc.after
			}
			scope := "s"
			if tc.name == "other scope" {
				scope = "other"
			}
			_, err := Paginate(context.Background(), testCodec, scope, tc.first, after, l.fetch)
			var ie *gqlerr.InputError
			if !errors.As(err, &ie) || ie.Field != tc.field {
				t.Fatalf("err = %v, want InputError on %s", err, tc.field)
			}
		})
	}
	if len(l.limits) != 0 {
		t.Errorf("bad arguments caused %d fetches", len(l.limits))
	}
}

func FuzzDecodeCursor(f *testing.F) {
	f.Add(testCodec.encode(cursor{Scope: scopeHash("s"), Token: "abc", Limit: 25, Index: 3}))
	f.Add("")
	f.Add(".")
	f.Add("eyJzIjoiIn0.AAAA")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := testCodec.decode(s)
		if err != nil {
			return
		}
		if c.Limit < 1 || c.Limit > UpstreamMaxLimit || c.Index < startOfPage || c.Index >= c.Limit {
			t.Fatalf("decode accepted out-of-range cursor %+v", c)
		}
		// Re-encoding is not byte-identical (a fresh nonce), but must
		// decode to the same cursor.
		c2, err := testCodec.decode(testCodec.encode(c))
		if err != nil || c2 != c {
			t.Fatalf("round trip changed %+v to %+v (%v)", c, c2, err)
		}
	})
}

// TestOneStringPerCursor: a cursor's last character carries unused low bits
// when its length is not a multiple of 3 bytes; a string that differs only
// there decodes to the same bytes, and must still be refused.
func TestOneStringPerCursor(t *testing.T) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	checked := 0
	for _, limit := range []int{1, 2, 3, 7, 20} {
		for _, token := range []string{"", "t", "tok", "token-1", "a longer page token"} {
			c := testCodec.encode(cursor{Scope: scopeHash("s"), Limit: limit, Index: 0, Token: token})
			if _, err := testCodec.decode(c); err != nil {
				t.Fatalf("own cursor %q refused: %v", c, err)
			}
			want, _ := base64.RawURLEncoding.DecodeString(c)
			last := c[len(c)-1]
			for _, r := range alphabet {
				if byte(r) == last {
					continue
				}
				other := c[:len(c)-1] + string(r)
				if b, err := base64.RawURLEncoding.DecodeString(other); err != nil || !bytes.Equal(b, want) {
					continue // a change that alters the bytes: the seal refuses it
				}
				checked++
				if _, err := testCodec.decode(other); err == nil {
					t.Errorf("cursor %q accepted with its last character %q changed to %q", c, last, r)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no cursor had unused bits in its last character: the test checks nothing")
	}
}

// TestPaginateNodesIsPaginateWithoutCursors: the same edges, pages, calls
// and page info, from the start and after a cursor, with no cursor sealed.
func TestPaginateNodesIsPaginateWithoutCursors(t *testing.T) {
	start, err := Paginate(context.Background(), testCodec, "s", new(150), nil, (&list{n: 260}).fetch)
	if err != nil {
		t.Fatal(err)
	}
	for _, after := range []*string{nil, &start.Edges[41].Cursor, start.EndCursor()} {
		a, b := &list{n: 260}, &list{n: 260}
		want, err := Paginate(context.Background(), testCodec, "s", new(120), after, a.fetch)
		if err != nil {
			t.Fatal(err)
		}
		got, err := PaginateNodes(context.Background(), testCodec, "s", new(120), after, b.fetch)
		if err != nil {
			t.Fatal(err)
		}
		if !equal(values(got), values(want)) || got.HasNextPage != want.HasNextPage || got.HasPreviousPage != want.HasPreviousPage ||
			!equal(a.limits, b.limits) {
			t.Fatalf("after %v: %d edges (next %v, prev %v, limits %v), want %d (%v, %v, %v)", after != nil,
				len(got.Edges), got.HasNextPage, got.HasPreviousPage, b.limits, len(want.Edges), want.HasNextPage, want.HasPreviousPage, a.limits)
		}
		for _, e := range got.Edges {
			if e.Cursor != "" {
				t.Fatalf("PaginateNodes sealed a cursor %q", e.Cursor)
			}
		}
	}
	if _, err := PaginateNodes(context.Background(), testCodec, "s", new(10), new("forged"), (&list{n: 30}).fetch); err == nil {
		t.Error("PaginateNodes accepted a forged cursor")
	}
}
