package graph

import (
	"context"

	"github.com/workspacenet/facade/restclient"
)

// Invalidator drops the cached upstream answers a write made stale, for
// every caller and every replica (internal/cache): the entries of route
// whose param (its path parameter, or a list's filter) is value. It fails
// only for a route or param it cannot invalidate, a programming error.
type Invalidator interface {
	Invalidate(ctx context.Context, route, param, value string) error
}

// What each write makes stale. A booking creates a transaction, but its
// answer does not say the location, so transaction lists are left to their
// TTL (uncached by default).

// creditNoteWritten: the invoice (its amounts and credit notes) and the
// credit-note lists of that invoice and location.
func (r *Resolver) creditNoteWritten(ctx context.Context, cn *restclient.CreditNote) {
	if r.cache == nil || cn == nil {
		return
	}
	if inv := deref(cn.InvoiceRef); inv != "" {
		r.invalidate(ctx, "/billing/invoices/v1/{id}/items", "id", inv)
		r.invalidate(ctx, "/billing/credit_notes/v1", "invoiceRef", inv)
	}
	if loc := deref(cn.LocationRef); loc != "" {
		r.invalidate(ctx, "/billing/credit_notes/v1", "locationRef", loc)
	}
}

// visitUpdated: that visit.
func (r *Resolver) visitUpdated(ctx context.Context, id string) {
	if r.cache != nil {
		r.invalidate(ctx, "/visitors/visits/v1/{id}", "id", id)
	}
}

// invalidate logs the programming error an Invalidator reports; the write
// itself succeeded.
func (r *Resolver) invalidate(ctx context.Context, route, param, value string) {
	if err := r.cache.Invalidate(ctx, route, param, value); err != nil {
		r.log.ErrorContext(ctx, "cache invalidation", "route", route, "param", param, "err", err)
	}
}
