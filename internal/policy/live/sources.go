package live

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/workspacenet/facade/restclient"
)

// The sources of the facade's subscriptions. Each names the row of the GET
// it polls (restclient's operation table), and its Key the route and
// filter; what its changes make stale in the response cache derives from
// that row (its path parameter and CacheTags), and for lists of what a write
// creates, from that write's Stale.

// filtered returns the Key of the source polling op with pathID in its path
// parameter (if it has one) and query q (its filters: "limit" is not one),
// and the cached entries of op it reads, which a change in it makes stale.
func filtered(op *restclient.Operation, pathID string, q url.Values) (key string, reads []restclient.Entry) {
	f := url.Values{}
	values := map[string]string{}
	if params := op.TagParams(); pathID != "" && len(params) > 0 && strings.Contains(op.Route, "{"+params[0]+"}") {
		f.Set(params[0], pathID)
		values[params[0]] = pathID
	}
	for k, v := range q {
		if k != "limit" && len(v) > 0 && v[0] != "" {
			f.Set(k, v[0])
			values[k] = v[0]
		}
	}
	return op.Route + "?" + f.Encode(), op.Entries(values)
}

// staleOf is the Stale of a source reading entries: a change makes them stale.
func staleOf(entries []restclient.Entry) func([]Event) []restclient.Entry {
	return func([]Event) []restclient.Entry { return entries }
}

// alsoCreatedBy adds to stale what the write op would have made stale had
// it answered each changed item (a poll that sees a new credit note makes
// its invoice's entries stale as creating it does).
func alsoCreatedBy(stale func([]Event) []restclient.Entry, op *restclient.Operation) func([]Event) []restclient.Entry {
	return func(changes []Event) []restclient.Entry {
		out := stale(changes)
		for _, e := range changes {
			if e.Kind != Failed {
				out = append(out, restclient.StaleAfter(op.Method, op.Route, "", e.Value)...)
			}
		}
		return out
	}
}

func created(t *restclient.Timestamp) (ts restclient.Timestamp) {
	if t == nil {
		return ts
	}
	return *t
}

// decoder reads back values of T encoded as {"items": [...]}.
func decoder[T any]() func([]byte) ([]any, error) {
	return func(b []byte) ([]any, error) {
		l, err := restclient.DecodeItems[T](b)
		out := make([]any, len(l))
		for i, v := range l {
			out[i] = v
		}
		return out, err
	}
}

func listItems[T any](list []*T, id func(*T) string, date func(*T) *restclient.Timestamp) []Item {
	out := make([]Item, 0, len(list))
	for _, v := range list {
		out = append(out, Item{ID: id(v), Created: created(date(v)).Time, Value: v})
	}
	return out
}

// list is the source of the list op's answer to pathID (in its path
// parameter, if it has one) and query q (filters and page size): id and
// date are an item's id ("": known by its fingerprint) and create date.
func list[T any](c *restclient.Client, op *restclient.Op[[]*T], pathID string, q url.Values, id func(*T) string, date func(*T) *restclient.Timestamp) Source {
	key, reads := filtered(op.Row(), pathID, q)
	return Source{
		Key:    key,
		Decode: decoder[T](),
		Route:  op.Route,
		Reads:  reads,
		Stale:  staleOf(reads),
		Fetch: func(ctx context.Context) ([]Item, error) {
			l, _, err := restclient.Get(ctx, c, op, pathID, q)
			return listItems(l, id, date), err
		},
	}
}

// page is the page a list source asks for: the newest PageSize items.
var page = restclient.ListOptions{Limit: PageSize}

// Transactions is the newest page of a location's money transactions.
func Transactions(c *restclient.Client, location string, status restclient.TransactionStatus, typ restclient.TransactionType) Source {
	return list(c, restclient.OpListTransactions, "", restclient.TransactionListOptions{LocationRef: location, Status: status, Type: typ, ListOptions: page}.Values(),
		func(v *restclient.Transaction) string { return v.ID }, func(v *restclient.Transaction) *restclient.Timestamp { return v.CreateDate })
}

// Orders is the newest page of a location's shop orders.
func Orders(c *restclient.Client, location string, status restclient.OrderStatus) Source {
	return list(c, restclient.OpListOrders, "", restclient.OrderListOptions{LocationRef: location, Status: status, ListOptions: page}.Values(),
		func(v *restclient.Order) string { return v.ID }, func(v *restclient.Order) *restclient.Timestamp { return v.CreateDate })
}

// CreditNotes is the newest page of the credit notes of an invoice or of a
// location (one of the two). A change makes stale, beside the list, what
// creating the credit note does (its invoice, its invoice's and its
// location's lists).
func CreditNotes(c *restclient.Client, invoice, location string) Source {
	s := list(c, restclient.OpListCreditNotes, "", restclient.CreditNoteListOptions{InvoiceRef: invoice, LocationRef: location, ListOptions: page}.Values(),
		func(v *restclient.CreditNote) string { return v.ID }, func(v *restclient.CreditNote) *restclient.Timestamp { return v.CreateDate })
	s.Stale = alsoCreatedBy(s.Stale, restclient.OpCreateCreditNote.Row())
	return s
}

