package restserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/workspacenet/facade/restserver/wire"
)

// ActivityLocation is the demo location the demo activity writes to: the
// last location of the demo network. No example of the documentation reads
// it (they read the first), so what the activity adds never changes a
// documented answer or call count; subscribe to it to see events.
func (m *DemoManifest) ActivityLocation() string {
	locs := m.IDs["location"]
	if len(locs) == 0 {
		return ""
	}
	return locs[len(locs)-1]
}

// Activity makes the changes the real system makes outside the API, in one
// location: each Tick, in turn, a new order (status new), a new payment (a
// transaction, pending) and that payment succeeding. The demo program runs
// it so that subscriptions show live updates at once (docs/live-data.md).
//
// Its records are drawn like the seed data (restserver/demo.go) from a
// generator of their own, never from the seed's, so no seeded id or value
// moves: an order has the location's next number (above every number it
// has), a product and option of the location with a quantity of 1 to 3 and
// the option's price times the quantity, the member of one of the location's
// orders, and no deleteDate; a payment has one of the seed's six types, an
// amount of 5.00 to 304.99 and the links of one of the location's payments
// of that type. Both are created now, after every record of the location.
// An Activity is used by one goroutine.
type Activity struct {
	s        *Server
	location string
	r        *rand.Rand
	step     int
	pending  string // the payment the next step makes succeed
}

// NewActivity returns the activity of location, starting with a new order.
func (s *Server) NewActivity(location string) *Activity {
	now := uint64(s.now().UnixNano())
	return &Activity{s: s, location: location, r: rand.New(rand.NewPCG(now, now>>17^0x9e3779b97f4a7c15))}
}

// ActivityChange is what one Tick did.
type ActivityChange struct {
	Table   string // "orders" or "transactions"
	ID      string
	Created bool // a new record; else the pending payment succeeded
}

// Tick makes the next change. A payment step with no pending payment (the
// one before failed) makes nothing and reports a zero change.
func (a *Activity) Tick(ctx context.Context) (ActivityChange, error) {
	step := a.step
	a.step++
	switch step % 3 {
	case 0:
		id, err := a.newOrder(ctx)
		return ActivityChange{Table: "orders", ID: id, Created: true}, err
	case 1:
		id, err := a.newPayment(ctx)
		a.pending = id
		return ActivityChange{Table: "transactions", ID: id, Created: true}, err
	default:
		id := a.pending
		a.pending = ""
		if id == "" {
			return ActivityChange{}, nil
		}
		_, err := a.s.db.change(ctx, "transactions", id, false, map[string]any{"status": string(wire.TransactionStatusSucceeded)}, a.s.now().UTC())
		return ActivityChange{Table: "transactions", ID: id}, err
	}
}

// Run ticks every interval until ctx ends. Failures are logged and skipped.
func (a *Activity) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := a.Tick(ctx); err != nil && ctx.Err() == nil {
			a.s.log.Warn("demo activity", "location", a.location, "err", err)
		}
	}
}

// Activity runs s.NewActivity(location) every interval until ctx ends.
func (s *Server) Activity(ctx context.Context, location string, every time.Duration) {
	s.NewActivity(location).Run(ctx, every)
}

// pickRow returns the network and doc of a random row of table in the
// activity's location matching where (SQL on the row, with args).
func (a *Activity) pickRow(ctx context.Context, tx *sql.Tx, table, where string, args ...any) (network string, doc []byte, err error) {
	args = append([]any{a.location}, args...)
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE location_id = ?"+where, args...).Scan(&n); err != nil {
		return "", nil, err
	}
	if n == 0 {
		return "", nil, fmt.Errorf("no %s in location %s to draw from", table, a.location)
	}
	err = tx.QueryRowContext(ctx, "SELECT network_id, doc FROM "+table+" WHERE location_id = ?"+where+" ORDER BY rowid LIMIT 1 OFFSET ?",
		append(args, a.r.IntN(n))...).Scan(&network, &doc)
	return network, doc, err
}

