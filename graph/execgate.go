package graph

import (
	"context"
	"sync"
	"time"

	"github.com/workspacenet/facade/restclient"
)

// execGate keeps the context gqlgen executes a deferred operation on alive
// while the pump waits in gqlgen for a deferred part.
//
// gqlgen v0.17.98's query handler waits for the next deferred result without
// watching its context (generated Exec, `<-ec.DeferredResults`), and a
// deferred group whose context has ended drops its result
// (ExecutionContextState.ProcessDeferredGroup): a wait in progress when the
// request ends could last forever. So the gate's context ends when the
// request does, except while a wait is in progress (enter, leave): then
// when the wait returns. Meanwhile everything a deferred field waits for
// ends with the request itself: its upstream calls (restclient.WithEnd) and
// the wait for the initial payload (deferral.wait), so every group
// completes, sends its part, and the wait returns.
type execGate struct {
	mu      sync.Mutex
	waiting bool // the pump is in gqlgen's handler
	ended   bool // the request has ended or the operation is over
	end     context.Context
	cancel  context.CancelCauseFunc
	stop    func() bool
}

// newExecGate returns the context to execute on: end's values and deadline,
// ended by the gate.
func newExecGate(end context.Context) (context.Context, *execGate) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(end))
	g := &execGate{end: end, cancel: cancel}
	g.stop = context.AfterFunc(end, g.requestEnded)
	ctx = restclient.WithEnd(ctx, end)
	if d, ok := end.Deadline(); ok {
		ctx = deadlined{ctx, d}
	}
	return ctx, g
}

func (g *execGate) requestEnded() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ended = true
	if !g.waiting {
		g.cancel(context.Cause(g.end))
	}
}

// enter reports whether the pump may wait in gqlgen's handler: false once
// the request has ended (the groups may have dropped their parts).
func (g *execGate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended {
		return false
	}
	g.waiting = true
	return true
}

// leave ends a wait; false if the request ended meanwhile, when the
// context is ended now.
func (g *execGate) leave() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.waiting = false
	if g.ended {
		g.cancel(context.Cause(g.end))
		return false
	}
	return true
}

// close ends the context once the operation has nothing more to deliver.
func (g *execGate) close() {
	g.stop()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ended = true
	if !g.waiting {
		g.cancel(context.Canceled)
	}
}

// deadlined reports the request's deadline on the gate's context (which
// has none of its own: the gate ends it), for what decides by the deadline
// (the budget's refusals).
type deadlined struct {
	context.Context
	d time.Time
}

func (c deadlined) Deadline() (time.Time, bool) { return c.d, true }
