package restclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/sony/gobreaker/v2"
)

// Circuit breaking
//
// A Client keeps two kinds of circuit breakers per upstream operation,
// "METHOD route-template" (e.g. "GET /resources/v1/{id}"):
//
//   - one per operation and upstream client (Credentials.Identity): it counts
//     every failure of that client's calls and refuses only that client's
//     calls when it opens, so one tenant's failing calls (its 5xx answers, its
//     timeouts) cannot refuse another tenant's;
//   - one per operation for everyone: it counts only evidence that the
//     upstream itself is unwell: a connection that could not be made
//     (refused, unreachable), or failures of at least two distinct clients
//     within the window. An upstream-wide outage therefore opens it as fast
//     as before, for every client.
//
// A breaker guards the whole logical call: the retries of one call are one
// outcome, so a failing route is not hit MaxRetries+1 times per failure
// count, and a call that fails fast is never retried. Shared GETs
// (WithSharedGets) pass through the breakers once per upstream call, not once
// per waiter.
//
// Outcomes:
//   - failure: a 5xx answer or a *TransportError (timeout, refused, reset,
//     body cut short) — the upstream is unwell;
//   - ignored: a 429 (the caller is being throttled, the upstream is fine),
//     the caller's own cancellation or deadline, and calls a Send hook
//     refused before anything was sent; they say nothing about the upstream;
//   - success: everything else, including 4xx answers and 2xx bodies that do
//     not decode (the upstream answered).
//
// While a breaker is open, calls fail at once, without any network I/O, with
// a *CircuitOpenError. After OpenTimeout it lets HalfOpenProbes calls through;
// if they all succeed it closes, and the first failure opens it again.

// ErrCircuitOpen is the sentinel every *CircuitOpenError unwraps to.
var ErrCircuitOpen = errors.New("restclient: circuit open")

// CircuitOpenError is the failure of a call refused by an open (or half-open
// and busy probing) circuit breaker: the upstream route was not called.
type CircuitOpenError struct {
	Method, Route string // Route is the path template
	// Client is true when the caller's own breaker refused the call (its
	// calls of this route kept failing), false for the route's breaker
	// (the upstream route is unwell for everyone).
	Client bool
}

// Error formats e as "GET /resources/v1/{id}: circuit open: upstream route unavailable, not called".
func (e *CircuitOpenError) Error() string {
	if e.Client {
		return e.Method + " " + e.Route + ": circuit open: this client's calls of the route keep failing, not called"
	}
	return e.Method + " " + e.Route + ": circuit open: upstream route unavailable, not called"
}

// Unwrap returns ErrCircuitOpen.
func (e *CircuitOpenError) Unwrap() error { return ErrCircuitOpen }

// IsCircuitOpen reports whether err is a call refused by an open breaker.
func IsCircuitOpen(err error) bool { return errors.Is(err, ErrCircuitOpen) }

// BreakerState is the state of one route's circuit breaker.
type BreakerState int

// The states of a breaker.
const (
	BreakerClosed   BreakerState = iota // calls pass; outcomes are counted
	BreakerHalfOpen                     // a few probe calls pass
	BreakerOpen                         // calls fail fast
)

// String returns "closed", "half-open" or "open".
func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerHalfOpen:
		return "half-open"
	case BreakerOpen:
		return "open"
	}
	return "unknown"
}

func breakerState(s gobreaker.State) BreakerState {
	switch s {
	case gobreaker.StateHalfOpen:
		return BreakerHalfOpen
	case gobreaker.StateOpen:
		return BreakerOpen
	}
	return BreakerClosed
}

// BreakerSettings configure the circuit breakers of a Client. Zero fields
// take the defaults of DefaultBreakerSettings.
type BreakerSettings struct {
	// Disabled turns circuit breaking off.
	Disabled bool
	// ConsecutiveFailures opens the breaker after this many failures in a
	// row (default 5).
	ConsecutiveFailures uint32
	// FailureRatio opens the breaker when failures/(failures+successes)
	// reaches it over at least MinRequests counted calls within Window
	// (default 0.5; at most 1).
	FailureRatio float64
	// MinRequests is the number of counted calls the ratio needs (default 10).
	MinRequests uint32
	// Window is the rolling window of the closed state's counts (default 10s).
	Window time.Duration
	// OpenTimeout is how long the breaker stays open before probing (default 5s).
	OpenTimeout time.Duration
	// HalfOpenProbes is how many calls a half-open breaker lets through; all
	// must succeed to close it (default 3).
	HalfOpenProbes uint32
}

// DefaultBreakerSettings are the breaker settings of a new Client.
func DefaultBreakerSettings() BreakerSettings {
	return BreakerSettings{
		ConsecutiveFailures: 5,
		FailureRatio:        0.5,
		MinRequests:         10,
		Window:              10 * time.Second,
		OpenTimeout:         5 * time.Second,
		HalfOpenProbes:      3,
	}
}

// BreakerStateFunc is told of every state change of a route's breaker. route
// is "METHOD template" ("GET /resources/v1/{id}"). It runs while the breaker
// is locked, on the goroutine of the call that caused the change: it must be
// quick and must not use the Client (no calls, no BreakerState): that would
// deadlock.
type BreakerStateFunc func(route string, from, to BreakerState)

