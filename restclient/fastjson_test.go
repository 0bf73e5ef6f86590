package restclient

import (
	"testing"
)

// SameAsEncodingJSON fails t unless the client's decoder of the answers of
// key (an answer's Key, a name of decoders) and encoding/json agree on
// body: both refuse it, or both decode it to deeply equal values; so does
// its lazy decoder when it has one. For the external tests against the
// local REST service.
func SameAsEncodingJSON(t testing.TB, key string, body []byte) {
	t.Helper()
	decs := decoders()
	p, ok := decs[key]
	if !ok {
		t.Fatalf("no decoder for %q", key)
	}
	sameAsReference(t, key, p, body)
	if p, ok := decs[key+"Lazy"]; ok {
		sameAsReference(t, key+"Lazy", p, body)
	}
}

// A page decodes in a bounded number of allocations whatever its length:
// one per slab chunk of each type, not one per pointer field or string.
func TestGeneratedDecodersAllocations(t *testing.T) {
	for _, tc := range []struct {
		key, file string
		n         int
		max       float64
	}{
		{"transactions", "transaction.json", 100, 140},
		{"products", "product.json", 70, 30},
		{"orders", "order.json", 25, 25},
		{"creditNotes", "credit_note.json", 10, 30},
	} {
		data := compactPage(t, tc.key, tc.file, tc.n)
		parse := decoders()[tc.key].got
		if _, _, err := parse(data); err != nil { // learn the slab sizes
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(20, func() {
			if _, _, err := parse(data); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > tc.max {
			t.Errorf("%s: %d items in %.0f allocations, want at most %.0f", tc.key, tc.n, allocs, tc.max)
		}
		t.Logf("%s: %d items, %.0f allocations", tc.key, tc.n, allocs)
	}
}
