package restclient

import "fmt"

// The spec's closed enumerations (a transaction's status and type, an
// order's status) list every value; a value outside them is one a later
// version of the API added. It is decoded as it came; the methods below
// hand it out only when the spec lists it, so that a reader (the GraphQL
// fields status and type) gets an *UnknownValueError for the one field
// instead of a value it cannot represent.

// UnknownValueError is a value of a closed enumeration (Enum, the Go type:
// "OrderStatus") that the upstream sent and the spec does not list.
type UnknownValueError struct {
	Enum, Value string
}

func (e *UnknownValueError) Error() string {
	return fmt.Sprintf("the upstream sent %q, which is not a value of %s", e.Value, e.Enum)
}

// Known reports whether s is a status the spec lists.
func (s TransactionStatus) Known() bool {
	switch s {
	case TransactionStatusCanceled, TransactionStatusFailed, TransactionStatusPending, TransactionStatusProcessing, TransactionStatusSucceeded:
		return true
	}
	return false
}

// Known reports whether t is a type the spec lists.
func (t TransactionType) Known() bool {
	switch t {
	case TransactionTypeBooking, TransactionTypeCreditPackage, TransactionTypeEventTicket, TransactionTypeInvoice, TransactionTypeOrder, TransactionTypeSubscription:
		return true
	}
	return false
}

// Known reports whether s is a status the spec lists.
func (s OrderStatus) Known() bool {
	switch s {
	case OrderStatusNew, OrderStatusInProgress, OrderStatusCompleted, OrderStatusCanceled:
		return true
	}
	return false
}

// known returns v when it is nil or known, else nil and its
// *UnknownValueError.
func known[T interface {
	~string
	Known() bool
}](v *T, enum string) (*T, error) {
	if v == nil || (*v).Known() {
		return v, nil
	}
	return nil, &UnknownValueError{Enum: enum, Value: string(*v)}
}

// ValidStatus returns the transaction's status (nil when absent), or an
// *UnknownValueError when the spec does not list it.
func (t *Transaction) ValidStatus() (*TransactionStatus, error) {
	return known(t.Status, "TransactionStatus")
}

// ValidType returns the transaction's type (nil when absent), or an
// *UnknownValueError when the spec does not list it.
func (t *Transaction) ValidType() (*TransactionType, error) {
	return known(t.Type, "TransactionType")
}

// ValidStatus returns the order's status (nil when absent), or an
// *UnknownValueError when the spec does not list it.
func (o *Order) ValidStatus() (*OrderStatus, error) {
	return known(o.Status, "OrderStatus")
}
