package restclient

import (
	"bytes"
	"encoding/json"
	"testing"
)

// compactPage is page with the fixture compacted, as the REST service
// sends its bodies.
func compactPage(tb testing.TB, key, file string, n int) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, page(tb, key, file, n)); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// BenchmarkDecodeRoutes decodes the bodies of the routes the bench queries
// call, compacted as the REST service sends them, with the generated
// decoders ("generated") and with encoding/json, their oracle ("encodingjson").
func BenchmarkDecodeRoutes(b *testing.B) {
	one := func(tb testing.TB, key, file string) []byte {
		var out bytes.Buffer
		if err := json.Compact(&out, []byte(sprintf(`{"`+key+`":%s}`, fixture(tb, file)))); err != nil {
			tb.Fatal(err)
		}
		return out.Bytes()
	}
	type route struct {
		name       string
		body       func(testing.TB) []byte
		fast, slow parseFunc
	}
	for _, r := range []route{
		{"transactions100", func(tb testing.TB) []byte { return compactPage(tb, "transactions", "transaction.json", 100) },
			parseList[Transaction]("transactions"), stdParseList[Transaction]("transactions")},
		{"products70", func(tb testing.TB) []byte { return compactPage(tb, "products", "product.json", 70) },
			parseList[Product]("products"), stdParseList[Product]("products")},
		{"orders25", func(tb testing.TB) []byte { return compactPage(tb, "orders", "order.json", 25) },
			parseList[Order]("orders"), stdParseList[Order]("orders")},
		{"creditNotes10", func(tb testing.TB) []byte { return compactPage(tb, "creditNotes", "credit_note.json", 10) },
			parseList[CreditNote]("creditNotes"), stdParseList[CreditNote]("creditNotes")},
		{"comments20", func(tb testing.TB) []byte { return compactPage(tb, "comments", "comment.json", 20) },
			parseList[Comment]("comments"), stdParseList[Comment]("comments")},
		{"resource", func(tb testing.TB) []byte { return one(tb, "resource", "resource.json") },
			parseOne[Resource]("resource"), stdParseOne[Resource]("resource")},
		{"event", func(tb testing.TB) []byte { return one(tb, "event", "event.json") },
			parseOne[Event]("event"), stdParseOne[Event]("event")},
	} {
		data := r.body(b)
		for _, impl := range []struct {
			name  string
			parse parseFunc
		}{{"generated", r.fast}, {"encodingjson", r.slow}} {
			b.Run(r.name+"/"+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := impl.parse(data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	b.Run("invoiceItems/generated", func(b *testing.B) { benchInvoiceItems(b, true) })
	b.Run("invoiceItems/encodingjson", func(b *testing.B) { benchInvoiceItems(b, false) })
}

// BenchmarkInvoiceBody decodes an invoice body (the fixture invoice with
// ten items, in both places) as ListInvoiceItems does (decode=whole) and as
// ListInvoiceItemsLazily does (decode=lazy), for a reader of its scalars
// (read=scalars) and for one of its items too (read=items: Complete):
//
//	go test -run '^$' -bench InvoiceBody -count 6 | benchstat -col /decode -
func BenchmarkInvoiceBody(b *testing.B) {
	data := invoiceBody(b)
	for _, read := range []string{"scalars", "items"} {
		b.Run("decode=whole/read="+read, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				v := new(InvoiceItems)
				if err := v.fastWhole(data); err != nil {
					b.Fatal(err)
				}
				if err := v.fillItems(); err != nil || len(v.Items) != 10 {
					b.Fatal(err)
				}
			}
		})
		b.Run("decode=lazy/read="+read, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				v := new(InvoiceItems)
				if err := v.decodeLazily(data, "GET", "/r"); err != nil || v.Invoice.ID == "" {
					b.Fatal(err)
				}
				if read == "items" {
					if w, err := v.Complete(); err != nil || len(w.Items) != 10 {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkResourceBody decodes the fixture resource as GetResource does
// (decode=whole) and as GetResourceLazily does (decode=lazy), for a reader
// of its scalars (read=scalars) and of its objects too (read=objects):
//
//	go test -run '^$' -bench ResourceBody -count 6 | benchstat -col /decode -
func BenchmarkResourceBody(b *testing.B) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(sprintf(`{"resource":%s}`, fixture(b, "resource.json")))); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	for _, read := range []string{"scalars", "objects"} {
		b.Run("decode=whole/read="+read, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := OpGetResource.parse(data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("decode=lazy/read="+read, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				lv, _, err := OpGetResource.lazy(data)
				if err != nil {
					b.Fatal(err)
				}
				v := lv.(*Resource)
				if read == "objects" {
					if w, err := v.Complete(); err != nil || w.Schedule == nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// invoiceBody is the fixture invoice with ten items, compacted.
func invoiceBody(b *testing.B) []byte {
	var buf bytes.Buffer
	inv := fixture(b, "invoice.json")
	items := page(b, "invoiceItems", "invoice_item.json", 10)
	body := sprintf(`{"invoice":%s,`, inv) + string(items[1:])
	if err := json.Compact(&buf, []byte(body)); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func benchInvoiceItems(b *testing.B, fast bool) {
	data := invoiceBody(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		v := new(InvoiceItems)
		var err error
		if fast {
			err = v.fastWhole(data)
		} else {
			err = stdUnmarshalObject(data, v)
		}
		if err != nil || len(v.Items) != 10 {
			b.Fatal(err)
		}
	}
}
