package restclient

import (
	"bytes"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// page returns {"<key>":[n copies of testdata/<file>],"nextPageToken":"..."}.
func page(tb testing.TB, key, file string, n int) []byte {
	one, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		tb.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString(`{"` + key + `":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(bytes.TrimSpace(one))
	}
	b.WriteString(`],"nextPageToken":"eyJvIjoxMDB9.c2ln"}`)
	return b.Bytes()
}

// BenchmarkDecodeTransactionsPage decodes a full upstream page (100
// transactions with every embedded summary) the way ListTransactions does.
func BenchmarkDecodeTransactionsPage(b *testing.B) {
	data := page(b, "transactions", "transaction.json", 100)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		v, p, err := parseList[Transaction]("transactions")(data)
		out, _ := v.([]*Transaction)
		if err != nil || len(out) != 100 || p.next == "" {
			b.Fatalf("decoded %d items, next %q, err %v", len(out), p.next, err)
		}
	}
}

// BenchmarkDecodeProductList decodes a location's product list of 70
// products (the list every product link of a query resolves through) the way
// ListProducts does.
func BenchmarkDecodeProductList(b *testing.B) {
	data := page(b, "products", "product.json", 70)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		v, _, err := parseList[Product]("products")(data)
		if out, _ := v.([]*Product); err != nil || len(out) != 70 {
			b.Fatalf("decoded %d items, err %v", len(out), err)
		}
	}
}

// BenchmarkDecodeResource decodes one GET /resources/v1/{id} answer.
func BenchmarkDecodeResource(b *testing.B) {
	data := []byte(`{"resource":{"id":"r1","title":"Room","capacity":4,"type":"meeting_room","locationRef":"l1","createDate":"2024-01-02T03:04:05Z"}}`)
	b.ReportAllocs()
	for b.Loop() {
		v, _, err := parseOne[Resource]("resource")(data)
		if out, _ := v.(*Resource); err != nil || out == nil || out.ID != "r1" {
			b.Fatalf("%+v %v", out, err)
		}
	}
}

// readBody returns the whole body whatever the size hint or Content-Length
// says, and remembers the size for the route's next body.
func TestReadBody(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 10_000) // 100 KB
	var hint atomic.Int64
	for _, tc := range []struct {
		name          string
		contentLength int64
		hint          int64
	}{
		{"chunked, no hint", -1, 0},
		{"chunked, hint too small", -1, 700},
		{"chunked, hint too large", -1, 1 << 20},
		{"content length", int64(len(body)), 0},
		{"content length wrong", 10, 0},
	} {
		hint.Store(tc.hint)
		got, err := readBody(bytes.NewReader(body), tc.contentLength, &hint)
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("%s: read %d bytes, err %v", tc.name, len(got), err)
		}
		if hint.Load() != int64(len(body)) {
			t.Errorf("%s: hint %d after a body of %d", tc.name, hint.Load(), len(body))
		}
	}
	hint.Store(0)
	got, err := readBody(bytes.NewReader(make([]byte, maxResponseBody+10)), -1, &hint)
	if err != nil || len(got) != maxResponseBody+1 {
		t.Errorf("an oversized body read %d bytes (want the limit + 1), err %v", len(got), err)
	}
}
