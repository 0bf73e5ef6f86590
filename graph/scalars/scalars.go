// Package scalars holds the marshallers of the schema's custom scalars, bound
// in gqlgen.yml: DateTime <-> restclient.Timestamp and JSON <-> json.RawMessage.
package scalars

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/restclient"
)

// badInput is the BAD_USER_INPUT error of a malformed scalar value (the
// error sits on the argument's path).
func badInput(format string, args ...any) error {
	return &gqlerr.Coded{Code: errcode.BadUserInput, Message: fmt.Sprintf(format, args...)}
}

// MarshalDateTime writes t as an RFC 3339 string in UTC, with fractional
// seconds only when set. The zero Timestamp (an upstream "" or an unset value)
// is written as null.
func MarshalDateTime(t restclient.Timestamp) graphql.Marshaler {
	if t.IsZero() {
		return graphql.Null
	}
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(t.UTC().Format(time.RFC3339Nano)))
	})
}

// UnmarshalDateTime reads an RFC 3339 string (any offset, fractional seconds
// optional) and returns it in UTC.
func UnmarshalDateTime(v any) (restclient.Timestamp, error) {
	s, ok := v.(string)
	if !ok {
		return restclient.Timestamp{}, badInput("DateTime must be an RFC 3339 string such as 2021-05-21T10:00:00Z, got %T", v)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return restclient.Timestamp{}, badInput("DateTime must be an RFC 3339 string such as 2021-05-21T10:00:00Z, got %.40q", s)
	}
	return restclient.Timestamp{Time: t.UTC()}, nil
}

// MarshalJSON writes m as it is; an empty, null or invalid value is written as
// null.
func MarshalJSON(m json.RawMessage) graphql.Marshaler {
	if len(m) == 0 || string(m) == "null" || !json.Valid(m) {
		return graphql.Null
	}
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = w.Write(m)
	})
}

// UnmarshalJSON encodes any input value (object, list, scalar) as JSON.
func UnmarshalJSON(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, badInput("JSON value cannot be encoded: %v", err)
	}
	return b, nil
}
