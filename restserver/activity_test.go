package restserver

import (
	"encoding/json"
	"net/url"
	"slices"
	"testing"

	"github.com/workspacenet/facade/restserver/wire"
)

// listAll GETs every page of a list route (path has a query string) and
// decodes the items under key into T.
func listAll[T any](t *testing.T, ts *testServer, a auth, path, key string) []T {
	t.Helper()
	var out []T
	next := ""
	for range 100 {
		p := path + "&limit=100"
		if next != "" {
			p += "&nextPageToken=" + url.QueryEscape(next)
		}
		r := ts.do(t, a, "GET", p, nil)
		if r.status != 200 {
			t.Fatalf("GET %s: %d %s", p, r.status, r.body)
		}
		var body map[string]json.RawMessage
		r.json(t, &body)
		var items []T
		if err := json.Unmarshal(body[key], &items); err != nil {
			t.Fatalf("GET %s: %s: %v", p, key, err)
		}
		out = append(out, items...)
		if err := json.Unmarshal(body["nextPageToken"], &next); err != nil || next == "" {
			return out
		}
	}
	t.Fatalf("%s: more than 100 pages", path)
	return nil
}

// TestActivityRecordsVaryLikeTheSeed drives 60 ticks of the demo activity
// (five minutes of `go run .`) and reads what they made through the REST
// API (every answer checked against the OpenAPI document): 20 orders and 20
// payments in the activity's location only, the last demo location; the
// orders numbered on from the location's highest number, one by one, status
// new, no deleteDate, created after every seeded record, each a product and
// option of the location at the option's price times a quantity of 1 to 3;
// the payments of the seed's types and amount range, every one succeeded by
// the tick after its own; and not all alike (several amounts, several
// types). Nothing moves in the other locations.
func TestActivityRecordsVaryLikeTheSeed(t *testing.T) {
	ts := newTestServer(t)
	a := ts.basic()
	locs := ts.Manifest.IDs["location"]
	loc := ts.Manifest.ActivityLocation()
	if loc != locs[len(locs)-1] || loc == locs[0] {
		t.Fatalf("activity location %s, want the last of %v (never the first, which the documentation reads)", loc, locs)
	}
	orders := func(l string) []wire.Order {
		return listAll[wire.Order](t, ts, a, "/shop/orders/v1?locationRef="+l, "orders")
	}
	payments := func(l string) []wire.Transaction {
		return listAll[wire.Transaction](t, ts, a, "/transactions/money/v1?locationRef="+l, "transactions")
	}
	before := map[string][2]int{}
	for _, l := range locs {
		before[l] = [2]int{len(orders(l)), len(payments(l))}
	}
	seedOrders, seedPayments := orders(loc), payments(loc)
	var maxNumber float64
	var newest wire.Timestamp
	for _, o := range seedOrders {
		maxNumber = max(maxNumber, *o.Number)
		if o.CreateDate.After(newest.Time) {
			newest = *o.CreateDate
		}
	}
	for _, p := range seedPayments {
		if p.CreateDate.After(newest.Time) {
			newest = *p.CreateDate
		}
	}
	var products []wire.Product
	r := ts.do(t, a, "GET", "/shop/products/v1?locationRef="+loc, nil)
	var pl struct{ Products []wire.Product }
	r.json(t, &pl)
	products = pl.Products

	act := ts.NewActivity(loc)
	const ticks = 60
	made := map[string][]string{}
	for i := range ticks {
		ch, err := act.Tick(t.Context())
		if err != nil {
			t.Fatalf("tick %d: %v", i, err)
		}
		want := []string{"orders", "transactions", "transactions"}[i%3]
		if ch.Table != want || ch.ID == "" || ch.Created != (i%3 != 2) {
			t.Fatalf("tick %d: %+v, want a change of %s (created %t)", i, ch, want, i%3 != 2)
		}
		if ch.Created {
			made[ch.Table] = append(made[ch.Table], ch.ID)
		}
	}

	for _, l := range locs {
		got := [2]int{len(orders(l)), len(payments(l))}
		want := before[l]
		if l == loc {
			want = [2]int{want[0] + ticks/3, want[1] + ticks/3}
		}
		if got != want {
			t.Errorf("location %s: %v orders and payments, want %v", l, got, want)
		}
	}

	byID := map[string]wire.Order{}
	for _, o := range orders(loc) {
		byID[o.ID] = o
	}
	amounts, numbers := map[float64]bool{}, []float64{}
	for i, id := range made["orders"] {
		o, ok := byID[id]
		switch {
		case !ok:
			t.Fatalf("order %s of the activity is not listed", id)
		case *o.Status != wire.OrderStatusNew || o.DeleteDate != nil:
			t.Errorf("order %d: status %s, deleteDate %v; want new and none", i, *o.Status, o.DeleteDate)
		case !o.CreateDate.After(newest.Time):
			t.Errorf("order %d: created %v, not after the seeded records (%v)", i, o.CreateDate.Time, newest.Time)
		case *o.LocationRef != loc:
			t.Errorf("order %d: location %s", i, *o.LocationRef)
		}
		numbers = append(numbers, *o.Number)
		i := slices.IndexFunc(products, func(p wire.Product) bool { return p.ID == o.Product.ID })
		if i < 0 {
			t.Fatalf("order %s: product %s is not one of the location's", id, o.Product.ID)
		}
		j := slices.IndexFunc(products[i].Options, func(op wire.ProductOption) bool { return op.ID == o.Option.ID })
		if j < 0 {
			t.Fatalf("order %s: option %s is not one of product %s's", id, o.Option.ID, o.Product.ID)
		}
		q := *o.Quantity
		if q < 1 || q > 3 || *o.Payment.Amount != round2(*products[i].Options[j].Price.Money.Amount*q) {
			t.Errorf("order %s: quantity %v, amount %v; want 1 to 3 at %v each", id, q, *o.Payment.Amount, *products[i].Options[j].Price.Money.Amount)
		}
		amounts[*o.Payment.Amount] = true
	}
	for i, n := range numbers {
		if n != maxNumber+float64(i+1) {
			t.Errorf("order numbers %v: want %v and on, one by one", numbers, maxNumber+1)
			break
		}
	}
	if len(amounts) < 2 {
		t.Errorf("every new order is of %v: the activity makes clones", amounts)
	}

	pays := map[string]wire.Transaction{}
	for _, p := range payments(loc) {
		pays[p.ID] = p
	}
	types, payAmounts := map[wire.TransactionType]bool{}, map[float64]bool{}
	for i, id := range made["transactions"] {
		p, ok := pays[id]
		switch {
		case !ok:
			t.Fatalf("payment %s of the activity is not listed", id)
		case *p.Status != wire.TransactionStatusSucceeded || p.Refund != nil:
			t.Errorf("payment %d: status %s, refund %v; want succeeded, none", i, *p.Status, p.Refund)
		case !p.CreateDate.After(newest.Time):
			t.Errorf("payment %d: created %v, not after the seeded records", i, p.CreateDate.Time)
		case *p.Amount < 5 || *p.Amount >= 305:
			t.Errorf("payment %d: amount %v outside the seed's 5 to 304.99", i, *p.Amount)
		case !slices.Contains(activityTypes, *p.Type):
			t.Errorf("payment %d: type %s", i, *p.Type)
		}
		types[*p.Type], payAmounts[*p.Amount] = true, true
	}
	if len(types) < 2 || len(payAmounts) < 2 {
		t.Errorf("new payments of types %v, amounts %v: the activity makes clones", types, payAmounts)
	}
}
