package live

import (
	"context"
	"net/http"
	"net/url"

	"github.com/workspacenet/facade/restclient"
)

// The sources of the facade's subscriptions. Each names its GET route and
// filter in its Key; what its changes make stale in the response cache
// derives from the route's row in restclient's operation table (its path
// parameter and CacheTags), and for lists of what a write creates, from
// that write's Stale.

// filtered returns the Key of route's source with filter kv (name, value
// pairs; empty values are no filter) and the cached entries of route that a
// change in it makes stale.
func filtered(route string, kv ...string) (key string, stale func([]Event) []restclient.Entry) {
	q := url.Values{}
	values := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
			values[kv[i]] = kv[i+1]
		}
	}
	op, _ := restclient.LookupOperation(http.MethodGet, route)
	entries := op.Entries(values)
	return route + "?" + q.Encode(), func([]Event) []restclient.Entry { return entries }
}

// alsoCreatedBy adds to stale what the write method route would have made
// stale had it answered each changed item (a poll that sees a new credit
// note makes its invoice's entries stale as POST /billing/credit_notes/v1
// does).
func alsoCreatedBy(stale func([]Event) []restclient.Entry, method, route string) func([]Event) []restclient.Entry {
	return func(changes []Event) []restclient.Entry {
		out := stale(changes)
		for _, e := range changes {
			if e.Kind != Failed {
				out = append(out, restclient.StaleAfter(method, route, "", e.Value)...)
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

// list is the source of a list route filtered by kv (filtered's pairs):
// fetch returns the newest page, id and date an item's id ("": known by
// its fingerprint) and create date.
func list[T any](route string, kv []string, fetch func(context.Context) ([]*T, *restclient.Response, error), id func(*T) string, date func(*T) *restclient.Timestamp) Source {
	key, stale := filtered(route, kv...)
	return Source{
		Key:    key,
		Decode: decoder[T](),
		Route:  route,
		Stale:  stale,
		Fetch: func(ctx context.Context) ([]Item, error) {
			l, _, err := fetch(ctx)
			return listItems(l, id, date), err
		},
	}
}

var page = restclient.ListOptions{Limit: PageSize}

// Transactions is the newest page of a location's money transactions.
func Transactions(c *restclient.Client, location string, status restclient.TransactionStatus, typ restclient.TransactionType) Source {
	return list("/transactions/money/v1", []string{"locationRef", location, "status", string(status), "type", string(typ)},
		func(ctx context.Context) ([]*restclient.Transaction, *restclient.Response, error) {
			return c.Transactions.ListTransactions(ctx, &restclient.TransactionListOptions{LocationRef: location, Status: status, Type: typ, ListOptions: page})
		},
		func(v *restclient.Transaction) string { return v.ID }, func(v *restclient.Transaction) *restclient.Timestamp { return v.CreateDate })
}

// Orders is the newest page of a location's shop orders.
func Orders(c *restclient.Client, location string, status restclient.OrderStatus) Source {
	return list("/shop/orders/v1", []string{"locationRef", location, "status", string(status)},
		func(ctx context.Context) ([]*restclient.Order, *restclient.Response, error) {
			return c.Shop.ListOrders(ctx, &restclient.OrderListOptions{LocationRef: location, Status: status, ListOptions: page})
		},
		func(v *restclient.Order) string { return v.ID }, func(v *restclient.Order) *restclient.Timestamp { return v.CreateDate })
}

// CreditNotes is the newest page of the credit notes of an invoice or of a
// location (one of the two). A change makes stale, beside the list, what
// creating the credit note does (its invoice, its invoice's and its
// location's lists).
func CreditNotes(c *restclient.Client, invoice, location string) Source {
	const route = "/billing/credit_notes/v1"
	s := list(route, []string{"invoiceRef", invoice, "locationRef", location},
		func(ctx context.Context) ([]*restclient.CreditNote, *restclient.Response, error) {
			return c.Billing.ListCreditNotes(ctx, &restclient.CreditNoteListOptions{InvoiceRef: invoice, LocationRef: location, ListOptions: page})
		},
		func(v *restclient.CreditNote) string { return v.ID }, func(v *restclient.CreditNote) *restclient.Timestamp { return v.CreateDate })
	s.Stale = alsoCreatedBy(s.Stale, http.MethodPost, route)
	return s
}

// Redemptions is the newest page of the redemptions of a coupon or of a
// promocode (one of the two). A redemption has no id: each is known by its
// fingerprint.
func Redemptions(c *restclient.Client, coupon, promocode string) Source {
	return list("/discounts/redemptions/v1", []string{"couponRef", coupon, "promocodeRef", promocode},
		func(ctx context.Context) ([]*restclient.Redemption, *restclient.Response, error) {
			return c.Discounts.ListRedemptions(ctx, &restclient.RedemptionListOptions{CouponRef: coupon, PromocodeRef: promocode, ListOptions: page})
		},
		func(*restclient.Redemption) string { return "" }, func(v *restclient.Redemption) *restclient.Timestamp { return v.CreateDate })
}

// Comments is every comment of a post.
func Comments(c *restclient.Client, post string) Source {
	return list("/feed/posts/v1/{id}/comments", []string{"id", post},
		func(ctx context.Context) ([]*restclient.Comment, *restclient.Response, error) {
			return c.Feed.ListComments(ctx, post)
		},
		func(v *restclient.Comment) string { return v.ID }, func(v *restclient.Comment) *restclient.Timestamp { return v.CreateDate })
}

func one[T any](route, param, id string, get func(context.Context, string) (*T, *restclient.Response, error)) Source {
	key, stale := filtered(route, param, id)
	return Source{
		Key:    key,
		Route:  route,
		Decode: decoder[T](),
		Stale:  stale,
		Fetch: func(ctx context.Context) ([]Item, error) {
			v, _, err := get(ctx, id)
			if err != nil {
				return nil, err
			}
			return []Item{{ID: id, Value: v}}, nil
		},
	}
}

// Visit is one visit.
func Visit(c *restclient.Client, id string) Source {
	return one("/visitors/visits/v1/{id}", "id", id, c.Visitors.GetVisit)
}

// Resource is one bookable resource.
func Resource(c *restclient.Client, id string) Source {
	return one("/resources/v1/{id}", "id", id, c.Resources.GetResource)
}

// EventSource is one event.
func EventSource(c *restclient.Client, id string) Source {
	return one("/events/v1/{id}", "id", id, c.Events.GetEvent)
}

// Product is one shop product.
func Product(c *restclient.Client, id string) Source {
	return one("/shop/products/v1/{productId}", "productId", id, c.Shop.GetProduct)
}
