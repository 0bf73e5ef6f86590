package credkey

import (
	"encoding/base64"
	"testing"
)

func TestAuthorization(t *testing.T) {
	pair := "client-7:s3cr3t??>>" // its standard base64 has padding and a '+'
	if std := base64.StdEncoding.EncodeToString([]byte(pair)); std == base64.RawURLEncoding.EncodeToString([]byte(pair)) {
		t.Fatal("the pair has one spelling in every alphabet")
	}
	std := base64.StdEncoding.EncodeToString([]byte(pair))
	for _, c := range []struct{ in, want string }{
		// One Bearer token, spelled eight ways.
		{"Bearer tok-AbC.1", "Bearer tok-AbC.1"},
		{"bearer tok-AbC.1", "Bearer tok-AbC.1"},
		{"BEARER tok-AbC.1", "Bearer tok-AbC.1"},
		{"BeArEr tok-AbC.1", "Bearer tok-AbC.1"},
		{"Bearer   tok-AbC.1", "Bearer tok-AbC.1"},
		{"Bearer\ttok-AbC.1", "Bearer tok-AbC.1"},
		{"  Bearer tok-AbC.1  ", "Bearer tok-AbC.1"},
		{"bearer \t tok-AbC.1\u00a0", "Bearer tok-AbC.1"},
		// The token itself is case-sensitive.
		{"Bearer TOK-abc.1", "Bearer TOK-abc.1"},
		// Basic: scheme case and blanks; the credential as sent.
		{"Basic " + std, "Basic " + std},
		{"basic " + std, "Basic " + std},
		{"BASIC  " + std + " ", "Basic " + std},
		// Other base64 spellings of the pair are other credentials to the
		// upstream (it decodes strict standard base64 only): kept as sent.
		{"Basic " + base64.RawStdEncoding.EncodeToString([]byte(pair)), "Basic " + base64.RawStdEncoding.EncodeToString([]byte(pair))},
		{"basic " + base64.URLEncoding.EncodeToString([]byte(pair)), "Basic " + base64.URLEncoding.EncodeToString([]byte(pair))},
		{"Basic " + base64.RawURLEncoding.EncodeToString([]byte(pair)), "Basic " + base64.RawURLEncoding.EncodeToString([]byte(pair))},
		{"Basic dGVzdB==", "Basic dGVzdB=="}, // non-zero padding bits: not re-encoded as "dGVzdA=="
		// What does not decode is kept, blanks collapsed.
		{"Basic not*base64", "Basic not*base64"},
		{"basic  two  words", "Basic two words"},
		{"Basic", "Basic"},
		// Other schemes keep their spelling; blanks still collapse.
		{"Digest  a=b,  c=d", "Digest a=b, c=d"},
		{"", ""},
		{"   ", ""},
		// Line breaks and other control characters are not blanks: they stay
		// for the caller to refuse.
		{"Bearer tok\nX: y", "Bearer tok\nX: y"},
		{"Bearer\vtok", "Bearer\vtok"},
	} {
		if got := Authorization(c.in); got != c.want {
			t.Errorf("Authorization(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := Authorization(c.want); got != c.want {
			t.Errorf("Authorization(%q) = %q: the canonical form is not a fixed point", c.want, got)
		}
	}
}

func TestNetworkID(t *testing.T) {
	const id = "0b7e4c1a-abcd-4ef0-8333-944455556666"
	for _, c := range []struct{ in, want string }{
		{id, id},
		{"0B7E4C1A-ABCD-4EF0-8333-944455556666", id},
		{"  0b7e4c1a-ABCD-4ef0-8333-944455556666\t", id},
		{" not-a-uuid ", "not-a-uuid"},
		{"", ""},
	} {
		if got := NetworkID(c.in); got != c.want {
			t.Errorf("NetworkID(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCanonicalCostsNothing: a value already canonical is returned without
// an allocation (the facade normalises every request's credentials).
func TestCanonicalCostsNothing(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("client-0123456789abcdef:secret-0123456789abcdef0123456789abcdef"))
	for _, v := range []string{"Bearer 5Xb0c1kVqJ9n3m6rYw2tPzLhA8uEoDsG4fRiTjKlM7Q", basic} {
		if n := testing.AllocsPerRun(100, func() { _ = Authorization(v) }); n != 0 {
			t.Errorf("Authorization(%.12q...) allocates %v times", v, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = NetworkID("0b7e4c1a-abcd-4ef0-8333-944455556666") }); n != 0 {
		t.Errorf("NetworkID allocates %v times", n)
	}
}
