package paging

import "testing"

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
