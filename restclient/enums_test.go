package restclient

import (
	"errors"
	"testing"
)

// TestClosedEnumerations: every value the spec lists is known and handed
// out; an absent value is nil without error; any other value (a later
// API's, a spelling of another) is an *UnknownValueError naming the enum
// and the value.
func TestClosedEnumerations(t *testing.T) {
	for _, s := range []TransactionStatus{TransactionStatusCanceled, TransactionStatusFailed, TransactionStatusPending, TransactionStatusProcessing, TransactionStatusSucceeded} {
		if got, err := (&Transaction{Status: &s}).ValidStatus(); err != nil || *got != s {
			t.Errorf("status %q: %v %v", s, got, err)
		}
	}
	for _, ty := range []TransactionType{TransactionTypeBooking, TransactionTypeCreditPackage, TransactionTypeEventTicket, TransactionTypeInvoice, TransactionTypeOrder, TransactionTypeSubscription} {
		if got, err := (&Transaction{Type: &ty}).ValidType(); err != nil || *got != ty {
			t.Errorf("type %q: %v %v", ty, got, err)
		}
	}
	for _, s := range []OrderStatus{OrderStatusNew, OrderStatusInProgress, OrderStatusCompleted, OrderStatusCanceled} {
		if got, err := (&Order{Status: &s}).ValidStatus(); err != nil || *got != s {
			t.Errorf("order status %q: %v %v", s, got, err)
		}
	}
	if s, err := (&Order{}).ValidStatus(); s != nil || err != nil {
		t.Errorf("absent status: %v %v", s, err)
	}
	if s, err := (&Transaction{}).ValidType(); s != nil || err != nil {
		t.Errorf("absent type: %v %v", s, err)
	}

	unknown := func(what string, handedOut bool, err error, enum, value string) {
		t.Helper()
		var ue *UnknownValueError
		if !errors.As(err, &ue) || ue.Enum != enum || ue.Value != value || handedOut {
			t.Errorf("%s: handed out %v, %v; want nil and an UnknownValueError of %s %q", what, handedOut, err, enum, value)
		}
	}
	onHold, inProgress, empty := OrderStatus("onHold"), OrderStatus("in_progress"), OrderStatus("")
	for _, s := range []*OrderStatus{&onHold, &inProgress, &empty} {
		got, err := (&Order{Status: s}).ValidStatus()
		unknown("order status", got != nil, err, "OrderStatus", string(*s))
	}
	refunded, gift := TransactionStatus("refunded"), TransactionType("giftCard")
	got, err := (&Transaction{Status: &refunded}).ValidStatus()
	unknown("transaction status", got != nil, err, "TransactionStatus", "refunded")
	gt, err := (&Transaction{Type: &gift}).ValidType()
	unknown("transaction type", gt != nil, err, "TransactionType", "giftCard")
	if msg := (&UnknownValueError{Enum: "OrderStatus", Value: "onHold"}).Error(); msg != `the upstream sent "onHold", which is not a value of OrderStatus` {
		t.Errorf("message %q", msg)
	}
}
