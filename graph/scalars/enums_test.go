package scalars

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/restclient"
)

// TestUpstreamEnums: the REST values of each bound enum write their
// GraphQL value and read back from it; a value the enum lacks is the
// UPSTREAM_INVALID error with the value received (at most 64 bytes, whole
// runes), and writes nothing.
func TestUpstreamEnums(t *testing.T) {
	for rest, want := range map[restclient.OrderStatus]string{
		restclient.OrderStatusNew: `"NEW"`, restclient.OrderStatusInProgress: `"IN_PROGRESS"`,
		restclient.OrderStatusCompleted: `"COMPLETED"`, restclient.OrderStatusCanceled: `"CANCELED"`,
	} {
		if got := renderContext(t, MarshalOrderStatus(rest)); got != want {
			t.Errorf("OrderStatus %q = %s, want %s", rest, got, want)
		}
		if back, err := UnmarshalOrderStatus(t.Context(), strings.Trim(want, `"`)); err != nil || back != rest {
			t.Errorf("UnmarshalOrderStatus(%s) = %q, %v", want, back, err)
		}
	}
	if got := renderContext(t, MarshalTransactionType(restclient.TransactionTypeCreditPackage)); got != `"CREDIT_PACKAGE"` {
		t.Errorf("creditPackage = %s", got)
	}
	if got := renderContext(t, MarshalTransactionStatus(restclient.TransactionStatusSucceeded)); got != `"SUCCEEDED"` {
		t.Errorf("succeeded = %s", got)
	}

	long := strings.Repeat("é", 40) // 80 bytes
	for _, c := range []struct {
		err       error
		enum      string
		wantValue string
	}{
		{MarshalOrderStatus("onHold").MarshalGQLContext(t.Context(), &bytes.Buffer{}), "OrderStatus", "onHold"},
		{MarshalOrderStatus("").MarshalGQLContext(t.Context(), &bytes.Buffer{}), "OrderStatus", ""},
		{MarshalOrderStatus("IN_PROGRESS").MarshalGQLContext(t.Context(), &bytes.Buffer{}), "OrderStatus", "IN_PROGRESS"},
		{MarshalTransactionStatus("refunded").MarshalGQLContext(t.Context(), &bytes.Buffer{}), "TransactionStatus", "refunded"},
		{MarshalTransactionType(restclient.TransactionType(long)).MarshalGQLContext(t.Context(), &bytes.Buffer{}), "TransactionType", strings.Repeat("é", 32)},
	} {
		var coded *gqlerr.Coded
		if !errors.As(c.err, &coded) || coded.Code != errcode.UpstreamInvalid || coded.Ext["value"] != c.wantValue ||
			!strings.Contains(coded.Message, c.enum) || !utf8.ValidString(coded.Message) {
			t.Errorf("unknown %s value: %#v, want UPSTREAM_INVALID with value %q", c.enum, c.err, c.wantValue)
		}
	}
	var b bytes.Buffer
	if err := MarshalOrderStatus("onHold").MarshalGQLContext(t.Context(), &b); err == nil || b.Len() != 0 {
		t.Errorf("an unknown value wrote %q", b.String())
	}

	for _, bad := range []any{"ON_HOLD", "new", 3, nil} {
		if _, err := UnmarshalOrderStatus(t.Context(), bad); err == nil {
			t.Errorf("UnmarshalOrderStatus(%#v) accepted", bad)
		}
	}
}

// TestKnownEnumValuesAllocateNothing: writing a known value costs no
// allocation (the marshalling runs for every status of every page).
func TestKnownEnumValuesAllocateNothing(t *testing.T) {
	var b bytes.Buffer
	b.Grow(64)
	n := testing.AllocsPerRun(100, func() {
		b.Reset()
		_ = MarshalOrderStatus(restclient.OrderStatusInProgress).MarshalGQLContext(t.Context(), &b)
	})
	if n != 0 {
		t.Fatalf("%v allocations per known value", n)
	}
}