// WithCircuitBreaker sets the circuit breaker settings (zero fields take the
// defaults); BreakerSettings{Disabled: true} turns breaking off.
func WithCircuitBreaker(s BreakerSettings) Option {
	return func(c *Client) error {
		if s.Disabled {
			c.breakerSettings = BreakerSettings{Disabled: true}
			return nil
		}
		if s.FailureRatio < 0 || s.FailureRatio > 1 || s.Window < 0 || s.OpenTimeout < 0 {
			return errors.New("restclient: WithCircuitBreaker: FailureRatio must be in [0, 1] and durations non-negative")
		}
		d := DefaultBreakerSettings()
		if s.ConsecutiveFailures == 0 {
			s.ConsecutiveFailures = d.ConsecutiveFailures
		}
		if s.FailureRatio == 0 {
			s.FailureRatio = d.FailureRatio
		}
		if s.MinRequests == 0 {
			s.MinRequests = d.MinRequests
		}
		if s.Window == 0 {
			s.Window = d.Window
		}
		if s.OpenTimeout == 0 {
			s.OpenTimeout = d.OpenTimeout
		}
		if s.HalfOpenProbes == 0 {
			s.HalfOpenProbes = d.HalfOpenProbes
		}
		c.breakerSettings = s
		return nil
	}
}

// WithBreakerStateChange installs fn, told of every breaker state change.
func WithBreakerStateChange(fn BreakerStateFunc) Option {
	return func(c *Client) error {
		c.onBreakerChange = fn
		return nil
	}
}

// breakerBuckets is the number of buckets of the rolling window.
const breakerBuckets = 10

// breaker is the part of a route's breaker the Client uses: a
// *gobreaker.TwoStepCircuitBreaker[struct{}] (tests wrap one to choose when
// its Allow runs).
type breaker interface {
	State() gobreaker.State
	Allow() (done func(success bool), err error)
}

// breakers holds a Client's breakers, made on first use.
type breakers struct {
	settings BreakerSettings
	onChange BreakerStateFunc

	mu      sync.Mutex
	m       map[breakerKey]breaker
	clients int                             // per-client breakers in m
	failing map[breakerKey]map[string]int64 // operation -> client -> unix nanos of its last failure
}

// breakerKey names a breaker: an operation, and a client identity ("" for
// the breaker for everyone).
type breakerKey struct{ method, route, client string }

// name is the breaker's name in state changes: "GET /resources/v1/{id}", or
// with " client <first 8 hex of the identity>".
func (k breakerKey) name() string {
	if k.client == "" {
		return k.method + " " + k.route
	}
	return k.method + " " + k.route + " client " + k.client[:8]
}

// maxClientBreakers bounds the per-client breakers kept: beyond it, closed
// ones are forgotten (a forgotten breaker only loses its counts).
const maxClientBreakers = 4096

// get returns the breaker of method route for everyone (client "") or for
// one client identity; nil when breaking is off.
func (b *breakers) get(method, route, client string) breaker {
	if b.settings.Disabled {
		return nil
	}
	key := breakerKey{method, route, client}
	b.mu.Lock()
	defer b.mu.Unlock()
	if cb, ok := b.m[key]; ok {
		return cb
	}
	s := b.settings
	st := gobreaker.Settings{
		Name:         key.name(),
		MaxRequests:  s.HalfOpenProbes,
		Interval:     s.Window,
		BucketPeriod: max(s.Window/breakerBuckets, time.Millisecond),
		Timeout:      s.OpenTimeout,
		ReadyToTrip: func(n gobreaker.Counts) bool {
			if n.ConsecutiveFailures >= s.ConsecutiveFailures {
				return true
			}
			// Requests also counts ignored outcomes: use the counted ones.
			counted := n.TotalFailures + n.TotalSuccesses
			return counted >= s.MinRequests && float64(n.TotalFailures) >= s.FailureRatio*float64(counted)
		},
	}
	if fn := b.onChange; fn != nil {
		st.OnStateChange = func(name string, from, to gobreaker.State) {
			fn(name, breakerState(from), breakerState(to))
		}
	}
	cb := gobreaker.NewTwoStepCircuitBreaker[struct{}](st)
	if b.m == nil {
		b.m = make(map[breakerKey]breaker)
	}
	if client != "" {
		if b.clients >= maxClientBreakers {
			b.forgetClosedClients()
		}
		b.clients++
	}
	b.m[key] = cb
	return cb
}

func (b *breakers) forgetClosedClients() {
	for key, cb := range b.m {
		if key.client != "" && cb.State() == gobreaker.StateClosed {
			delete(b.m, key)
			b.clients--
		}
	}
}