// Redemptions is the newest page of the redemptions of a coupon or of a
// promocode (one of the two). A redemption has no id: each is known by its
// fingerprint.
func Redemptions(c *restclient.Client, coupon, promocode string) Source {
	return list(c, restclient.OpListRedemptions, "", restclient.RedemptionListOptions{CouponRef: coupon, PromocodeRef: promocode, ListOptions: page}.Values(),
		func(*restclient.Redemption) string { return "" }, func(v *restclient.Redemption) *restclient.Timestamp { return v.CreateDate })
}

// Comments is every comment of a post.
func Comments(c *restclient.Client, post string) Source {
	return list(c, restclient.OpListComments, post, nil,
		func(v *restclient.Comment) string { return v.ID }, func(v *restclient.Comment) *restclient.Timestamp { return v.CreateDate })
}

// one is the source of the GET op of one object, id.
func one[T any](c *restclient.Client, op *restclient.Op[*T], id string) Source {
	key, reads := filtered(op.Row(), id, nil)
	return Source{
		Key:    key,
		Route:  op.Route,
		Decode: decoder[T](),
		Reads:  reads,
		Stale:  staleOf(reads),
		Fetch: func(ctx context.Context) ([]Item, error) {
			v, _, err := restclient.Get(ctx, c, op, id, nil)
			if err != nil {
				return nil, err
			}
			return []Item{{ID: id, Value: v}}, nil
		},
	}
}

// Visit is one visit.
func Visit(c *restclient.Client, id string) Source { return one(c, restclient.OpGetVisit, id) }

// Resource is one bookable resource.
func Resource(c *restclient.Client, id string) Source { return one(c, restclient.OpGetResource, id) }

// EventSource is one event.
func EventSource(c *restclient.Client, id string) Source { return one(c, restclient.OpGetEvent, id) }

// Product is one shop product.
func Product(c *restclient.Client, id string) Source { return one(c, restclient.OpGetProduct, id) }

// Products is every product of a location (the list is not paged).
func Products(c *restclient.Client, location string) Source {
	return list(c, restclient.OpListProducts, "", restclient.ProductListOptions{LocationRef: location}.Values(),
		func(v *restclient.Product) string { return v.ID }, func(*restclient.Product) *restclient.Timestamp { return nil })
}

// InvoiceItems is one invoice with its items.
func InvoiceItems(c *restclient.Client, invoice string) Source {
	return one(c, restclient.OpListInvoiceItems, invoice)
}

// ForRead returns the source that watches what a GET of route read (id in
// its path parameter, q its query), or why none does: a page after the
// first or a date filter (a list source watches the newest page of a
// filter), or a route no source polls. ref is the interval of reference
// data (resources, events, products: polled at their cache TTL); other
// sources poll at the Hub's interval.
func ForRead(c *restclient.Client, route, id string, q url.Values, ref time.Duration) (src Source, notWatched string) {
	if q.Get("nextPageToken") != "" {
		return Source{}, "a page after the first: only the newest page of a list is watched"
	}
	if q.Get("createDate") != "" || hasPrefixKey(q, "createDate") {
		return Source{}, "a date filter: only the newest page of a list is watched"
	}
	switch route {
	case restclient.OpListTransactions.Route:
		src = Transactions(c, q.Get("locationRef"), restclient.TransactionStatus(q.Get("status")), restclient.TransactionType(q.Get("type")))
	case restclient.OpListOrders.Route:
		src = Orders(c, q.Get("locationRef"), restclient.OrderStatus(q.Get("status")))
	case restclient.OpListCreditNotes.Route:
		src = CreditNotes(c, q.Get("invoiceRef"), q.Get("locationRef"))
	case restclient.OpListRedemptions.Route:
		src = Redemptions(c, q.Get("couponRef"), q.Get("promocodeRef"))
	case restclient.OpListComments.Route:
		src = Comments(c, id)
	case restclient.OpGetVisit.Route:
		src = Visit(c, id)
	case restclient.OpListInvoiceItems.Route:
		src = InvoiceItems(c, id)
	case restclient.OpListProducts.Route:
		src, src.Interval = Products(c, q.Get("locationRef")), ref
	case restclient.OpGetProduct.Route:
		src, src.Interval = Product(c, id), ref
	case restclient.OpGetResource.Route:
		src, src.Interval = Resource(c, id), ref
	case restclient.OpGetEvent.Route:
		src, src.Interval = EventSource(c, id), ref
	default:
		return Source{}, "no poller watches this route"
	}
	return src, ""
}

func hasPrefixKey(q url.Values, prefix string) bool {
	for k := range q {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}
