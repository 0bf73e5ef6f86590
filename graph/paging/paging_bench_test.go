package paging

import (
	"context"
	"testing"
)

// benchCursor is a realistic cursor: a sealed upstream page token, a full
// page and an edge in its middle.
var benchCursor = cursor{Scope: scopeHash(Scope("transactions", "00000000-0000-4000-8000-000000000007", "", "")), Token: "eyJvIjoxMDAsImsiOiJ0eCJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ", Limit: UpstreamMaxLimit, Index: 57}

func BenchmarkCursorEncode(b *testing.B) {
	b.ReportAllocs()
	var s string
	for b.Loop() {
		s = testCodec.encode(benchCursor)
	}
	if s == "" {
		b.Fatal("empty cursor")
	}
}

func BenchmarkCursorDecode(b *testing.B) {
	s := testCodec.encode(benchCursor)
	b.ReportAllocs()
	for b.Loop() {
		c, err := testCodec.decode(s)
		if err != nil || c != benchCursor {
			b.Fatalf("decode = %+v, %v", c, err)
		}
	}
}

// BenchmarkPaginate100 serves a connection of 100 edges from one upstream
// page (the feed's transactions): the fetch returns a ready page, so this is
// Paginate's own cost, 100 sealed cursors included.
func BenchmarkPaginate100(b *testing.B) {
	items := make([]*int, 100)
	for i := range items {
		items[i] = &i
	}
	page := &Page[int]{Items: items, Next: benchCursor.Token}
	fetch := func(context.Context, string, int) (*Page[int], error) { return page, nil }
	first := 100
	scope := Scope("transactions", "00000000-0000-4000-8000-000000000007", "", "")
	b.ReportAllocs()
	for b.Loop() {
		r, err := Paginate(b.Context(), testCodec, scope, &first, nil, fetch)
		if err != nil || len(r.Edges) != 100 {
			b.Fatal(err)
		}
	}
}
