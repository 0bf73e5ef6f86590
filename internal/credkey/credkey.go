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
	"encoding/base64"
	"strings"
	"unicode"

	"github.com/workspacenet/facade/internal/ids"
)

// Authorization returns the canonical spelling of an Authorization header
// value:
//   - blanks (space, tab and the non-ASCII Unicode spaces) around it
//     removed, and every run of blanks inside it replaced by one space;
//     other control characters stay, for the caller to refuse;
//   - the schemes Basic and Bearer spelled so, whatever the case given
//     (other schemes keep their spelling);
//   - a Basic credential base64-decoded, with or without padding, in the
//     standard or the URL alphabet, and encoded again in standard base64
//     with padding (kept as given when it does not decode as one value).
//
// A Bearer token is opaque and case-sensitive: only the blanks around it
// change. A value already canonical is returned as is, without allocating.
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
		// A Basic credential is one base64 word.
		after := rest
		if cred := nextField(&after); cred != "" && nextField(&after) == "" {
			if out, ok := appendBasic(append(dst, scheme...), cred); ok {
				return out
			}
		}
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

// encodings are the base64 spellings a Basic credential is read in, the
// canonical one first.
var encodings = [...]*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding}

// appendBasic appends " " and the canonical encoding of cred, a Basic
// credential, to dst; false when cred decodes in none of the encodings.
func appendBasic(dst []byte, cred string) ([]byte, bool) {
	// Both buffers stay on the stack for credentials of usual length.
	var srcBuf [256]byte
	var decBuf [192]byte
	src := append(srcBuf[:0], cred...)
	dec := decBuf[:]
	if n := base64.RawStdEncoding.DecodedLen(len(src)) + 3; n > len(dec) {
		dec = make([]byte, n)
	}
	for _, enc := range encodings {
		if n, err := enc.Decode(dec, src); err == nil && n > 0 {
			dst = append(dst, ' ')
			return base64.StdEncoding.AppendEncode(dst, dec[:n]), true
		}
	}
	return dst, false
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
