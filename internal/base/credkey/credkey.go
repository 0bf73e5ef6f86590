// Package credkey gives the credential headers of the Workspace Network
// Service API one spelling each, so that everything keyed by credentials
// (rate budgets, in-flight bounds, breakers, shared calls, caches, the local
// service's rate limit) sees one client where the upstream sees one.
//
// The upstream reads the Authorization scheme case-insensitively, ignores the
// blanks around the credential and compares the service-network-id uuid
// without regard to case: "bearer  tok", "BEARER tok" and "Bearer tok" are
// one client to it, and must be one to whatever counts clients.
package credkey

import (
	"strings"
	"unicode"

	"github.com/workspacenet/facade/internal/base/ids"
)

// Authorization returns the canonical spelling of an Authorization header
// value:
//   - blanks (space, tab and the non-ASCII Unicode spaces) around it
//     removed, and every run of blanks inside it replaced by one space;
//     other control characters stay, for the caller to refuse;
//   - the schemes Basic and Bearer spelled so, whatever the case given
//     (other schemes keep their spelling);
//   - a Basic credential kept as sent: only its canonical base64
//     (standard alphabet, padded, zero padding bits: what
//     base64.StdEncoding.Strict() decodes) names the pair it encodes; an
//     unpadded, URL-alphabet or otherwise lenient spelling is another
//     credential to the upstream, so it stays another here.
//
// A token is opaque and case-sensitive: only the blanks around it change.
// A value already canonical is returned as is, without allocating.
func Authorization(v string) string {
	var buf [256]byte
	b := AppendAuthorization(buf[:0], v)
	if string(b) == v {
		return v
	}
	return string(b)
}

// AppendAuthorization appends Authorization(v) to dst.
func AppendAuthorization(dst []byte, v string) []byte {
	rest := v
	scheme := nextField(&rest)
	switch {
	case strings.EqualFold(scheme, "Basic"):
		scheme = "Basic"
	case strings.EqualFold(scheme, "Bearer"):
		scheme = "Bearer"
	}
	dst = append(dst, scheme...)
	for w := nextField(&rest); w != ""; w = nextField(&rest) {
		dst = append(append(dst, ' '), w...)
	}
	return dst
}

// nextField returns the next run of non-blanks of *s and advances *s past
// it; "" when only blanks are left.
func nextField(s *string) string {
	str := strings.TrimLeftFunc(*s, isBlank)
	end := strings.IndexFunc(str, isBlank)
	if end < 0 {
		end = len(str)
	}
	*s = str[end:]
	return str[:end]
}

// isBlank reports whether r separates words of a header value: space, tab
// (HTTP's blanks) or a non-ASCII Unicode space. Line breaks and other
// control characters are not blanks: a value carrying them is refused, not
// mended.
func isBlank(r rune) bool {
	return r == ' ' || r == '\t' || r > 0x7f && unicode.IsSpace(r)
}

// NetworkID returns the canonical spelling of a service-network-id header
// value: without the blanks around it and, when it is a uuid, in lower case.
func NetworkID(v string) string {
	t := strings.TrimFunc(v, isBlank)
	if !ids.IsUUID(t) {
		return t
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; 'A' <= c && c <= 'F' {
			return strings.ToLower(t)
		}
	}
	return t
}
