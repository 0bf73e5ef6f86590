package model

import "github.com/workspacenet/facade/restclient"

// The order summaries embedded in transactions and invoice items carry no
// locationRef, but their product links are resolved through the product list
// of the embedding object's location (graph.md, "Links"). These wrappers pair
// the summary with that locationRef; GraphQL binds their fields to the
// embedded restclient struct.

// TransactionOrder is a transaction's embedded order with the transaction's
// locationRef. Bound to the GraphQL type TransactionOrder.
type TransactionOrder struct {
	restclient.TransactionOrder
	// LocationRef is the embedding transaction's locationRef (not a GraphQL field).
	LocationRef *string `json:"-"`
}

// TransactionOrderOf returns t's order wrapped with t's locationRef, or nil
// when t has no order.
func TransactionOrderOf(t *restclient.Transaction) *TransactionOrder {
	if t == nil || t.Order == nil {
		return nil
	}
	return &TransactionOrder{TransactionOrder: *t.Order, LocationRef: t.LocationRef}
}

// InvoiceItemOrder is an invoice item's embedded order with the item's
// locationRef. Bound to the GraphQL type InvoiceItemOrder.
type InvoiceItemOrder struct {
	restclient.InvoiceItemOrder
	// LocationRef is the embedding invoice item's locationRef (not a GraphQL field).
	LocationRef *string `json:"-"`
}

// InvoiceItemOrderOf returns it's order wrapped with it's locationRef, or nil
// when it has no order.
func InvoiceItemOrderOf(it *restclient.InvoiceItem) *InvoiceItemOrder {
	if it == nil || it.Order == nil {
		return nil
	}
	return &InvoiceItemOrder{InvoiceItemOrder: *it.Order, LocationRef: it.LocationRef}
}

// TransactionOrderOption is the option a transaction's order bought: the
// embedded {id, name} summary, or the product's option of that id when a
// query selects more, with the summary's Name. Bound to the GraphQL type
// TransactionOrderOption.
type TransactionOrderOption struct {
	restclient.ProductOption
	// Name is the embedded summary's name: the product option's title.
	Name *string `json:"name,omitempty"`
}

// TransactionOrderOptionOf returns the embedded summary s as an option whose
// Title is also its name; nil when s is nil or has no id.
func TransactionOrderOptionOf(s *restclient.OptionNameSummary) *TransactionOrderOption {
	if s == nil || s.ID == "" {
		return nil
	}
	return &TransactionOrderOption{ProductOption: restclient.ProductOption{ID: s.ID, Title: s.Name}, Name: s.Name}
}
