package graph

import (
	"context"

	"github.com/workspacenet/facade/restclient"
)

// Invalidator drops the cached upstream answers a write made stale, for
// every caller and every replica (internal/cache). ref identifies the
// entries of route: the id of a route with a path parameter, or a list's
// filter as "param=value".
type Invalidator interface {
	Invalidate(ctx context.Context, route, ref string)
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
		r.cache.Invalidate(ctx, "/billing/invoices/v1/{id}/items", inv)
		r.cache.Invalidate(ctx, "/billing/credit_notes/v1", "invoiceRef="+inv)
	}
	if loc := deref(cn.LocationRef); loc != "" {
		r.cache.Invalidate(ctx, "/billing/credit_notes/v1", "locationRef="+loc)
	}
}

// visitUpdated: that visit.
func (r *Resolver) visitUpdated(ctx context.Context, id string) {
	if r.cache != nil {
		r.cache.Invalidate(ctx, "/visitors/visits/v1/{id}", id)
	}
}
