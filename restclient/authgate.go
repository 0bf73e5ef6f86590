package restclient

import (
	dlist "container/list"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The authentication gate
//
// Credentials the client has not seen accepted cost the upstream one call,
// not one per field: a GraphQL request of twenty fields with an unknown token
// would otherwise send twenty requests at once, all answered 401.
//
//   - Trusted: a credential (its Identity) answered 2xx within Trust. Its
//     calls go out at once, as without the gate; each 2xx extends the trust.
//   - Unproven: any other. Its first call goes alone (the probe); the calls
//     of the same credential that arrive meanwhile wait for the probe's
//     answer (see below). A 2xx makes the credential trusted and the
//     waiters go. A refusal of the credential (a 401, or a 403 saying the
//     credentials are not of the service-network-id's network:
//     IsNetworkMismatch) fails every waiter with a *RefusedCredentialsError,
//     unsent, and makes the credential refused. Any other answer (404, a 403
//     for a missing scope, 429, 5xx, a transport error) lets the waiters go:
//     it proves nothing against the credential. A probe that was not sent
//     (refused by a hook or an open breaker) or whose caller left hands the
//     probe on to one waiter. The waiters never go beside an unanswered
//     probe (a slow 401 would otherwise cost a call each): they wait as long
//     as their context allows, or ProbeWait when set, then fail unsent with
//     ErrProbeUnanswered.
//   - Refused: a credential refused within RefusedTTL. Its calls fail at
//     once, unsent, with a *RefusedCredentialsError wrapping that answer: a
//     flood of one bad token costs one upstream call per RefusedTTL. A
//     refused credential is unproven again once RefusedTTL has passed.
//
// A 401 that refuses one operation, not the credential (Basic credentials on
// an operation the API accepts with Bearer only), is not held against the
// credential. A trusted credential that starts being refused (a revoked
// token) costs the calls already on their way, then is refused.
//
// Memory: each table (trusted, refused) holds at most MaxEntries
// credentials, the least recently confirmed evicted first; an entry is the
// Identity (32 bytes), a time and, for a refused credential, the refusing
// answer with its upstream message and type cut to refusalText bytes. Probes in flight are
// bounded by the calls in flight.

// AuthGate configures the authentication gate (WithAuthGate).
type AuthGate struct {
	// Trust is how long a 2xx answer keeps a credential trusted. 0 turns
	// the gate off: every call goes out at once and no 401 is remembered.
	Trust time.Duration
	// RefusedTTL is how long a refusal (a 401, or a 403 naming the
	// network) refuses a credential's calls unsent; 0 remembers none (the
	// waiters of a probe still fail with it).
	RefusedTTL time.Duration
	// MaxEntries bounds each table, trusted and refused (at least 1 when
	// Trust is set).
	MaxEntries int
	// ProbeWait bounds how long the calls of an unproven credential wait
	// for the answer to its first call; then they fail, unsent, with
	// ErrProbeUnanswered. 0 = as long as their context allows.
	ProbeWait time.Duration
}

// Defaults of the authentication gate.
const (
	DefaultAuthTrust      = 5 * time.Minute
	DefaultAuthRefusedTTL = 30 * time.Second
	DefaultAuthMaxEntries = 10_000
	DefaultAuthProbeWait  = 0
)

// DefaultAuthGate returns the gate a Client has without WithAuthGate.
func DefaultAuthGate() AuthGate {
	return AuthGate{Trust: DefaultAuthTrust, RefusedTTL: DefaultAuthRefusedTTL, MaxEntries: DefaultAuthMaxEntries, ProbeWait: DefaultAuthProbeWait}
}

// WithAuthGate configures the authentication gate (default DefaultAuthGate);
// AuthGate{} turns it off.
func WithAuthGate(g AuthGate) Option {
	return func(c *Client) error {
		if g.Trust < 0 || g.RefusedTTL < 0 || g.MaxEntries < 0 || g.ProbeWait < 0 {
			return errors.New("restclient: WithAuthGate: negative value")
		}
		if g.Trust > 0 && g.MaxEntries < 1 {
			return errors.New("restclient: WithAuthGate: MaxEntries must be at least 1")
		}
		c.gate = newAuthGate(g)
		return nil
	}
}

// ErrProbeUnanswered is the error of a call not sent because the first call
// of its unproven credentials had no answer within AuthGate.ProbeWait:
// sent beside it, it could cost the upstream one more refused call. It
// wraps context.DeadlineExceeded: the call ran out of time waiting.
var ErrProbeUnanswered = fmt.Errorf("restclient: not sent: the first call of these credentials had no answer in time: %w", context.DeadlineExceeded)

// RefusedCredentialsError is a call that was not sent because the upstream
// refused its credentials on another call: within RefusedTTL before, or on
// the call it waited for (an unproven credential's first call goes alone).
// It unwraps to the upstream's answer to that call, so StatusCode,
// IsUnauthorized and errors.As see the 401 (or the 403).
type RefusedCredentialsError struct {
	Method, Route string         // this call (not sent)
	Refused       *ErrorResponse // the answer that refused the credentials
}

func (e *RefusedCredentialsError) Error() string {
	return e.Method + " " + e.Route + ": not sent: the upstream refused these credentials (" + e.Refused.Error() + ")"
}

// Unwrap returns the answer that refused the credentials.
func (e *RefusedCredentialsError) Unwrap() error { return e.Refused }

// IsNetworkMismatch reports whether err is a 403 saying that the credentials
// are not those of the service-network-id's network (the service names the
// header in its message), rather than that they lack a scope.
func IsNetworkMismatch(err error) bool {
	e, ok := asErrorResponse(err)
	return ok && e.StatusCode == http.StatusForbidden && strings.HasPrefix(strings.ToLower(e.Message), "service-network-id")
}

// refusalText bounds the upstream message and type a refused credential's
// entry keeps.
const refusalText = 128

// authGate is the state of the gate. A nil *authGate is off.
type authGate struct {
	cfg AuthGate
	now func() time.Time

	mu      sync.Mutex
	trusted lru[struct{}]
	refused lru[*ErrorResponse]
	probes  map[string]*probe
}

// probe is the first call of an unproven credential, which the others wait
// for.
type probe struct {
	done chan struct{}
	// Set before done is closed: refusal fails the waiters; again makes
	// them enter the gate anew (the probe told nothing).
	refusal *ErrorResponse
	again   bool
}

func newAuthGate(g AuthGate) *authGate {
	if g.Trust <= 0 {
		return nil
	}
	return &authGate{cfg: g, now: time.Now,
		trusted: newLRU[struct{}](g.MaxEntries), refused: newLRU[*ErrorResponse](g.MaxEntries),
		probes: map[string]*probe{}}
}

// enter lets a call of creds through the gate: at once when creds are
// trusted, after the probe's answer when another call probes them, or as
// the probe (p non-nil: the caller must report its outcome with learn). It
// refuses the call with a *RefusedCredentialsError when creds are refused,
// with ErrProbeUnanswered when the probe has no answer within ProbeWait,
// and returns ctx.Err() when ctx ends first.
func (g *authGate) enter(ctx context.Context, rc call, creds who) (p *probe, err error) {
	id := creds.id
	for {
		g.mu.Lock()
		now := g.now()
		if e, ok := g.refused.get(id, now); ok {
			g.mu.Unlock()
			return nil, refusedCall(rc, e)
		}
		if _, ok := g.trusted.get(id, now); ok {
			g.mu.Unlock()
			return nil, nil
		}
		w := g.probes[id]
		if w == nil {
			p = &probe{done: make(chan struct{})}
			g.probes[id] = p
			g.mu.Unlock()
			return p, nil
		}
		g.mu.Unlock()
		if !g.await(ctx, w) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, ErrProbeUnanswered
		}
		switch {
		case w.refusal != nil:
			return nil, refusedCall(rc, w.refusal)
		case !w.again:
			return nil, nil
		}
	}
}