// upstreamWide reports whether a failure of client on method route is
// evidence against the upstream itself: a connection that could not be made,
// or another client's failure on the route within the window.
func (b *breakers) upstreamWide(method, route, client string, err error, now time.Time) bool {
	if connectFailed(err) {
		return true
	}
	key := breakerKey{method: method, route: route}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failing == nil {
		b.failing = map[breakerKey]map[string]int64{}
	}
	f := b.failing[key]
	if f == nil {
		f = map[string]int64{}
		b.failing[key] = f
	}
	since := now.Add(-b.settings.Window).UnixNano()
	others := false
	for c, at := range f {
		switch {
		case at < since:
			delete(f, c)
		case c != client:
			others = true
		}
	}
	f[client] = now.UnixNano()
	return others
}

// connectFailed reports whether err is a transport error that happened
// before any request reached the upstream: refused, unreachable, no route.
func connectFailed(err error) bool {
	te, ok := errors.AsType[*TransportError](err)
	if !ok {
		return false
	}
	if op, ok := errors.AsType[*net.OpError](te.Err); ok && op.Op == "dial" {
		return true
	}
	return errors.Is(te.Err, syscall.ECONNREFUSED)
}

// state returns the current state of method route's breaker for everyone
// (closed when breaking is off). Reading it moves an open breaker whose
// timeout passed to half-open.
func (b *breakers) state(method, route, client string) BreakerState {
	cb := b.get(method, route, client)
	if cb == nil {
		return BreakerClosed
	}
	return breakerState(cb.State())
}

// BreakerState returns the state of the route breaker (for everyone) of the
// operation method route (route is the path template, an Operation's
// Route); closed when circuit breaking is off or the route has not been
// called.
func (c *Client) BreakerState(method, route string) BreakerState {
	return c.breakers.state(method, route, "")
}

// ClientBreakerState returns the state of the breaker of creds' client for
// the operation method route.
func (c *Client) ClientBreakerState(method, route string, creds Credentials) BreakerState {
	return c.breakers.state(method, route, creds.Identity())
}

type outcome int

const (
	outcomeSuccess outcome = iota
	outcomeFailure
	outcomeIgnored
)

// classify says what err, the result of a logical call made with ctx, tells
// about the upstream's health.
func classify(ctx context.Context, err error) outcome {
	switch {
	case err == nil:
		return outcomeSuccess
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return outcomeIgnored // the caller gave up
	case StatusCode(err) == http.StatusTooManyRequests:
		return outcomeIgnored
	case IsServerError(err), IsTransport(err):
		return outcomeFailure
	}
	return outcomeSuccess
}

// breakerFetch runs fetch through the breakers of rc's route: the route's
// and the caller's. A refused call returns a *CircuitOpenError without
// network I/O.
func (c *Client) breakerFetch(ctx context.Context, rc call, target string, payload []byte, creds who, deadline func() (time.Time, bool)) (fetched, error) {
	id := creds.id
	rb := c.breakers.get(rc.method, rc.route, "")
	if rb == nil {
		return c.fetch(ctx, rc, target, payload, creds, deadline)
	}
	cb := c.breakers.get(rc.method, rc.route, id)
	routeDone, err := rb.Allow()
	if err != nil {
		return fetched{}, &CircuitOpenError{Method: rc.method, Route: rc.route}
	}
	clientDone, err := cb.Allow()
	if err != nil {
		report(rb, routeDone, outcomeIgnored)
		return fetched{}, &CircuitOpenError{Method: rc.method, Route: rc.route, Client: true}
	}
	f, err := c.fetch(ctx, rc, target, payload, creds, deadline)
	o := classify(ctx, err)
	if !f.sent {
		o = outcomeIgnored // refused by a Send hook: the upstream saw nothing
	}
	report(cb, clientDone, o)
	if o == outcomeFailure && !c.breakers.upstreamWide(rc.method, rc.route, id, err, time.Now()) {
		o = outcomeIgnored // one client's failure: its own breaker counts it
	}
	report(rb, routeDone, o)
	return f, err
}

// report tells breaker cb, through the done of the call it admitted, what
// the call's outcome says.
func report(cb breaker, done func(bool), o outcome) {
	switch o {
	case outcomeSuccess:
		done(true)
	case outcomeFailure:
		done(false)
	case outcomeIgnored:
		// gobreaker has no "ignore": in the closed state the outcome is
		// simply not reported (ReadyToTrip only looks at counted outcomes).
		// A half-open breaker must get its probe slot back or it would stay
		// half-open for good (half-open has no timeout) and refuse every
		// call: report a success, as the call is no evidence of failure.
		//
		// The state the call was admitted in is read here, after the call,
		// and never before Allow: Allow itself moves an open breaker whose
		// timeout has passed to half-open, so a read before it could say
		// "open" for a call admitted as a probe, whose slot then leaked.
		// Reading afterwards cannot misjudge a call whose report counts:
		// gobreaker starts a new generation on every state change, and done
		// drops the report of a call admitted in an older generation. So if
		// the report counts, the generation is still the call's, and the
		// state read now is the state the call was admitted in (a concurrent
		// change between this read and done only makes done a no-op). When
		// the state has changed since Allow, done is a no-op whatever we
		// pass, and the new generation started with cleared counts: there is
		// no slot of this call's left to return.
		if cb.State() == gobreaker.StateHalfOpen {
			done(true)
		}
	}
}
