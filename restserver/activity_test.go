package restserver

import (
	"context"
	"testing"
	"time"
)

// TestActivityMakesOrdersAndPayments: the demo activity adds an order, a
// pending payment, then makes that payment succeed, in one location.
func TestActivityMakesOrdersAndPayments(t *testing.T) {
	ts := newTestServer(t)
	loc := ts.Manifest.IDs["location"][0]
	count := func(table, status string) int {
		var n int
		if err := ts.db.read.QueryRow("SELECT count(*) FROM "+table+" WHERE location_id = ? AND status = ?", loc, status).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	orders, pending, succeeded := count("orders", "new"), count("transactions", "pending"), count("transactions", "succeeded")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ts.Activity(ctx, loc, time.Millisecond); close(done) }()
	deadline := time.Now().Add(30 * time.Second)
	for count("transactions", "succeeded") == succeeded {
		if time.Now().After(deadline) {
			t.Fatal("no payment succeeded")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if count("orders", "new") <= orders {
		t.Errorf("no new order")
	}
	if count("transactions", "pending")+count("transactions", "succeeded") <= pending+succeeded {
		t.Errorf("no new payment")
	}
}