// newOrder inserts a new order (see Activity) and returns its id.
func (a *Activity) newOrder(ctx context.Context) (string, error) {
	var id string
	now := a.s.now().UTC().Truncate(time.Millisecond)
	err := a.s.db.tx(ctx, func(tx *sql.Tx) error {
		network, raw, err := a.pickRow(ctx, tx, "orders", "")
		if err != nil {
			return err
		}
		var o wire.Order
		if err := json.Unmarshal(raw, &o); err != nil {
			return err
		}
		var last sql.NullFloat64
		if err := tx.QueryRowContext(ctx, "SELECT max(json_extract(doc, '$.number')) FROM orders WHERE location_id = ?", a.location).Scan(&last); err != nil {
			return err
		}
		_, raw, err = a.pickRow(ctx, tx, "products", "")
		if err != nil {
			return err
		}
		var p wire.Product
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		if len(p.Options) == 0 {
			return fmt.Errorf("product %s has no option", p.ID)
		}
		opt := p.Options[a.r.IntN(len(p.Options))]
		qty := float64(1 + a.r.IntN(3))
		price := 0.0
		if opt.Price != nil && opt.Price.Money != nil && opt.Price.Money.Amount != nil {
			price = *opt.Price.Money.Amount
		}
		id = newID()
		o.ID, o.Number, o.CreateDate, o.DeleteDate = id, new(last.Float64+1), wire.NewTimestamp(now), nil
		o.Status = new(wire.OrderStatusNew)
		o.Comment = new([]string{"", "Please deliver at reception", "Gift wrap"}[a.r.IntN(3)])
		o.Option = &wire.ProductOption{ID: opt.ID, Title: opt.Title}
		o.Product = &wire.Product{ID: p.ID, Title: p.Title, Description: p.Description, CreateDate: p.CreateDate, Media: p.Media}
		o.Quantity = new(qty)
		o.Payment = &wire.ItemPayment{Amount: new(round2(price * qty)), CurrencyCode: new("EUR"), Status: new("succeeded"),
			Type: new([]string{"credits", "external"}[a.r.IntN(2)]), Tax: &wire.ItemPaymentTax{Inclusive: new(true), Rate: new(taxRate)}, TransactionRef: new(newID())}
		return insert(ctx, tx, record{table: "orders", id: id, network: network, createDate: now,
			cols: map[string]any{"location_id": a.location, "status": string(wire.OrderStatusNew)}, doc: o})
	})
	return id, err
}

// activityTypes are the transaction types the seed data draws from.
var activityTypes = []wire.TransactionType{"booking", "order", "eventTicket", "creditPackage", "subscription", "invoice"}

// newPayment inserts a new pending transaction (see Activity) and returns
// its id.
func (a *Activity) newPayment(ctx context.Context) (string, error) {
	var id string
	now := a.s.now().UTC().Truncate(time.Millisecond)
	err := a.s.db.tx(ctx, func(tx *sql.Tx) error {
		typ := activityTypes[a.r.IntN(len(activityTypes))]
		network, raw, err := a.pickRow(ctx, tx, "transactions", " AND type = ?", string(typ))
		if err != nil {
			return err
		}
		var tr wire.Transaction
		if err := json.Unmarshal(raw, &tr); err != nil {
			return err
		}
		amount := float64(5+a.r.IntN(300)) + float64(a.r.IntN(100))/100
		id = newID()
		tr.ID, tr.Amount, tr.CreateDate, tr.Refund = id, new(amount), wire.NewTimestamp(now), nil
		tr.Status = new(wire.TransactionStatusPending)
		switch {
		case tr.Booking != nil:
			tr.Booking.Price = priceSplit(amount)
		case tr.Order != nil:
			tr.Order.Price = priceSplit(amount)
		case tr.Ticket != nil:
			tr.Ticket.ID, tr.Ticket.CreateDate, tr.Ticket.Price = newID(), wire.NewTimestamp(now), priceSplit(amount)
		case tr.CreditPackage != nil:
			tr.CreditPackage.Amount, tr.CreditPackage.Price = new(float64(10*(1+a.r.IntN(10)))), priceSplit(amount)
		}
		return insert(ctx, tx, record{table: "transactions", id: id, network: network, createDate: now,
			cols: map[string]any{"location_id": a.location, "status": string(wire.TransactionStatusPending), "type": string(typ)}, doc: tr})
	})
	return id, err
}
