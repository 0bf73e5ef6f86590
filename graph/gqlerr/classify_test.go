package gqlerr_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/internal/policy/calls"
	"github.com/workspacenet/facade/restclient"
)

func TestHardeningCodes(t *testing.T) {
	open := &restclient.CircuitOpenError{Method: "GET", Route: restclient.OpGetResource.Route}
	cases := []struct {
		err  error
		code string
	}{
		{open, errcode.UpstreamUnavailable},
		{fmt.Errorf("loading: %w", open), errcode.UpstreamUnavailable},
		{fmt.Errorf("x: %w", restclient.ErrCircuitOpen), errcode.UpstreamUnavailable},
		{&calls.LimitError{Max: 3}, errcode.RequestLimitExceeded},
	}
	for _, tc := range cases {
		if got := gqlerr.Code(tc.err); got != tc.code {
			t.Errorf("Code(%v) = %s, want %s", tc.err, got, tc.code)
		}
	}
	e := gqlerr.Presenter(slog.New(slog.DiscardHandler))(context.Background(), open)
	up, _ := e.Extensions["upstream"].(map[string]any)
	if up["path"] != restclient.OpGetResource.Route || e.Extensions["code"] != errcode.UpstreamUnavailable {
		t.Errorf("presented circuit-open error: %+v", e.Extensions)
	}
}

func TestCollectorCapsCalls(t *testing.T) {
	before := (&calls.Collector{Max: 2}).Hooks().Before
	for i := range 2 {
		if err := before(context.Background(), restclient.CallStart{}); err != nil {
			t.Fatalf("call %d refused: %v", i, err)
		}
	}
	if err := before(context.Background(), restclient.CallStart{}); gqlerr.Code(err) != errcode.RequestLimitExceeded {
		t.Fatalf("third call: %v", err)
	}
	if err := (&calls.Collector{}).Hooks().Before(context.Background(), restclient.CallStart{}); err != nil {
		t.Fatalf("no cap: %v", err)
	}
}

// TestUnknownEnumValue: a value the spec's closed enumeration lacks is
// UPSTREAM_INVALID naming the enum, with extensions.value the value (its
// first 64 bytes, whole runes).
func TestUnknownEnumValue(t *testing.T) {
	present := gqlerr.Presenter(slog.New(slog.DiscardHandler))
	e := present(context.Background(), &restclient.UnknownValueError{Enum: "OrderStatus", Value: "onHold"})
	if e.Extensions["code"] != errcode.UpstreamInvalid || e.Extensions["value"] != "onHold" ||
		e.Message != `the upstream sent "onHold", which is not a value of OrderStatus` {
		t.Fatalf("presented: %q %+v", e.Message, e.Extensions)
	}
	long := strings.Repeat("é", 40) // 80 bytes
	e = present(context.Background(), fmt.Errorf("x: %w", &restclient.UnknownValueError{Enum: "TransactionType", Value: long}))
	if v, _ := e.Extensions["value"].(string); v != strings.Repeat("é", 32) || strings.Contains(e.Message, long) {
		t.Fatalf("a long value: %q %+v", e.Message, e.Extensions)
	}
}
