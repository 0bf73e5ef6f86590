package restclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"
)

// Timestamp is an RFC 3339 UTC instant as the API sends it
// ("2021-05-21T10:00:00Z"). It decodes RFC 3339 with or without fractional
// seconds; an empty string decodes to the zero Timestamp, and JSON null leaves
// a *Timestamp nil. It encodes in UTC, with fractional seconds only when set.
type Timestamp struct {
	time.Time
}

// NewTimestamp returns a *Timestamp for t.
func NewTimestamp(t time.Time) *Timestamp { return &Timestamp{t} }

// MarshalJSON encodes t as an RFC 3339 string in UTC; the zero Timestamp
// encodes as null.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + t.UTC().Format(time.RFC3339Nano) + `"`), nil
}

// UnmarshalJSON accepts an RFC 3339 string (JSON escapes included), "" or null.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*t = Timestamp{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("restclient: timestamp must be a JSON string")
	}
	if s == "" {
		*t = Timestamp{}
		return nil
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return errors.New("restclient: timestamp is not RFC 3339")
	}
	*t = Timestamp{v.UTC()}
	return nil
}

// String formats t as RFC 3339 in UTC ("" for the zero Timestamp).
func (t Timestamp) String() string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
