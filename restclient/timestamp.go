package restclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"
)

// Timestamp is an instant as the API sends it: ISO 8601, in UTC
// ("2021-05-21T10:00:00Z"). Decoding is lenient about the ISO 8601 forms
// (parseISO8601): a date alone ("2021-05-21", midnight UTC), no zone (UTC,
// as the spec says timestamps are UTC), "Z", "+00:00", "+0000" or "+00",
// fractional seconds of any length, a lower-case "t" or "z".
//
// A value that is still unreadable (another string, a number, an object)
// does not fail the decoding of the record that holds it: the Timestamp is
// zero, Err reports it, and MarshalJSON writes the value back as received.
// So one bad field loses that field, not the page. An empty string decodes
// to the zero Timestamp, and JSON null leaves a *Timestamp nil.
//
// It encodes in UTC (RFC 3339), with fractional seconds only when set.
// Compare instants with Equal: a Timestamp also remembers an unreadable
// value.
type Timestamp struct {
	time.Time
	// bad is an unreadable value's JSON text, as received ("" otherwise).
	bad string
}

// ErrUnreadableTimestamp is Timestamp.Err of a value the upstream sent that
// is not an ISO 8601 timestamp. Its text never includes the value (an
// upstream may echo anything there, credentials included).
var ErrUnreadableTimestamp = errors.New("restclient: the upstream sent a timestamp that is not ISO 8601")

// NewTimestamp returns a *Timestamp for t.
func NewTimestamp(t time.Time) *Timestamp { return &Timestamp{Time: t} }

// Err is ErrUnreadableTimestamp when t was decoded from a value that is not
// an ISO 8601 timestamp (Time is then zero), else nil.
func (t Timestamp) Err() error {
	if t.bad != "" {
		return ErrUnreadableTimestamp
	}
	return nil
}

// MarshalJSON encodes t as an RFC 3339 string in UTC; the zero Timestamp
// encodes as null, an unreadable one as the value it was decoded from.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	if t.bad != "" {
		return []byte(t.bad), nil
	}
	if t.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + t.UTC().Format(time.RFC3339Nano) + `"`), nil
}

// UnmarshalJSON reads an ISO 8601 string (JSON escapes included), "" or
// null. It never fails: any other value is kept as unreadable (see Err).
// The usual value, a quoted string without escapes, is parsed from b as is,
// without allocating.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	if n := len(b); n >= 2 && b[0] == '"' && b[n-1] == '"' && bytes.IndexByte(b, '\\') < 0 {
		t.set(b[1:n-1], b)
		return nil
	}
	if bytes.Equal(b, []byte("null")) {
		*t = Timestamp{}
		return nil
	}
	var s string
	if json.Unmarshal(b, &s) != nil {
		*t = Timestamp{bad: string(b)} // a number, an object, ...
		return nil
	}
	t.set([]byte(s), b)
	return nil
}

// UnmarshalText is UnmarshalJSON for the text of a string (its unquoted
// value), for decoders that use encoding.TextUnmarshaler.
func (t *Timestamp) UnmarshalText(text []byte) error {
	t.set(text, nil)
	return nil
}

// set makes t the instant s names, zero for "", or unreadable with the JSON
// text raw (nil: s quoted).
func (t *Timestamp) set(s, raw []byte) {
	if len(s) == 0 {
		*t = Timestamp{}
		return
	}
	v, ok := parseISO8601(s)
	if !ok {
		if raw == nil {
			raw, _ = json.Marshal(string(s))
		}
		*t = Timestamp{bad: string(raw)}
		return
	}
	*t = Timestamp{Time: v}
}

// String formats t as RFC 3339 in UTC ("" for the zero or an unreadable
// Timestamp).
func (t Timestamp) String() string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// parseISO8601 reads the ISO 8601 calendar date-times the API may send, in
// the extended format, and returns the instant in UTC:
//
//	YYYY-MM-DD                                   midnight UTC
//	YYYY-MM-DD(T|t| )hh:mm[:ss[(.|,)f...]][zone]  f: any number of digits (nanoseconds kept)
//	zone: Z | z | ±hh:mm | ±hhmm | ±hh           absent: UTC
//
// Surrounding spaces are ignored. Anything else, or an impossible date or
// time (2021-02-30, 25:00), is not ok.
func parseISO8601[S ~string | ~[]byte](s S) (time.Time, bool) {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	p := iso[S]{s: s, ok: true}
	year := p.num(4)
	month := p.skip('-').num(2)
	day := p.skip('-').num(2)
	if !p.ok {
		return time.Time{}, false
	}
	var hour, minute, sec, nsec, offset int
	if !p.done() {
		if c := p.next(); c != 'T' && c != 't' && c != ' ' {
			return time.Time{}, false
		}
		hour = p.num(2)
		minute = p.skip(':').num(2)
		if p.peek() == ':' {
			sec = p.skip(':').num(2)
			if c := p.peek(); c == '.' || c == ',' {
				p.next()
				nsec = p.fraction()
			}
		}
		offset = p.zone()
	}
	if !p.ok || !p.done() || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	v := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	if v.Day() != day { // February 30th and the like
		return time.Time{}, false
	}
	return v.Add(-time.Duration(offset) * time.Second), true
}

// iso is a cursor over the text parseISO8601 reads; any mismatch clears ok
// and the remaining reads return zeros.
type iso[S ~string | ~[]byte] struct {
	s  S
	i  int
	ok bool
}

func (p *iso[S]) done() bool { return p.i == len(p.s) }

func (p *iso[S]) peek() byte {
	if !p.ok || p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *iso[S]) next() byte {
	c := p.peek()
	if c == 0 {
		p.ok = false
		return 0
	}
	p.i++
	return c
}

// skip consumes c, or fails.
func (p *iso[S]) skip(c byte) *iso[S] {
	if p.next() != c {
		p.ok = false
	}
	return p
}

// num reads exactly n decimal digits.
func (p *iso[S]) num(n int) int {
	v := 0
	for range n {
		c := p.next()
		if c < '0' || c > '9' {
			p.ok = false
			return 0
		}
		v = v*10 + int(c-'0')
	}
	return v
}

// fraction reads one or more digits of a fraction of a second, as
// nanoseconds (digits past the ninth are read and dropped).
func (p *iso[S]) fraction() int {
	v, n := 0, 0
	for c := p.peek(); c >= '0' && c <= '9'; c = p.peek() {
		p.i++
		if n < 9 {
			v = v*10 + int(c-'0')
		}
		n++
	}
	if n == 0 {
		p.ok = false
	}
	for ; n < 9; n++ {
		v *= 10
	}
	return v
}

// zone reads an optional zone designator and returns its offset east of
// UTC in seconds (0 when absent).
func (p *iso[S]) zone() int {
	switch c := p.peek(); c {
	case 0:
		return 0
	case 'Z', 'z':
		p.i++
		return 0
	case '+', '-':
		p.i++
		h, m := p.num(2), 0
		if p.peek() == ':' {
			m = p.skip(':').num(2)
		} else if !p.done() {
			m = p.num(2)
		}
		if h > 23 || m > 59 {
			p.ok = false
		}
		if c == '-' {
			return -(h*3600 + m*60)
		}
		return h*3600 + m*60
	}
	p.ok = false
	return 0
}
