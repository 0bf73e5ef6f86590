// Package leaf writes the values of plain leaf fields for the generated
// executor, without gqlgen's per-field machinery.
//
// gqlgen resolves every field through graphql.ResolveField: a FieldContext,
// a context value, closures, the field-middleware chain, a deferred recover,
// and a Marshaler that is itself a closure. For a field that only reads a
// struct field of a scalar or enum type none of that is needed when no field
// interceptor runs. The generator (graph/internal/gqlgen) makes such a field's
// function return one of the Marshalers below first, when the operation
// allows it (Enabled) and the value is one it writes exactly as gqlgen would.
//
// Each function takes a pointer to the value (a struct field's address, or
// the field itself when it is a pointer) and returns:
//   - graphql.Null when the pointer is nil, as gqlgen's nullable marshalers;
//   - nil when the value must take gqlgen's path, which reports an error on
//     the field's path (a non-finite Float, an unreadable DateTime): the
//     generated code then calls the original field function;
//   - else a Marshaler that is the pointer itself, converted: converting a
//     pointer to an interface allocates nothing.
//
// A non-null field's generated code also falls back when the result is
// graphql.Null, so gqlgen reports the null and nulls the parent as before.
// The values must not change until the response is written (they are the
// decoded upstream records, which nothing writes to).
package leaf

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"

	"github.com/99designs/gqlgen/graphql"

	"github.com/workspacenet/facade/graph/scalars"
	"github.com/workspacenet/facade/restclient"
)

// Root is implemented by a resolver root that allows the fast path.
type Root interface {
	// PlainFields reports whether plain leaf fields may be written without
	// graphql.ResolveField: false when the handler has a field interceptor
	// (graphql.FieldInterceptor), which must see every field.
	PlainFields() bool
}

// Enabled reports whether the generated executor may use its fast paths
// (this package's for leaf fields, and those of other struct fields and of
// resolver fields, graph/internal/gqlgen) for the resolver root r: only when
// r says so (Root), so that an executor built with another root, and maybe
// a field interceptor, resolves every field as gqlgen does.
func Enabled(r any) bool {
	p, ok := r.(Root)
	return ok && p.PlainFields()
}

// String returns the Marshaler of a String or ID value: gqlgen's
// MarshalString.
func String(p *string) graphql.Marshaler {
	if p == nil {
		return graphql.Null
	}
	return (*str)(p)
}

// Const returns the Marshaler of the String s, made once (an object's
// __typename).
func Const(s string) graphql.Marshaler { return String(&s) }

type str string

func (s *str) MarshalGQL(w io.Writer) { WriteString(w, string(*s)) }

// WriteString writes s quoted as gqlgen's MarshalString does: only '"', '\\'
// and the bytes below 0x20 are escaped (\t, \r, \n, else \u00XX); anything
// else, invalid UTF-8 included, is written as it is.
func WriteString(w io.Writer, s string) {
	if bb, ok := w.(*bytes.Buffer); ok {
		bb.Grow(len(s) + 2)
		bb.WriteByte('"')
		start := 0
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c >= 0x20 && c != '\\' && c != '"' {
				continue
			}
			bb.WriteString(s[start:i])
			writeEscape(bb, c)
			start = i + 1
		}
		bb.WriteString(s[start:])
		bb.WriteByte('"')
		return
	}
	var b bytes.Buffer
	WriteString(&b, s)
	_, _ = w.Write(b.Bytes())
}

const hex = "0123456789ABCDEF"

func writeEscape(bb *bytes.Buffer, c byte) {
	switch c {
	case '\t':
		bb.WriteString(`\t`)
	case '\r':
		bb.WriteString(`\r`)
	case '\n':
		bb.WriteString(`\n`)
	case '\\':
		bb.WriteString(`\\`)
	case '"':
		bb.WriteString(`\"`)
	default:
		bb.WriteString(`\u00`)
		bb.WriteByte(hex[c>>4])
		bb.WriteByte(hex[c&0xf])
	}
}

