package restclient

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/workspacenet/facade/internal/base/workers"
)

// Shared GETs
//
// Identical GETs in flight at the same time — same method, same full URL
// (path and query) and the same credentials (Authorization and
// service-network-id) — share one upstream call: the first caller starts it,
// later ones wait for it. Calls with different credentials never share. Each
// caller decodes the shared body itself, so every caller gets its own objects
// — except callers whose context says they only read results
// (WithReadOnlyResults): the body is decoded once for all of them and they
// get the same objects. Response headers are copied per caller. POST and PUT
// are never shared.
//
// The shared call runs detached from any single caller: a caller whose
// context ends returns ctx.Err() at once and the call goes on for the others.
// When the last waiter has left, the call is cancelled. Retries wait for a
// backoff only when some waiter's deadline leaves room for it; each attempt
// is bounded by the per-attempt timeout.
//
// Background calls (Scope.Background: the pollers') never hold up an
// interactive caller. An interactive caller that finds a background flight
// not yet sent (waiting for its Send hooks: the rate budget's slot, at the
// lowest priority) does not join it: it starts the call itself, with its
// own hooks (its own place in the budget), and the background flight stops
// waiting and follows it: its waiters get the interactive call's answer,
// and one request goes upstream. A background flight already sent is
// joined as any other. So a flight's place in the budget is that of the
// best of its callers: a background caller joining an interactive flight
// waits at the interactive caller's place, never the other way round.
//
// Call hooks: every caller's hooks (hooks.go) still see its own logical call.
// CallInfo.Shared is false for the caller that started the upstream call and
// true for those that waited for it, so counting CallInfos with Shared false
// counts real upstream calls. Status and Retries are the shared call's;
// Duration is each caller's own wait.

// WithSharedGets turns sharing of identical concurrent GETs on or off
// (default on).
func WithSharedGets(on bool) Option {
	return func(c *Client) error {
		c.shareGets = on
		return nil
	}
}

// flightKey identifies a GET for sharing: its method, its URL and the
// Identity of its credentials (a hash, computed once per context by
// WithCredentials: the credentials stay out of the map, and no call hashes).
type flightKey struct{ method, target, identity string }

func newFlightKey(method, target string, creds who) flightKey {
	return flightKey{method: method, target: target, identity: creds.id}
}

// flight is one shared upstream call.
type flight struct {
	done    chan struct{} // closed when res and err are set
	starter detached      // the first caller's context, the call's parent
	cancel  context.CancelFunc
	res     fetched
	err     error

	// A background flight's: stopSend cancels its call (it follows an
	// interactive one from then on).
	background bool
	stopSend   context.CancelFunc

	// The body decoded once for the read-only waiters (parsed).
	parseOnce sync.Once
	parseFn   uintptr // the code of the parse that made value
	value     any
	page      pageInfo
	parseErr  error

	// Guarded by flights.mu.
	waiters   int
	latest    time.Time // latest deadline of the waiters
	unbounded bool      // some waiter had no deadline
	sent      bool      // a background flight's request passed its Send hooks
	follow    *flight   // the interactive flight a background one follows
}

// errFollows ends the call of a background flight that an interactive
// caller overtook between the budget's grant and the request (its slot is
// left unused: a budget cannot take a slot back).
var errFollows = errors.New("restclient: the shared call follows an interactive one")

// detached is a context's values without its cancellation and deadline, as
// context.WithoutCancel, but kept in the flight rather than allocated: the
// shared call runs for every waiter, whichever of them leaves. (Deriving
// from it registers nothing with it: its Done is nil.)
type detached struct{ context.Context }

func (detached) Deadline() (time.Time, bool) { return time.Time{}, false }
func (detached) Done() <-chan struct{}       { return nil }
func (detached) Err() error                  { return nil }

// flights holds a Client's shared calls in flight.
type flights struct {
	mu sync.Mutex
	m  map[flightKey]*flight
	// pool runs the flights on goroutines kept for flightIdle after one.
	pool *workers.Pool
}

// deadline returns the latest deadline of the flight's waiters so far.
func (g *flights) deadline(f *flight) (time.Time, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f.unbounded {
		return time.Time{}, false
	}
	return f.latest, true
}

// alone reports whether the done flight f had one waiter (the caller):
// its answer then needs no copy. No waiter joins a done flight.
func (g *flights) alone(f *flight) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return f.waiters == 1 && f.follow == nil
}

// leave removes a waiter that gave up; the last one cancels the call.
func (g *flights) leave(key flightKey, f *flight) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f.waiters--
	if f.waiters == 0 {
		if g.m[key] == f {
			delete(g.m, key) // later callers start afresh
		}
		f.cancel()
	}
}

// parsed returns the flight's body decoded by parse, decoding it on the
// first call. Every waiter of a flight asks the same route, but not always
// with the same parse (GetResource and GetResourceLazily): a waiter whose
// parse is not the one the value was made with decodes the body itself.
func (f *flight) parsed(parse parseFunc) (any, pageInfo, error) {
	fn := reflect.ValueOf(parse).Pointer()
	f.parseOnce.Do(func() { f.parseFn = fn; f.value, f.page, f.parseErr = parse(f.res.data) })
	if fn != f.parseFn {
		return parse(f.res.data)
	}
	return f.value, f.page, f.parseErr
}