// await waits for probe w to end, for ProbeWait at most, or for ctx to
// end; it reports whether w ended.
func (g *authGate) await(ctx context.Context, w *probe) bool {
	var patience <-chan time.Time
	if g.cfg.ProbeWait > 0 {
		t := time.NewTimer(g.cfg.ProbeWait)
		defer t.Stop()
		patience = t.C
	}
	select {
	case <-w.done:
		return true
	case <-ctx.Done():
	case <-patience:
	}
	return false
}

// refusedCall is the error of call rc refused because of e.
func refusedCall(rc call, e *ErrorResponse) error {
	cp := *e
	return &RefusedCredentialsError{Method: rc.method, Route: rc.route, Refused: &cp}
}

// learn records what the outcome of a call of creds (f, err) says about
// them, and ends p, the probe the call was (nil when it was not one).
func (g *authGate) learn(ctx context.Context, p *probe, rc call, creds who, f fetched, err error) {
	id := creds.id
	var refusal *ErrorResponse
	e, answered := asErrorResponse(err)
	switch {
	case answered && e.StatusCode == http.StatusUnauthorized && !bearerOnlyRefusal(rc, creds):
		refusal = keptRefusal(e)
	case answered && IsNetworkMismatch(e):
		refusal = keptRefusal(e)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	switch {
	case err == nil:
		g.trusted.put(id, now.Add(g.cfg.Trust), struct{}{})
		g.refused.remove(id)
	case refusal != nil:
		g.trusted.remove(id)
		if g.cfg.RefusedTTL > 0 {
			g.refused.put(id, now.Add(g.cfg.RefusedTTL), refusal)
		}
	}
	if p == nil {
		return
	}
	p.refusal = refusal
	// Nothing learned when the probe was never sent, or its caller left
	// before its answer: one of the waiters probes instead.
	p.again = err != nil && refusal == nil && !answered && (!f.sent || ctx.Err() != nil)
	if g.probes[id] == p {
		delete(g.probes, id)
	}
	close(p.done)
}

// bearerOnlyRefusal reports whether a 401 to rc refuses the operation
// rather than creds: rc accepts Bearer only and creds are not Bearer.
func bearerOnlyRefusal(rc call, creds who) bool {
	op, ok := LookupOperation(rc.method, rc.route)
	return ok && op.BearerOnly && creds.scheme() != "Bearer"
}

// keptRefusal is the part of e the gate keeps: status, call, type and
// message, the texts cut to refusalText bytes.
func keptRefusal(e *ErrorResponse) *ErrorResponse {
	return &ErrorResponse{StatusCode: e.StatusCode, Method: e.Method, Route: e.Route,
		Message: cutText(e.Message, refusalText), Type: cutText(e.Type, refusalText)}
}

// cutText returns s cut to at most n bytes, on a rune boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return strings.Clone(s)
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return strings.Clone(s[:n])
}

