package graph

import (
	"context"
	"testing"
	"time"
)

// TestExecGate: the gate's context ends when the request does, but not
// while a wait is in progress: then when it is left; once the request has
// ended no wait starts. It keeps the request's values and deadline.
func TestExecGate(t *testing.T) {
	type key struct{}
	deadline := time.Now().Add(time.Hour)
	ended := func(ctx context.Context) bool {
		select {
		case <-ctx.Done():
			return true
		default:
			return false
		}
	}
	// waitEnded waits for ctx to end (AfterFunc runs in its own goroutine).
	waitEnded := func(ctx context.Context) {
		t.Helper()
		select {
		case <-ctx.Done():
		case <-time.After(30 * time.Second):
			t.Fatal("the gate's context did not end")
		}
	}

	t.Run("request ends outside a wait", func(t *testing.T) {
		req, cancel := context.WithDeadline(context.WithValue(context.Background(), key{}, "v"), deadline)
		ctx, g := newExecGate(req)
		if ctx.Value(key{}) != "v" {
			t.Error("the request's values are lost")
		}
		if d, ok := ctx.Deadline(); !ok || !d.Equal(deadline) {
			t.Errorf("deadline %v %v, want the request's", d, ok)
		}
		cancel()
		waitEnded(ctx)
		if g.enter() {
			t.Error("a wait started after the request ended")
		}
	})

	t.Run("request ends during a wait", func(t *testing.T) {
		req, cancel := context.WithCancel(context.Background())
		ctx, g := newExecGate(req)
		if !g.enter() {
			t.Fatal("no wait before the request ended")
		}
		cancel()
		// Wait until the gate has seen the request's end (AfterFunc runs
		// on a goroutine of its own).
		seen := func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.ended }
		for stop := time.Now().Add(30 * time.Second); !seen(); time.Sleep(time.Millisecond) {
			if time.Now().After(stop) {
				t.Fatal("the gate never saw the request end")
			}
		}
		if ended(ctx) {
			t.Fatal("the context ended during a wait")
		}
		if g.leave() {
			t.Error("leave says go on after the request ended")
		}
		if !ended(ctx) {
			t.Error("the context did not end when the wait was left")
		}
	})

	t.Run("close", func(t *testing.T) {
		req, cancel := context.WithCancel(context.Background())
		defer cancel()
		ctx, g := newExecGate(req)
		if !g.enter() || !g.leave() {
			t.Fatal("a wait refused during the request")
		}
		g.close()
		if !ended(ctx) || g.enter() {
			t.Error("the context goes on after close")
		}
	})
}
