package workers

import (
	"runtime"
	"testing"
	"time"
)

// TestReuse: a function handed over while a goroutine waits runs on it, and
// StopIdle ends the waiting ones.
func TestReuse(t *testing.T) {
	p := New(time.Minute)
	ran := make(chan struct{}, 1)
	p.Go(func() { ran <- struct{}{} }) // a goroutine starts, runs it, then waits
	<-ran
	// The send succeeds only with a goroutine waiting in its select: retry
	// until it gets there.
	deadline := time.Now().Add(time.Minute)
	for handed := false; !handed; {
		select {
		case p.work <- func() { ran <- struct{}{} }:
			handed = true
		default:
			if time.Now().After(deadline) {
				t.Fatal("no goroutine waited for a function after running one")
			}
			time.Sleep(time.Millisecond)
		}
	}
	<-ran
	before := runtime.NumGoroutine()
	for p.StopIdle(); runtime.NumGoroutine() >= before; {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after StopIdle, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
		p.StopIdle()
	}
}

// TestIdleEnds: a goroutine that waits its idle time for work ends.
func TestIdleEnds(t *testing.T) {
	p := New(time.Millisecond)
	done := make(chan struct{})
	p.Go(func() { close(done) })
	<-done
	before := runtime.NumGoroutine()
	deadline := time.Now().Add(time.Minute)
	for runtime.NumGoroutine() >= before {
		if time.Now().After(deadline) {
			t.Fatal("the idle goroutine did not end")
		}
		time.Sleep(time.Millisecond)
	}
}
