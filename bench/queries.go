package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/workspacenet/facade/internal/base/counts"
	"github.com/workspacenet/facade/internal/testsupport/queries"
)

// The upstream routes a query may need, as the REST service counts them.
const (
	routeProducts     = "GET /shop/products/v1"
	routeOrders       = "GET /shop/orders/v1"
	routeTransactions = "GET /transactions/money/v1"
	routeCreditNotes  = "GET /billing/credit_notes/v1"
	routeInvoice      = "GET /billing/invoices/v1/{id}/items"
	routeResource     = "GET /resources/v1/{id}"
	routeEvent        = "GET /events/v1/{id}"
	routeComments     = "GET /feed/posts/v1/{id}/comments"
	routeCreateBook   = "POST /resources/bookings/v1"
)

// needs is what a query needed from the upstream, computed from the data it
// returned: each distinct thing (route + key) with the earliest dependent
// round that can fetch it (1 = needs only the query's arguments, 2 = needs
// an object of round 1, ...) and the routes whose answers name it at that
// round. Its size is the minimum number of upstream calls; its deepest round
// is the critical path.
type needs map[string]need

type need struct {
	round int
	from  []string // routes whose answers name the key; none at round 1
}

// add records that route's key can be fetched at round, once an answer of
// route from (at round-1; "" at round 1) named it.
func (n needs) add(route, key string, round int, from string) {
	k := route + "\x00" + key
	old, ok := n[k]
	switch {
	case !ok || round < old.round:
		old = need{round: round}
	case round > old.round:
		return
	}
	if from != "" && !slices.Contains(old.from, from) {
		old.from = append(old.from, from)
	}
	n[k] = old
}

// Calls is the minimum number of upstream calls.
func (n needs) Calls() int { return len(n) }

// Rounds is the number of dependent upstream rounds (the critical path).
func (n needs) Rounds() int {
	m := 0
	for _, r := range n {
		m = max(m, r.round)
	}
	return m
}

// ByRoute counts the needed calls per route.
func (n needs) ByRoute() map[string]int64 {
	out := map[string]int64{}
	for k := range n {
		route, _, _ := strings.Cut(k, "\x00")
		out[route]++
	}
	return out
}

// Deps returns, per route, what its calls may wait for: whether some key
// of it needs only the query's arguments (Root) and the routes whose
// answers name its other keys (From, sorted).
func (n needs) Deps() map[string]RouteDeps {
	out := map[string]RouteDeps{}
	for k, v := range n {
		route, _, _ := strings.Cut(k, "\x00")
		d := out[route]
		if len(v.from) == 0 {
			d.Root = true
		}
		for _, f := range v.from {
			if !slices.Contains(d.From, f) {
				d.From = append(d.From, f)
			}
		}
		out[route] = d
	}
	for _, d := range out {
		slices.Sort(d.From)
	}
	return out
}

// RouteDeps is what the calls of one route may wait for (needs.Deps).
type RouteDeps struct {
	Root bool     `json:"root,omitempty"` // a key needs only the query's arguments
	From []string `json:"from,omitempty"` // routes whose answers name a key
}

// benchQuery is one query of the suite.
type benchQuery struct {
	Name  string // short name, used in tables and plots
	Title string
	Text  string
	// Vars returns the variables of the i-th execution (mutations need a
	// fresh booking slot each time).
	Vars func() map[string]any
	// Needs computes, from the response data, what the query needed.
	Needs func(data json.RawMessage) (needs, error)
}

// fixtures are the demo ids the suite runs against, chosen at start-up.
type fixtures struct {
	Location string
	Invoice  string
	Post     string
	Resource string // bookable with 60-minute bookings
	slot     atomic.Int64
}

// nextSlot returns a fresh one-hour booking slot, so concurrent and repeated
// mutations never conflict.
func (f *fixtures) nextSlot() (start, end string) {
	base := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	s := base.Add(time.Duration(f.slot.Add(1)) * time.Hour)
	return s.Format(time.RFC3339), s.Add(time.Hour).Format(time.RFC3339)
}

type ref struct {
	ID string `json:"id"`
}

const dashboardQuery = queries.BenchDashboard

