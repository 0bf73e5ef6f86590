package restclient

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkDecodeTransactionsPage decodes a full upstream page (100
// transactions with every embedded summary) the way ListTransactions does.
func BenchmarkDecodeTransactionsPage(b *testing.B) {
	one, err := os.ReadFile(filepath.Join("testdata", "transaction.json"))
	if err != nil {
		b.Fatal(err)
	}
	var page bytes.Buffer
	page.WriteString(`{"transactions":[`)
	for i := range 100 {
		if i > 0 {
			page.WriteByte(',')
		}
		page.Write(bytes.TrimSpace(one))
	}
	page.WriteString(`],"nextPageToken":"eyJvIjoxMDB9.c2ln"}`)
	data := page.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var out []*Transaction
		p, err := decodeList("transactions", &out)(data)
		if err != nil || len(out) != 100 || p.next == "" {
			b.Fatalf("decoded %d items, next %q, err %v", len(out), p.next, err)
		}
	}
}