// guardedFetch makes rc through the authentication gate, then the breakers
// (breakerFetch).
func (c *Client) guardedFetch(ctx context.Context, rc call, target string, payload []byte, creds who, deadline func() (time.Time, bool)) (fetched, error) {
	if c.gate == nil {
		return c.breakerFetch(ctx, rc, target, payload, creds, deadline)
	}
	p, err := c.gate.enter(ctx, rc, creds)
	if err != nil {
		return fetched{}, err
	}
	f, err := c.breakerFetch(ctx, rc, target, payload, creds, deadline)
	c.gate.learn(ctx, p, rc, creds, f, err)
	return f, err
}

// lru maps identities to values until an expiry, holding at most max of
// them: putting one more evicts the least recently put.
type lru[V any] struct {
	max   int
	m     map[string]*dlist.Element // of *lruEntry[V]
	order dlist.List                // least recently put first
}

type lruEntry[V any] struct {
	key   string
	until time.Time
	v     V
}

func newLRU[V any](max int) lru[V] {
	return lru[V]{max: max, m: map[string]*dlist.Element{}}
}

// get returns key's value while it has not expired at now (an expired entry
// is dropped).
func (l *lru[V]) get(key string, now time.Time) (V, bool) {
	el, ok := l.m[key]
	if !ok {
		var zero V
		return zero, false
	}
	e := el.Value.(*lruEntry[V])
	if !now.Before(e.until) {
		l.order.Remove(el)
		delete(l.m, key)
		var zero V
		return zero, false
	}
	return e.v, true
}

// put sets key's value and expiry, making it the most recently put.
func (l *lru[V]) put(key string, until time.Time, v V) {
	if el, ok := l.m[key]; ok {
		e := el.Value.(*lruEntry[V])
		e.until, e.v = until, v
		l.order.MoveToBack(el)
		return
	}
	l.m[key] = l.order.PushBack(&lruEntry[V]{key: key, until: until, v: v})
	for l.order.Len() > l.max {
		oldest := l.order.Front()
		l.order.Remove(oldest)
		delete(l.m, oldest.Value.(*lruEntry[V]).key)
	}
}

// remove drops key.
func (l *lru[V]) remove(key string) {
	if el, ok := l.m[key]; ok {
		l.order.Remove(el)
		delete(l.m, key)
	}
}

// len returns the number of entries, expired ones included.
func (l *lru[V]) len() int { return l.order.Len() }

// CredentialsProven reports whether the upstream accepted the credentials
// of ctx (WithScope's, else the client's fixed ones): with the
// authentication gate on, whether they are trusted (answered 2xx within
// Trust); with it off, whether there are credentials at all.
func (c *Client) CredentialsProven(ctx context.Context) bool {
	s := scopeOf(ctx)
	if !s.hasWho && c.fixed == nil || s.hasWho && s.who.Authorization == "" {
		return false
	}
	if c.gate == nil {
		return true
	}
	creds := c.credentials(s)
	c.gate.mu.Lock()
	defer c.gate.mu.Unlock()
	_, ok := c.gate.trusted.get(creds.id, c.gate.now())
	return ok
}
