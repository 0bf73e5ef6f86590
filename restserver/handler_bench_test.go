package restserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkServe is one request straight through the service's handler
// (no HTTP server or client): what the service spends per call on the
// routes the facade's feed and dashboard call most, demo data at scale 1,
// in-memory database, no injected latency.
func BenchmarkServe(b *testing.B) {
	s, err := New(context.Background(), Config{DBPath: ":memory:", DemoScale: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	m, err := s.Manifest()
	if err != nil {
		b.Fatal(err)
	}
	ids := func(kind string) string {
		if len(m.IDs[kind]) == 0 {
			b.Fatalf("no %s in the demo data", kind)
		}
		return m.IDs[kind][0]
	}
	h := s.Handler()
	for _, bc := range []struct{ name, path string }{
		{"GetResource", "/resources/v1/" + ids("resource")},
		{"GetEvent", "/events/v1/" + ids("event")},
		{"GetInvoiceItems", "/billing/invoices/v1/" + ids("invoice") + "/items"},
		{"ListTransactions100", "/transactions/money/v1?locationRef=" + ids("location") + "&limit=100"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, bc.path, nil)
			req.Header.Set("Authorization", "Bearer "+m.BearerToken)
			req.Header.Set("service-network-id", m.NetworkID)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", bc.path, w.Code, w.Body)
				}
			}
		})
	}
}
