package scalars

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/restclient"
)

// The schema's enums whose values come from the upstream (the closed sets
// the spec lists in full: a transaction's status and type, an order's
// status) are bound in gqlgen.yml to the functions below rather than to
// gqlgen's value maps, which write a value they lack as "". A value of
// the upstream that its enum lacks (the day the upstream adds one) is
// written as null with an UPSTREAM_INVALID error on the field's path,
// extensions.value holding the value received; the rest of the record and
// of the page arrive. Every output field of these enums must therefore be
// nullable (graph/schema_test.go checks), so that the null stays on the
// field instead of taking its parent with it.
//
// Each GraphQL value is the REST value in UPPER_SNAKE_CASE (inProgress ->
// IN_PROGRESS); graph/schema_test.go checks that every enum lists exactly
// the values below.

var (
	transactionStatus = newUpstreamEnum("TransactionStatus",
		restclient.TransactionStatusCanceled, restclient.TransactionStatusFailed, restclient.TransactionStatusPending,
		restclient.TransactionStatusProcessing, restclient.TransactionStatusSucceeded)
	transactionType = newUpstreamEnum("TransactionType",
		restclient.TransactionTypeBooking, restclient.TransactionTypeCreditPackage, restclient.TransactionTypeEventTicket,
		restclient.TransactionTypeInvoice, restclient.TransactionTypeOrder, restclient.TransactionTypeSubscription)
	orderStatus = newUpstreamEnum("OrderStatus",
		restclient.OrderStatusNew, restclient.OrderStatusInProgress, restclient.OrderStatusCompleted, restclient.OrderStatusCanceled)
)

// MarshalTransactionStatus writes s as its TransactionStatus value.
func MarshalTransactionStatus(s restclient.TransactionStatus) graphql.ContextMarshaler {
	return transactionStatus.marshal(s)
}

// UnmarshalTransactionStatus reads a TransactionStatus argument.
func UnmarshalTransactionStatus(_ context.Context, v any) (restclient.TransactionStatus, error) {
	return transactionStatus.unmarshal(v)
}

// MarshalTransactionType writes t as its TransactionType value.
func MarshalTransactionType(t restclient.TransactionType) graphql.ContextMarshaler {
	return transactionType.marshal(t)
}

// UnmarshalTransactionType reads a TransactionType argument.
func UnmarshalTransactionType(_ context.Context, v any) (restclient.TransactionType, error) {
	return transactionType.unmarshal(v)
}

// MarshalOrderStatus writes s as its OrderStatus value.
func MarshalOrderStatus(s restclient.OrderStatus) graphql.ContextMarshaler {
	return orderStatus.marshal(s)
}

// UnmarshalOrderStatus reads an OrderStatus argument.
func UnmarshalOrderStatus(_ context.Context, v any) (restclient.OrderStatus, error) {
	return orderStatus.unmarshal(v)
}

// UpstreamEnums returns, for each enum bound to the upstream's values, its
// GraphQL values mapped to the REST values they stand for (the schema
// test's view of the bindings).
func UpstreamEnums() map[string]map[string]string {
	return map[string]map[string]string{
		transactionStatus.name: transactionStatus.names(),
		transactionType.name:   transactionType.names(),
		orderStatus.name:       orderStatus.names(),
	}
}

// upstreamEnum maps the REST values of one enum to and from its GraphQL
// values.
type upstreamEnum[T ~string] struct {
	name string                // the GraphQL enum
	in   map[string]T          // GraphQL value -> REST value
	out  map[T]*enumValueMarsh // REST value -> the writer of its GraphQL value
}

func newUpstreamEnum[T ~string](name string, values ...T) *upstreamEnum[T] {
	e := &upstreamEnum[T]{name: name, in: map[string]T{}, out: map[T]*enumValueMarsh{}}
	for _, v := range values {
		gql := upperSnake(string(v))
		e.in[gql] = v
		e.out[v] = &enumValueMarsh{quoted: strconv.Quote(gql)}
	}
	return e
}

func (e *upstreamEnum[T]) names() map[string]string {
	m := make(map[string]string, len(e.in))
	for g, v := range e.in {
		m[g] = string(v)
	}
	return m
}

// marshal returns the writer of v's GraphQL value, or, for a value the enum
// lacks, a marshaller that fails with UPSTREAM_INVALID (gqlgen then writes
// null and adds the error on the field's path). A known value allocates
// nothing.
func (e *upstreamEnum[T]) marshal(v T) graphql.ContextMarshaler {
	if m, ok := e.out[v]; ok {
		return m
	}
	return unknownEnumValue{err: unknownValueError(e.name, string(v))}
}

func (e *upstreamEnum[T]) unmarshal(v any) (T, error) {
	s, ok := v.(string)
	if val, known := e.in[s]; ok && known {
		return val, nil
	}
	// The validator refuses an unknown value before any resolver runs; this
	// is a guard.
	return "", badInput("%s must be one of its values, got %s", e.name, describe(v))
}

// enumValueMarsh writes one GraphQL enum value, already quoted.
type enumValueMarsh struct{ quoted string }

func (m *enumValueMarsh) MarshalGQLContext(_ context.Context, w io.Writer) error {
	_, err := io.WriteString(w, m.quoted)
	return err
}

// unknownEnumValue is the marshaller of an upstream value its enum lacks.
type unknownEnumValue struct{ err error }

func (u unknownEnumValue) MarshalGQLContext(context.Context, io.Writer) error { return u.err }

// maxShownValue bounds the bytes of an upstream value an error shows.
const maxShownValue = 64

// unknownValueError is the UPSTREAM_INVALID error of value, which enum
// lacks; extensions.value is the value (its first 64 bytes).
func unknownValueError(enum, value string) error {
	shown := value
	if len(shown) > maxShownValue {
		cut := maxShownValue
		for cut > 0 && !utf8.RuneStart(value[cut]) {
			cut--
		}
		shown = value[:cut]
	}
	return &gqlerr.Coded{
		Code:    errcode.UpstreamInvalid,
		Message: fmt.Sprintf("the upstream sent %q, which is not a value of %s", shown, enum),
		Ext:     map[string]any{"value": shown},
	}
}

// upperSnake writes a camelCase REST value in UPPER_SNAKE_CASE:
// creditPackage -> CREDIT_PACKAGE.
func upperSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}
