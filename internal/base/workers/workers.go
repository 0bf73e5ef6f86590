// Package workers runs functions on goroutines kept after use.
//
// A new goroutine starts with a small stack and grows it, by copying, to the
// depth of what it runs: gqlgen's execution of a nested object, an HTTP
// exchange and the decoding of its answer. Started anew for every list
// element or upstream call, that growth was up to 15 % of a query's CPU
// (runtime.newstack/copystack). A Pool's goroutine waits, after running a
// function, for the next one for a while, keeping its grown stack.
package workers

import "time"

// Pool runs functions on goroutines that wait up to its idle time for the
// next one. It has no bound: a function never waits for a goroutine.
type Pool struct {
	idle time.Duration
	work chan func() // unbuffered: a send succeeds only when one is waiting
}

// New returns a Pool whose goroutines end after waiting idle for work.
func New(idle time.Duration) *Pool { return &Pool{idle: idle, work: make(chan func())} }

// Go runs f on a goroutine of p waiting for work, or on a new one.
func (p *Pool) Go(f func()) {
	select {
	case p.work <- f:
	default:
		go p.worker(f)
	}
}

// worker runs f, then the functions handed to it, until none comes for the
// idle time or StopIdle hands it nil.
func (p *Pool) worker(f func()) {
	idle := time.NewTimer(p.idle)
	defer idle.Stop()
	for {
		f()
		f = nil // keep nothing of the finished work alive
		idle.Reset(p.idle)
		select {
		case f = <-p.work:
			if f == nil {
				return
			}
		case <-idle.C:
			return
		}
	}
}

// StopIdle makes the goroutines waiting for work end now; those running a
// function end after it, when idle.
func (p *Pool) StopIdle() {
	for {
		select {
		case p.work <- nil:
		default:
			return
		}
	}
}
