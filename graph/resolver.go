package graph

import (
	"log/slog"

	"github.com/workspacenet/facade/graph/admission"
	"github.com/workspacenet/facade/graph/generated"
	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/graph/paging"
	"github.com/workspacenet/facade/internal/live"
	"github.com/workspacenet/facade/restclient"
)

// This file will not be regenerated automatically.
//
// It serves as dependency injection for your app, add any dependencies you require
// here.

// Resolver is the root resolver: it holds what every field resolver needs.
type Resolver struct {
	client *restclient.Client
	log    *slog.Logger
	// cursors seals the connections' cursors (Options.CursorSecret).
	cursors *paging.Codec
	// live feeds the subscriptions (Options.Live); nil: subscriptions off.
	live *live.Hub
	// admit admits each event of a subscription (nil: admission off).
	admit *admission.Controller
}

// requestLoaders returns the Source of one request: NewLoaders' when set,
// else the batching loaders tuned by Loaders, made in batching (in the
// request's own allocation).
func (o *Options) requestLoaders(batching *loaders.Loaders) loaders.Source {
	if o.NewLoaders != nil {
		return o.NewLoaders(o.Client)
	}
	cfg := o.Loaders
	cfg.Priority = callPriority
	batching.Init(o.Client, cfg)
	return batching
}

// root is the generated.ResolverRoot the handler gives gqlgen: the Resolver,
// with getters that return its object resolvers without allocating. The
// getters of schema.resolvers.go (gqlgen's) make a resolver at every call,
// that is at every resolver field of every object: 500 allocations in a feed
// of 100 transactions. Every object resolver is a struct{ *Resolver }, so
// each getter converts a pointer to the one such value. TestRootAllocatesNothing
// fails on a getter left out here.
type root struct {
	*Resolver
	r struct{ *Resolver }
}

func newRoot(r *Resolver) *root {
	x := &root{Resolver: r}
	x.r.Resolver = r
	return x
}

func (x *root) Booking() generated.BookingResolver       { return (*bookingResolver)(&x.r) }
func (x *root) Comment() generated.CommentResolver       { return (*commentResolver)(&x.r) }
func (x *root) Company() generated.CompanyResolver       { return (*companyResolver)(&x.r) }
func (x *root) CreditNote() generated.CreditNoteResolver { return (*creditNoteResolver)(&x.r) }
func (x *root) CreditNoteLine() generated.CreditNoteLineResolver {
	return (*creditNoteLineResolver)(&x.r)
}
func (x *root) Entity() generated.EntityResolver           { return (*entityResolver)(&x.r) }
func (x *root) Event() generated.EventResolver             { return (*eventResolver)(&x.r) }
func (x *root) Invoice() generated.InvoiceResolver         { return (*invoiceResolver)(&x.r) }
func (x *root) InvoiceItem() generated.InvoiceItemResolver { return (*invoiceItemResolver)(&x.r) }
func (x *root) InvoiceItemBooking() generated.InvoiceItemBookingResolver {
	return (*invoiceItemBookingResolver)(&x.r)
}
func (x *root) InvoiceItemOrder() generated.InvoiceItemOrderResolver {
	return (*invoiceItemOrderResolver)(&x.r)
}
func (x *root) InvoiceItemTicket() generated.InvoiceItemTicketResolver {
	return (*invoiceItemTicketResolver)(&x.r)
}
func (x *root) Location() generated.LocationResolver       { return (*locationResolver)(&x.r) }
func (x *root) Mutation() generated.MutationResolver       { return (*mutationResolver)(&x.r) }
func (x *root) Order() generated.OrderResolver             { return (*orderResolver)(&x.r) }
func (x *root) Post() generated.PostResolver               { return (*postResolver)(&x.r) }
func (x *root) Product() generated.ProductResolver         { return (*productResolver)(&x.r) }
func (x *root) Query() generated.QueryResolver             { return (*queryResolver)(&x.r) }
func (x *root) Redemption() generated.RedemptionResolver   { return (*redemptionResolver)(&x.r) }
func (x *root) Resource() generated.ResourceResolver       { return (*resourceResolver)(&x.r) }
func (x *root) Transaction() generated.TransactionResolver { return (*transactionResolver)(&x.r) }
func (x *root) TransactionBooking() generated.TransactionBookingResolver {
	return (*transactionBookingResolver)(&x.r)
}
func (x *root) TransactionOrder() generated.TransactionOrderResolver {
	return (*transactionOrderResolver)(&x.r)
}
func (x *root) TransactionTicket() generated.TransactionTicketResolver {
	return (*transactionTicketResolver)(&x.r)
}
func (x *root) Visit() generated.VisitResolver               { return (*visitResolver)(&x.r) }
func (x *root) VisitRequest() generated.VisitRequestResolver { return (*visitRequestResolver)(&x.r) }

// The subscription and its events.
func (x *root) Subscription() generated.SubscriptionResolver {
	return (*subscriptionResolver)(&x.r)
}
func (x *root) CommentEvent() generated.CommentEventResolver { return (*commentEventResolver)(&x.r) }
func (x *root) CreditNoteEvent() generated.CreditNoteEventResolver {
	return (*creditNoteEventResolver)(&x.r)
}
func (x *root) EventEvent() generated.EventEventResolver { return (*eventEventResolver)(&x.r) }
func (x *root) OrderEvent() generated.OrderEventResolver { return (*orderEventResolver)(&x.r) }
func (x *root) ProductEvent() generated.ProductEventResolver {
	return (*productEventResolver)(&x.r)
}
func (x *root) RedemptionEvent() generated.RedemptionEventResolver {
	return (*redemptionEventResolver)(&x.r)
}
func (x *root) ResourceEvent() generated.ResourceEventResolver {
	return (*resourceEventResolver)(&x.r)
}
func (x *root) TransactionEvent() generated.TransactionEventResolver {
	return (*transactionEventResolver)(&x.r)
}
func (x *root) VisitEvent() generated.VisitEventResolver { return (*visitEventResolver)(&x.r) }
