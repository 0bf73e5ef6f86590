package wire

import (
	"bytes"
	"time"
)

// Timestamp is a date-time of the API: RFC 3339 on the wire, in UTC with
// fractional seconds only when set; JSON null or "" decode to the zero
// Timestamp, which encodes as null. The service checks request bodies'
// timestamps itself (strictTimestamps) before decoding them.
type Timestamp struct{ time.Time }

// NewTimestamp returns a *Timestamp for t.
func NewTimestamp(t time.Time) *Timestamp { return &Timestamp{Time: t} }

// MarshalJSON encodes t as an RFC 3339 string in UTC, the zero Timestamp as
// null.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + t.UTC().Format(time.RFC3339Nano) + `"`), nil
}

// UnmarshalJSON reads an RFC 3339 string, "" or null.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) || bytes.Equal(b, []byte(`""`)) {
		*t = Timestamp{}
		return nil
	}
	return t.Time.UnmarshalJSON(b)
}
