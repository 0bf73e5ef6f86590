// Package scalars holds the marshallers of the schema's custom scalars, bound
// in gqlgen.yml: DateTime <-> restclient.Timestamp and JSON <-> json.RawMessage.
package scalars

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
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

// errUnreadableDateTime is the error of a DateTime field whose upstream
// value is not a timestamp. It never shows the value.
var errUnreadableDateTime = &gqlerr.Coded{Code: errcode.UpstreamInvalid, Message: "the upstream sent a value that is not an ISO 8601 timestamp"}

// MarshalDateTime writes t as an RFC 3339 string in UTC, with fractional
// seconds only when set. The zero Timestamp (an upstream "" or an unset value)
// is written as null. A Timestamp the upstream sent unreadable (t.Err) is
// written as null with an UPSTREAM_INVALID error on the field's path, so the
// rest of the record and of the page arrive; every output DateTime field
// must therefore be nullable (graph/schema_test.go checks).
func MarshalDateTime(t restclient.Timestamp) graphql.ContextMarshaler {
	return dateTime(t)
}

// dateTime is the ContextMarshaler of a DateTime value.
type dateTime restclient.Timestamp

func (t dateTime) MarshalGQLContext(_ context.Context, w io.Writer) error {
	ts := restclient.Timestamp(t)
	if ts.Err() != nil {
		return errUnreadableDateTime // gqlgen adds it on the field's path and writes null
	}
	return writeDateTime(w, &ts)
}

// writeDateTime writes *t, which must be readable (t.Err() nil): null for
// the zero Timestamp, else the RFC 3339 string in UTC. It allocates nothing
// when w is a *bytes.Buffer (gqlgen's executor writes into one).
func writeDateTime(w io.Writer, t *restclient.Timestamp) error {
	if t.IsZero() {
		_, err := io.WriteString(w, "null")
		return err
	}
	// Formatted into a buffer on the stack: RFC 3339 text has nothing to
	// escape. A *bytes.Buffer keeps nothing of it; another writer gets a
	// copy.
	var buf [48]byte
	b := append(buf[:0], '"')
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if bb, ok := w.(*bytes.Buffer); ok {
		_, err := bb.Write(b)
		return err
	}
	_, err := w.Write(append([]byte(nil), b...))
	return err
}

// UnmarshalDateTime reads an RFC 3339 string (any offset, fractional seconds
// optional) and returns it in UTC. Input stays strict RFC 3339: only the
// upstream's values are read leniently (restclient.Timestamp).
func UnmarshalDateTime(_ context.Context, v any) (restclient.Timestamp, error) {
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

// MarshalInt writes i; Int is bound here (gqlgen.yml) for its input coercion.
func MarshalInt(i int) graphql.Marshaler { return graphql.MarshalInt(i) }

// UnmarshalInt coerces an Int input as the GraphQL spec defines it: a
// whole number within 32 bits. Unlike gqlgen's graphql.UnmarshalInt it
// refuses strings ("500"), booleans and fractions (BAD_USER_INPUT), so the
// value a resolver uses is the value the cost limit measured.
func UnmarshalInt(v any) (int, error) {
	n, ok := IntValue(v)
	if !ok {
		return 0, badInput("Int must be a whole number between %d and %d, got %s", math.MinInt32, math.MaxInt32, describe(v))
	}
	return n, nil
}

// IntValue converts the forms an Int input value takes (a literal's int64,
// a variable's json.Number, int64 or float64, an int from Go) to int; it
// reports false for anything the spec's Int coercion refuses.
func IntValue(v any) (int, bool) {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int32:
		n = int64(x)
	case int64:
		n = x
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return 0, false
		}
		n = i
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) || x < math.MinInt32 || x > math.MaxInt32 {
			return 0, false
		}
		n = int64(x)
	default:
		return 0, false
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, false
	}
	return int(n), true
}

// describe names an input value's kind for an error message, quoting at most
// 40 bytes of a string.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %.40q", x)
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	case json.Number:
		return string(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int, int32, int64:
		return fmt.Sprint(x)
	}
	return fmt.Sprintf("a %T", v)
}
