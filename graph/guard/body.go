package guard

import (
	"encoding/json"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// bodyMembers are the members of a request object DecodeBody reads, each
// the raw JSON value of its last occurrence (nil when absent), and whether
// an occurrence of a string member holds a number out of float64's range
// (encoding/json fails the whole decoding then).
type bodyMembers struct {
	query, operationName, documentID, variables, extensions []byte
	badNumber                                               bool
}

// scanBody reads the members of t, a request object, as json.Unmarshal into
// rawBody reads them, without reflection: false when t is not valid JSON.
// A member's name matches as encoding/json matches a field's, ignoring case
// (foldName); the last occurrence of a member wins.
func scanBody(t []byte) (bodyMembers, bool) {
	var m bodyMembers
	if !json.Valid(t) {
		return m, false
	}
	i := skipSpace(t, 1)
	for i < len(t) && t[i] != '}' {
		end := stringEnd(t, i)
		key := t[i:end]
		i = skipSpace(t, skipSpace(t, end)+1) // past ':'
		vend := valueEnd(t, i)
		val := t[i:vend]
		switch dst, isString := m.member(key); {
		case dst == nil:
		case isString && val[0] != '"' && val[0] != 'n' && !decodesAsAny(val):
			m.badNumber = true
			*dst = val
		default:
			*dst = val
		}
		i = skipSpace(t, vend)
		if i < len(t) && t[i] == ',' {
			i = skipSpace(t, i+1)
		}
	}
	return m, true
}

// member returns where the value of the member named by key (a JSON string)
// goes, and whether it is one of the string members; nil for a member
// DecodeBody ignores.
func (m *bodyMembers) member(key []byte) (*[]byte, bool) {
	name, _ := unquote(key)
	var folded [16]byte
	f := foldName(folded[:0], name)
	switch string(f) {
	case "QUERY":
		return &m.query, true
	case "OPERATIONNAME":
		return &m.operationName, true
	case "DOCUMENTID":
		return &m.documentID, true
	case "VARIABLES":
		return &m.variables, false
	case "EXTENSIONS":
		return &m.extensions, false
	}
	return nil, false
}

// decodesAsAny reports whether val, valid JSON, decodes into an any: false
// when it holds a number float64 cannot hold.
func decodesAsAny(val []byte) bool {
	var v any
	return json.Unmarshal(val, &v) == nil
}

// foldName appends to out the name in encoding/json's folded form (its
// foldName: ASCII letters upper-cased, any other rune as the least rune of
// its unicode.SimpleFold orbit); two names match when their folded forms are
// equal.
func foldName(out, in []byte) []byte {
	for i := 0; i < len(in); {
		if c := in[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(in[i:])
		out = utf8.AppendRune(out, foldRune(r))
		i += n
	}
	return out
}

// foldRune returns the least rune of r's unicode.SimpleFold orbit.
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// skipSpace returns the index of the first byte of t at or after i that is
// not JSON white space.
func skipSpace(t []byte, i int) int {
	for i < len(t) && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n') {
		i++
	}
	return i
}

// stringEnd returns the index just past the JSON string starting at t[i]
// (t valid JSON).
func stringEnd(t []byte, i int) int {
	for i++; i < len(t); i++ {
		switch t[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// valueEnd returns the index just past the JSON value starting at t[i] (t
// valid JSON).
func valueEnd(t []byte, i int) int {
	switch t[i] {
	case '"':
		return stringEnd(t, i)
	case '{', '[':
		depth := 0
		for ; i < len(t); i++ {
			switch t[i] {
			case '"':
				i = stringEnd(t, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(t) && t[i] != ',' && t[i] != '}' && t[i] != ']' && t[i] != ' ' && t[i] != '\t' && t[i] != '\r' && t[i] != '\n' {
		i++
	}
	return i
}

// unquote decodes the JSON string s (with its quotes) as encoding/json
// does: escapes resolved, an invalid surrogate or invalid UTF-8 byte
// replaced by U+FFFD. Without escapes or invalid UTF-8 it returns s's own
// bytes.
func unquote(s []byte) ([]byte, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return nil, false
	}
	s = s[1 : len(s)-1]
	r := 0
	for r < len(s) {
		c := s[r]
		if c == '\\' || c == '"' || c < ' ' {
			break
		}
		if c < utf8.RuneSelf {
			r++
			continue
		}
		rr, size := utf8.DecodeRune(s[r:])
		if rr == utf8.RuneError && size == 1 {
			break
		}
		r += size
	}
	if r == len(s) {
		return s, true
	}
	b := make([]byte, r, len(s)+2*utf8.UTFMax)
	copy(b, s[:r])
	for r < len(s) {
		switch c := s[r]; {
		case c == '\\':
			var ok bool
			if b, r, ok = unescape(b, s, r); !ok {
				return nil, false
			}
		case c == '"', c < ' ':
			return nil, false
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return b, true
}

// unescape appends the escape at s[r] (a backslash) to b and returns the
// index past it.
func unescape(b, s []byte, r int) ([]byte, int, bool) {
	if r+1 >= len(s) {
		return b, r, false
	}
	switch c := s[r+1]; c {
	case '"', '\\', '/', '\'':
		return append(b, c), r + 2, true
	case 'b':
		return append(b, '\b'), r + 2, true
	case 'f':
		return append(b, '\f'), r + 2, true
	case 'n':
		return append(b, '\n'), r + 2, true
	case 'r':
		return append(b, '\r'), r + 2, true
	case 't':
		return append(b, '\t'), r + 2, true
	case 'u':
		rr := getu4(s[r:])
		if rr < 0 {
			return b, r, false
		}
		r += 6
		if utf16.IsSurrogate(rr) {
			if dec := utf16.DecodeRune(rr, getu4(s[r:])); dec != unicode.ReplacementChar {
				return utf8.AppendRune(b, dec), r + 6, true
			}
			rr = unicode.ReplacementChar
		}
		return utf8.AppendRune(b, rr), r, true
	}
	return b, r, false
}

// getu4 decodes \uXXXX from the beginning of s, returning the hex value, or
// -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