func dashboardNeeds(data json.RawMessage) (needs, error) {
	var d struct {
		Location struct {
			ID     string `json:"id"`
			Orders struct {
				Nodes []struct {
					LocationRef string `json:"locationRef"`
					Product     *ref   `json:"product"`
				} `json:"nodes"`
			} `json:"orders"`
			Transactions struct{ Nodes []txNode } `json:"transactions"`
			CreditNotes  struct {
				Nodes []struct {
					Invoice *ref `json:"invoice"`
				} `json:"nodes"`
			} `json:"creditNotes"`
		} `json:"location"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	l := d.Location
	if l.ID == "" {
		return nil, fmt.Errorf("no location in %.200s", data)
	}
	n := needs{}
	n.add(routeProducts, l.ID, 1, "")
	n.add(routeOrders, "", 1, "")
	n.add(routeTransactions, "", 1, "")
	n.add(routeCreditNotes, "", 1, "")
	for _, o := range l.Orders.Nodes {
		if o.Product != nil {
			n.add(routeProducts, o.LocationRef, 2, routeOrders)
		}
	}
	for _, t := range l.Transactions.Nodes {
		t.addNeeds(n, 2, routeTransactions)
	}
	for _, c := range l.CreditNotes.Nodes {
		if c.Invoice != nil {
			n.add(routeInvoice, c.Invoice.ID, 2, routeCreditNotes)
		}
	}
	return n, nil
}

// txNode is a transaction with the links the suite selects.
type txNode struct {
	LocationRef string `json:"locationRef"`
	Booking     *struct {
		Resource *ref `json:"resource"`
	} `json:"booking"`
	Order *struct {
		Product *ref `json:"product"`
		Option  *ref `json:"option"`
	} `json:"order"`
	Ticket *struct {
		Event *ref `json:"event"`
	} `json:"ticket"`
	Invoice *ref `json:"invoice"`
}

// addNeeds adds what t's selected links need, at round, named by an answer
// of route from.
func (t txNode) addNeeds(n needs, round int, from string) {
	if t.Booking != nil && t.Booking.Resource != nil {
		n.add(routeResource, t.Booking.Resource.ID, round, from)
	}
	if t.Order != nil && (t.Order.Product != nil || t.Order.Option != nil) {
		// The product, and its options, come with the location's product list.
		n.add(routeProducts, t.LocationRef, round, from)
	}
	if t.Ticket != nil && t.Ticket.Event != nil {
		n.add(routeEvent, t.Ticket.Event.ID, round, from)
	}
	if t.Invoice != nil {
		n.add(routeInvoice, t.Invoice.ID, round, from)
	}
}

const invoiceQuery = `query InvoiceDetail($id: ID!) { invoice(id: $id) {
  id number status totalAmount
  items { id description totalAmount booking { id resource { id title capacity } } }
  creditNotes(first: 25) { nodes { id number totalAmount
    lines { id totalAmount invoiceRef invoiceItem { id description } invoice { id number } } } }
} }`

func invoiceNeeds(data json.RawMessage) (needs, error) {
	var d struct {
		Invoice *struct {
			ID    string `json:"id"`
			Items []struct {
				Booking *struct {
					Resource *ref `json:"resource"`
				} `json:"booking"`
			} `json:"items"`
			CreditNotes struct {
				Nodes []struct {
					Lines []struct {
						InvoiceRef  string `json:"invoiceRef"`
						InvoiceItem *ref   `json:"invoiceItem"`
						Invoice     *ref   `json:"invoice"`
					} `json:"lines"`
				} `json:"nodes"`
			} `json:"creditNotes"`
		} `json:"invoice"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	if d.Invoice == nil {
		return nil, fmt.Errorf("no invoice in %.200s", data)
	}
	n := needs{}
	n.add(routeInvoice, d.Invoice.ID, 1, "")
	for _, it := range d.Invoice.Items {
		if it.Booking != nil && it.Booking.Resource != nil {
			n.add(routeResource, it.Booking.Resource.ID, 2, routeInvoice)
		}
	}
	n.add(routeCreditNotes, "", 2, routeInvoice)
	for _, c := range d.Invoice.CreditNotes.Nodes {
		for _, l := range c.Lines {
			if l.Invoice != nil || l.InvoiceItem != nil {
				n.add(routeInvoice, l.InvoiceRef, 3, routeCreditNotes)
			}
		}
	}
	return n, nil
}

const feedQuery = `query Feed($l: ID!) { transactions(locationId: $l, first: 100) {
  edges { cursor node { id amount currencyCode status type createDate locationRef membershipRef
    location { id }
    paymentMethod { label type }
    booking { id price { netAmount taxAmount } resource { id title capacity type description } }
    order { id price { netAmount taxAmount } product { id title visibility } option { id title description } }
    ticket { id createDate event { id title venue startDate } }
    invoice { id number status totalAmount amountDue } } }
  pageInfo { hasNextPage endCursor }
} }`

func feedNeeds(data json.RawMessage) (needs, error) {
	var d struct {
		Transactions *struct {
			Edges []struct {
				Node txNode `json:"node"`
			} `json:"edges"`
		} `json:"transactions"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	if d.Transactions == nil || len(d.Transactions.Edges) == 0 {
		return nil, fmt.Errorf("no transactions in %.200s", data)
	}
	n := needs{}
	// first > 100 would follow pages; 100 is one upstream page.
	n.add(routeTransactions, "", 1, "")
	for _, e := range d.Transactions.Edges {
		e.Node.addNeeds(n, 2, routeTransactions)
	}
	return n, nil
}

const threadQuery = `query Thread($p: ID!) { postComments(postId: $p) {
  id text createDate likes parentCommentRef
  parentComment { id text parentComment { id text } }
  replies { id text replies { id text } }
} }`

func threadNeeds(data json.RawMessage) (needs, error) {
	var d struct {
		PostComments []struct {
			ID string `json:"id"`
		} `json:"postComments"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	if d.PostComments == nil {
		return nil, fmt.Errorf("no comments in %.200s", data)
	}
	n := needs{}
	// Parents and replies are in the post's comment list: no other call.
	n.add(routeComments, "", 1, "")
	return n, nil
}

const bookingMutation = `mutation Book($in: CreateBookingInput!) { createBooking(input: $in) {
  booking { id startDate endDate title resource { id title capacity type } }
} }`

func bookingNeeds(data json.RawMessage) (needs, error) {
	var d struct {
		CreateBooking *struct {
			Booking *struct {
				ID       string `json:"id"`
				Resource *ref   `json:"resource"`
			} `json:"booking"`
		} `json:"createBooking"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	if d.CreateBooking == nil || d.CreateBooking.Booking == nil {
		return nil, fmt.Errorf("no booking in %.200s", data)
	}
	n := needs{}
	n.add(routeCreateBook, d.CreateBooking.Booking.ID, 1, "")
	if r := d.CreateBooking.Booking.Resource; r != nil {
		n.add(routeResource, r.ID, 2, routeCreateBook)
	}
	return n, nil
}

const resourceQuery = `query Resource($id: ID!) { resource(id: $id) { id title type capacity } }`

func resourceNeeds(data json.RawMessage) (needs, error) {
	var d struct {
		Resource *ref `json:"resource"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	if d.Resource == nil {
		return nil, fmt.Errorf("no resource in %.200s", data)
	}
	n := needs{}
	n.add(routeResource, d.Resource.ID, 1, "")
	return n, nil
}

// ordersQuery selects product fields beyond the summary an order embeds
// (visibility, options), so every product comes from the location's product
// list: at -scale 14 the 25 completed orders name at least 25 distinct
// products of a list of 70.
const ordersQuery = `query Orders($l: ID!) { orders(locationId: $l, status: COMPLETED, first: 25) {
  nodes { id number status locationRef
    product { id title description visibility featured options { id title price { money { amount currencyCode } } } } }
} }`

func ordersNeeds(data json.RawMessage) (needs, error) {
	var d struct {
		Orders *struct {
			Nodes []struct {
				LocationRef string `json:"locationRef"`
				Product     *ref   `json:"product"`
			} `json:"nodes"`
		} `json:"orders"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	if d.Orders == nil || len(d.Orders.Nodes) == 0 {
		return nil, fmt.Errorf("no orders in %.200s", data)
	}
	n := needs{}
	n.add(routeOrders, "", 1, "")
	for _, o := range d.Orders.Nodes {
		if o.Product != nil {
			n.add(routeProducts, o.LocationRef, 2, routeOrders)
		}
	}
	return n, nil
}

// suite returns the benchmark's queries over fx.
func suite(fx *fixtures) []*benchQuery {
	return []*benchQuery{
		{Name: "dashboard", Title: "Location dashboard", Text: dashboardQuery, Needs: dashboardNeeds,
			Vars: func() map[string]any { return map[string]any{"l": fx.Location} }},
		{Name: "invoice", Title: "Invoice detail", Text: invoiceQuery, Needs: invoiceNeeds,
			Vars: func() map[string]any { return map[string]any{"id": fx.Invoice} }},
		{Name: "feed", Title: "Feed of 100 transactions", Text: feedQuery, Needs: feedNeeds,
			Vars: func() map[string]any { return map[string]any{"l": fx.Location} }},
		{Name: "thread", Title: "Comment thread", Text: threadQuery, Needs: threadNeeds,
			Vars: func() map[string]any { return map[string]any{"p": fx.Post} }},
		{Name: "booking", Title: "createBooking mutation", Text: bookingMutation, Needs: bookingNeeds,
			Vars: func() map[string]any {
				s, e := fx.nextSlot()
				return map[string]any{"in": map[string]any{"resourceRef": fx.Resource, "startDate": s, "endDate": e, "title": "bench"}}
			}},
		{Name: "resource", Title: "One resource by id", Text: resourceQuery, Needs: resourceNeeds,
			Vars: func() map[string]any { return map[string]any{"id": fx.Resource} }},
		{Name: "orders", Title: "25 orders with their product's details", Text: ordersQuery, Needs: ordersNeeds,
			Vars: func() map[string]any { return map[string]any{"l": fx.Location} }},
	}
}

// formatRoutes renders per-route counts sorted by route.
func formatRoutes(m map[string]int64) string { return counts.Format(m, "%s ×%d", ", ") }