// Float returns the Marshaler of a Float value: gqlgen's
// MarshalFloatContext (%g); nil for NaN and ±Inf, which gqlgen reports as an
// error on the field's path.
func Float(p *float64) graphql.Marshaler {
	if p == nil {
		return graphql.Null
	}
	if math.IsInf(*p, 0) || math.IsNaN(*p) {
		return nil
	}
	return (*float)(p)
}

type float float64

// MarshalGQL writes the shortest representation in %g form: fmt's %g is
// strconv's 'g' with precision -1.
func (f *float) MarshalGQL(w io.Writer) {
	if bb, ok := w.(*bytes.Buffer); ok {
		bb.Write(strconv.AppendFloat(bb.AvailableBuffer(), float64(*f), 'g', -1, 64))
		return
	}
	_, _ = io.WriteString(w, strconv.FormatFloat(float64(*f), 'g', -1, 64))
}

// Int returns the Marshaler of an Int value: gqlgen's MarshalInt (which
// scalars.MarshalInt is).
func Int(p *int) graphql.Marshaler {
	if p == nil {
		return graphql.Null
	}
	return (*integer)(p)
}

type integer int

func (i *integer) MarshalGQL(w io.Writer) {
	if bb, ok := w.(*bytes.Buffer); ok {
		bb.Write(strconv.AppendInt(bb.AvailableBuffer(), int64(*i), 10))
		return
	}
	_, _ = io.WriteString(w, strconv.FormatInt(int64(*i), 10))
}

// Boolean returns the Marshaler of a Boolean value: gqlgen's
// MarshalBoolean.
func Boolean(p *bool) graphql.Marshaler {
	if p == nil {
		return graphql.Null
	}
	if *p {
		return trueLit
	}
	return falseLit
}

type lit string

func (l *lit) MarshalGQL(w io.Writer) { _, _ = io.WriteString(w, string(*l)) }

var (
	trueLit  = func() *lit { l := lit("true"); return &l }()
	falseLit = func() *lit { l := lit("false"); return &l }()
)

// DateTime returns the Marshaler of a DateTime value: scalars'
// MarshalDateTime (null for the zero Timestamp); nil for an unreadable one,
// which it reports as an error on the field's path.
func DateTime(p *restclient.Timestamp) graphql.Marshaler {
	if p == nil {
		return graphql.Null
	}
	if p.Err() != nil {
		return nil
	}
	return (*dateTime)(p)
}

type dateTime restclient.Timestamp

func (t *dateTime) MarshalGQL(w io.Writer) {
	_ = scalars.WriteDateTime(w, (*restclient.Timestamp)(t))
}

// JSON returns the Marshaler of a JSON value: scalars' MarshalJSON, which
// is graphql.Null for an empty, null or invalid value.
func JSON(p *json.RawMessage) graphql.Marshaler {
	if p == nil || len(*p) == 0 || string(*p) == "null" || !json.Valid(*p) {
		return graphql.Null
	}
	return (*raw)(p)
}

type raw json.RawMessage

func (r *raw) MarshalGQL(w io.Writer) { _, _ = w.Write(*r) }

// Enum writes the values of an enum type bound to a Go type T whose values
// gqlgen maps to their GraphQL names (gqlgen.yml enum_values).
type Enum[T comparable] struct {
	names   map[T]*str
	unknown str
}

// NewEnum returns the Enum of gqlgen's generated name map: a value missing
// from it is written "", as graphql.MarshalString(names[v]) writes it.
func NewEnum[T comparable](names map[T]string) *Enum[T] {
	e := &Enum[T]{names: make(map[T]*str, len(names))}
	for v, n := range names {
		s := str(n)
		e.names[v] = &s
	}
	return e
}

// Of returns the Marshaler of *p.
func (e *Enum[T]) Of(p *T) graphql.Marshaler {
	if p == nil {
		return graphql.Null
	}
	if s, ok := e.names[*p]; ok {
		return s
	}
	return &e.unknown
}
