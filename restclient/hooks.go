package restclient

import (
	"context"
	"net/http"
	"time"
)

// The call pipeline
//
// Every logical call (one operation, with its retries) passes through the
// call hooks its context carries, installed per request with WithCallHooks:
//
//	Before(ctx, CallStart)  may refuse the call: nothing is sent and the
//	                        caller gets Before's error as is;
//	... the call: shared GET or breaker, then for each HTTP attempt:
//	    Send(ctx, CallStart)      may wait (a rate budget) or refuse the
//	                              attempt (the call ends with its error);
//	    Answered(ctx, CallStart, *http.Response)  sees every answer, any
//	                              status, before the retry decision;
//	... retries, decoding ...
//	After(ctx, CallInfo)    sees the call's outcome once, when it ends.
//
// A joined shared GET is a logical call of its caller too: Before and After
// run for it (CallInfo.Shared tells it made no upstream request of its own);
// Send and Answered run for the requests actually sent, with the hooks of the
// caller that started the shared call.
// Hooks run on the caller's goroutine and must be safe for concurrent use.
// Several hook sets nest: the one installed first (outermost) runs Before
// first and After last. When a Before refuses, the hook sets outside it,
// which admitted the call, see After with the refusal as CallInfo.Err; the
// refusing set and those inside it see nothing more.

// CallStart describes a logical call about to be made.
type CallStart struct {
	Method string // "GET"
	Route  string // path template: the Operation's Route
	// Priority is the call's rank among its request's calls (lower goes
	// first), as the caller set it with WithPriority (0 without).
	Priority int
}

type priorityKey struct{}

// WithPriority returns ctx whose calls have priority p (CallStart.Priority):
// the caller ranks its own calls, and hooks read the rank from CallStart.
func WithPriority(ctx context.Context, p int) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// priorityOf is the priority ctx carries (0 without).
func priorityOf(ctx context.Context) int {
	p, _ := ctx.Value(priorityKey{}).(int)
	return p
}

// CallInfo describes one logical upstream call, after its retries.
type CallInfo struct {
	Method   string        // "GET"
	Route    string        // path template: the Operation's Route (no base path, no ids)
	Status   int           // last HTTP status, 0 if no response
	Duration time.Duration // whole call including retries and backoff
	Retries  int           // attempts - 1
	// RateLimited counts the 429 answers the call was retried after.
	RateLimited int
	// Waited is the time the call's attempts spent in Send hooks (waiting
	// for a rate budget's slot).
	Waited time.Duration
	Err    error // nil on success
	// Shared is true when the call waited for an identical GET another
	// caller had started (WithSharedGets) instead of calling upstream itself.
	Shared bool
	// Cached is true when the response cache answered (WithCache): no
	// upstream call, and no Before or Send hook ran.
	Cached bool
}

// CallHooks are the per-call hooks of one context. Either may be nil.
type CallHooks struct {
	// Before runs before the call; a non-nil error refuses it.
	Before func(ctx context.Context, call CallStart) error
	// Send runs before each HTTP request of the call; it may block, and a
	// non-nil error ends the call unsent with that error.
	Send func(ctx context.Context, call CallStart) error
	// Answered sees each HTTP answer of the call.
	Answered func(ctx context.Context, call CallStart, resp *http.Response)
	// After runs once when a call this set admitted ends.
	After func(ctx context.Context, info CallInfo)
}

// WithCallHooks returns ctx carrying hs inside the hooks ctx already
// carries, hs[0] outermost. Installing a request's hooks in one call (or
// with its other settings, WithScope) costs one context value.
func WithCallHooks(ctx context.Context, hs ...CallHooks) context.Context {
	return WithScope(ctx, Scope{Hooks: hs})
}

func callHooks(ctx context.Context) []CallHooks { return scopeOf(ctx).hooks }

// before runs the Before hooks outermost first. When one refuses, it returns
// the hooks that admitted the call (whose After must still run) and the error.
func before(ctx context.Context, chain []CallHooks, cs CallStart) ([]CallHooks, error) {
	for i, h := range chain {
		if h.Before == nil {
			continue
		}
		if err := h.Before(ctx, cs); err != nil {
			return chain[:i], err
		}
	}
	return chain, nil
}

// after runs the After hooks innermost first.
func after(ctx context.Context, chain []CallHooks, info CallInfo) {
	for i := len(chain) - 1; i >= 0; i-- {
		if f := chain[i].After; f != nil {
			f(ctx, info)
		}
	}
}

// send runs the Send hooks outermost first, timing them.
func send(ctx context.Context, chain []CallHooks, cs CallStart) (time.Duration, error) {
	start := time.Now()
	for _, h := range chain {
		if h.Send == nil {
			continue
		}
		if err := h.Send(ctx, cs); err != nil {
			return time.Since(start), err
		}
	}
	return time.Since(start), nil
}

// hasSend reports whether a hook of chain has a Send: without one, an
// attempt needs no context for the Send hooks, nor their timing.
func hasSend(chain []CallHooks) bool {
	for _, h := range chain {
		if h.Send != nil {
			return true
		}
	}
	return false
}

// answered runs the Answered hooks.
func answered(ctx context.Context, chain []CallHooks, cs CallStart, hr *http.Response) {
	for _, h := range chain {
		if h.Answered != nil {
			h.Answered(ctx, cs, hr)
		}
	}
}