// WithReadOnlyResults returns ctx saying that its caller never modifies the
// objects a call returns: identical GETs in flight at once (same URL, same
// credentials) then hand every such caller the same decoded objects instead
// of decoding the body once per caller.
func WithReadOnlyResults(ctx context.Context) context.Context {
	return WithScope(ctx, Scope{ReadOnlyResults: true})
}

// sharedFetch joins or starts the shared call of a GET; background says
// the caller is background work (Scope.Background). joined reports whether
// the answer came from a call another caller had started. A done ctx
// returns ctx.Err().
func (c *Client) sharedFetch(ctx context.Context, rc call, target string, creds who, background bool) (res fetched, joined bool, fl *flight, err error) {
	key := newFlightKey(rc.method, target, creds)
	dl, hasDL := ctx.Deadline()
	g := &c.flights

	g.mu.Lock()
	f, joined := g.m[key]
	switch {
	case !joined:
		f = c.startFlight(ctx, key, rc, target, creds, background)
	case f.background && !background && !f.sent && f.follow == nil:
		// Overtake the background call: start ours, and make it follow.
		lead := c.startFlight(ctx, key, rc, target, creds, false)
		lead.waiters++ // the background flight, for all its waiters
		lead.latest, lead.unbounded = f.latest, f.unbounded
		f.follow = lead
		f.stopSend()
		f, joined = lead, false
	}
	f.waiters++
	if !hasDL {
		f.unbounded = true
	} else if dl.After(f.latest) {
		f.latest = dl
	}
	g.mu.Unlock()

	select {
	case <-f.done:
		return f.res, joined || f.follow != nil, f, copyError(f.err)
	case <-ctx.Done():
		g.leave(key, f)
		return fetched{}, joined, nil, ctx.Err()
	}
}

// startFlight starts the shared call of key with ctx's values (flights.mu
// held). A background flight's call passes one more Send hook, innermost:
// the moment it is granted, the flight counts as sent, unless an
// interactive caller overtook it first.
func (c *Client) startFlight(ctx context.Context, key flightKey, rc call, target string, creds who, background bool) *flight {
	g := &c.flights
	f := &flight{done: make(chan struct{}), starter: detached{ctx}, background: background}
	fctx, cancel := context.WithCancel(&f.starter)
	f.cancel = cancel
	sctx := fctx
	if background {
		sctx, f.stopSend = context.WithCancel(fctx)
		sctx = WithCallHooks(sctx, CallHooks{Send: func(context.Context, CallStart) error { return g.sending(f) }})
	}
	if g.m == nil {
		g.m = make(map[flightKey]*flight)
	}
	g.m[key] = f
	g.pool.Go(func() { c.runFlight(fctx, sctx, key, f, rc, target, creds) })
	return f
}

// sending marks a background flight sent, or refuses the request of one
// that follows an interactive flight.
func (g *flights) sending(f *flight) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f.follow != nil {
		return errFollows
	}
	f.sent = true
	return nil
}

// flightIdle is how long a goroutine that made a shared call waits for the
// next one before it exits (flights.pool): reusing it saves the growth of a
// new goroutine's stack to the depth of an HTTP exchange (runtime.newstack
// and copystack were ~8 % of a call's CPU).
const flightIdle = 100 * time.Millisecond

// runFlight makes the shared call (with sctx: fctx, or its child that an
// interactive caller overtaking a background flight cancels) and hands its
// result to the waiters; a background flight overtaken hands them the
// interactive flight's, or gives it up when its own waiters all left
// (fctx ends).
func (c *Client) runFlight(fctx, sctx context.Context, key flightKey, f *flight, rc call, target string, creds who) {
	res, err := c.guardedFetch(sctx, rc, target, nil, creds, func() (time.Time, bool) { return c.flights.deadline(f) })
	g := &c.flights
	g.mu.Lock()
	lead := f.follow
	g.mu.Unlock()
	if lead != nil {
		select {
		case <-lead.done:
			res, err = lead.res, lead.err
		case <-fctx.Done():
			g.leave(key, lead)
			res, err = fetched{}, fctx.Err()
		}
	}
	g.mu.Lock()
	if g.m[key] == f {
		delete(g.m, key)
	}
	f.res, f.err = res, err
	g.mu.Unlock()
	f.cancel()
	if f.stopSend != nil {
		f.stopSend()
	}
	close(f.done)
}

// copyError returns a copy of the error types callers may inspect, so one
// caller cannot alter what another sees.
func copyError(err error) error {
	switch e := err.(type) {
	case *ErrorResponse:
		cp := *e
		return &cp
	case *TransportError:
		cp := *e
		return &cp
	case *DecodeError:
		cp := *e
		return &cp
	case *CircuitOpenError:
		cp := *e
		return &cp
	case *RefusedCredentialsError:
		cp := *e
		cp.Refused = copyError(e.Refused).(*ErrorResponse)
		return &cp
	}
	return err
}

// copyResponse returns a copy of hr with its own header maps (the body is
// already consumed and closed).
func copyResponse(hr *http.Response) *http.Response {
	cp := *hr
	cp.Header = hr.Header.Clone()
	cp.Trailer = hr.Trailer.Clone()
	return &cp
}
