// Package live turns an upstream that never pushes into streams of changes:
// it polls each source once for all its subscribers and tells them what
// changed since the previous poll.
//
// A source is what one upstream GET returns for one upstream client: the
// newest page of a list (by create date, up to 100 items), or one object.
// Subscribers of the same source with the same upstream identity
// (restclient.Credentials.Identity: every spelling of one client is one
// identity) share one poller in the Hub; a subscriber only ever receives
// what was fetched with its own identity, because the identity is part of
// the poller's key.
//
// Each poll compares what it fetched with the previous poll, item by item:
// an id not seen before is CREATED (UPDATED when its create date is older
// than the newest item of the previous poll: it moved into the filter, or
// into the window, by a change), an id seen with another fingerprint (a hash
// of its JSON encoding) is UPDATED. The first poll only sets the baseline.
// What a list source cannot see: items older than its newest page, items
// that leave it (deleted, or moved out of the filter), and changes undone
// between two polls.
//
// Pacing. Each poll's calls take the lowest priority in the client's
// budget (internal/policy/budget): the client's interactive requests go first. The
// interval is Config.Interval, never below MinInterval, stretched when the
// budget is short (a poll that waited for its token waits that much longer
// before the next, up to MaxStretch times the interval; a paused budget
// pushes the next poll past the pause). A 401 or 403 ends every
// subscription of the source with the error; any other error is reported to
// the subscribers and the poller backs off (doubling the interval, up to
// MaxStretch times), without ending them.
//
// Subscribers are served in order, each from its own bounded queue: queued
// changes of one node are coalesced into one event (the newest value; a
// CREATED stays CREATED), and a subscriber whose queue would exceed
// Config.Buffer distinct nodes is ended with ErrTooSlow.
package live

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/restclient"
)

// Bounds and defaults of Config.
const (
	DefaultInterval = 5 * time.Second
	MinInterval     = time.Second
	// MaxStretch bounds how far a short budget or failing polls stretch
	// the interval: at most MaxStretch times Config.Interval.
	MaxStretch                = 12
	DefaultBuffer             = 100
	DefaultMaxPerCredential   = 100
	DefaultMaxSubscriptions   = 20000
	DefaultPollTimeout        = 30 * time.Second
	DefaultMaxPolling         = 64
	DefaultMaxQueued          = 20000
	pageSize                  = 100
	eventChannelNotifications = 1
)

// PageSize is the number of newest items a list source watches.
const PageSize = pageSize

// Kind says what an Event is.
type Kind int

const (
	// Created: an item the previous poll did not see.
	Created Kind = iota + 1
	// Updated: an item whose fingerprint changed.
	Updated
	// Failed: a poll failed; the subscription goes on (Event.Err).
	Failed
)

func (k Kind) String() string {
	switch k {
	case Created:
		return "CREATED"
	case Updated:
		return "UPDATED"
	case Failed:
		return "POLL_FAILED"
	}
	return "UNKNOWN"
}

// Item is one object a source fetched.
type Item struct {
	// ID identifies the item in its source; "" uses its fingerprint (an
	// item without an id can only be CREATED).
	ID string
	// Created is its create date (zero when unknown).
	Created time.Time
	// Value is the object, never modified once fetched.
	Value any
}

// Source is what one poller fetches.
type Source struct {
	// Key names the source uniquely within an identity: the route and the
	// filter in one canonical string.
	Key string
	// Route is the GET route polled (for the stats).
	Route string
	// Fetch makes the poll's upstream calls with ctx, which carries the
	// subscriber's credentials and the budget's hooks.
	Fetch func(ctx context.Context) ([]Item, error)
	// Reads are the response cache entries of Route the source reads (its
	// path parameter's and its tagging filters' values): a write of its
	// client that makes one of them stale makes it poll at once (Hub.Poke).
	Reads []restclient.Entry
	// Stale returns the response cache entries the changes a poll saw
	// make stale (nil: none).
	Stale func(changes []Event) []restclient.Entry
	// Decode reads back {"items": [...]} of Item values encoded as JSON
	// (what one replica fetched, for the others: shared.go).
	Decode func(data []byte) ([]any, error)
	// Interval, when longer than Config.Interval, is the source's own
	// interval (reference data polled at its cache TTL); the poller of a
	// source keeps the interval of the Source that started it.
	Interval time.Duration
}

// Event is one change, or one failed poll, delivered to a subscriber.
type Event struct {
	Kind  Kind
	ID    string
	Value any
	// At is when the poll that saw it was answered.
	At time.Time
	// Interval is the source's effective polling interval then.
	Interval time.Duration
	// Err is the poll's error when Kind is Failed.
	Err error
	// Calls are the upstream calls of the poll that saw it (shared by the
	// events of one poll; never modified).
	Calls []Call
}

// Call is one upstream call of a poll: no credentials, no ids (Route is the
// path template).
type Call struct {
	Method   string        `json:"m"`
	Route    string        `json:"r"`
	Status   int           `json:"s"`
	Start    time.Time     `json:"t"`
	Duration time.Duration `json:"d"`
	Waited   time.Duration `json:"w,omitempty"`
}

// Config sizes a Hub.
type Config struct {
	// Interval between two polls of a source; at least MinInterval (a
	// smaller one is raised to it unless AllowFastPolls).
	Interval time.Duration
	// Budget paces the polls (nil: no pacing).
	Budget *budget.Budget
	// Hooks are the call hooks of every poll's calls, outermost first,
	// before the budget's (metrics).
	Hooks []restclient.CallHooks
	// Cache, when set, is told what each change makes stale.
	Cache restclient.ResponseCache
	// Buffer is the most distinct nodes queued for one subscriber; past it
	// the subscriber ends with ErrTooSlow. 0: DefaultBuffer.
	Buffer int
	// MaxQueued bounds the events queued for every subscriber of the Hub
	// together: past it, a subscriber that still has events of an earlier
	// poll waiting when more come ends with ErrTooSlow (one that takes its
	// events as they come never does). 0: no bound.
	MaxQueued int
	// MaxPerCredential bounds the subscriptions of one upstream identity in
	// this Hub, MaxTotal all of them. 0: no bound.
	MaxPerCredential int
	MaxTotal         int
	// PollTimeout bounds one poll. 0: DefaultPollTimeout.
	PollTimeout time.Duration
	// MaxPolling bounds the polls between their request's sending (its
	// rate budget granted) and their page's decoding, at once: each holds
	// its page's body and objects, which would otherwise pile up while the
	// CPU decodes them. 0: DefaultMaxPolling.
	MaxPolling int
	// AllowFastPolls lets Interval go below MinInterval (tests of the
	// package's own callers that count polls, never the program).
	AllowFastPolls bool
	// Shared, when set, makes the pollers of every replica using the same
	// Redis one (shared.go); nil: one per process.
	Shared *Shared
}

// Errors of Subscribe and of a subscription's end.
var (
	// ErrTooSlow ends a subscriber whose queue exceeded Config.Buffer.
	ErrTooSlow = errors.New("live: the subscriber does not keep up with the changes")
	// ErrClosed ends the subscriptions of a closed Hub.
	ErrClosed = errors.New("live: the server is shutting down")
)

// LimitError refuses a subscription beyond a bound.
type LimitError struct {
	What  string // "credential" or "total"
	Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("too many subscriptions %s: at most %d", map[string]string{"credential": "for these credentials", "total": "on this server"}[e.What], e.Limit)
}

// Hub runs the pollers. Safe for concurrent use.
type Hub struct {
	c Config

	mu      sync.Mutex
	pollers map[pollerKey]*poller
	perCred map[string]int
	total   int
	closed  bool

	statsMu sync.Mutex
	polls   map[string]int64 // route -> polls made

	polling chan struct{} // Config.MaxPolling slots
	queued  atomic.Int64  // events in the subscriptions' queues
}

type pollerKey struct{ identity, source string }

// New returns a Hub.
func New(c Config) *Hub {
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.Interval < MinInterval && !c.AllowFastPolls {
		c.Interval = MinInterval
	}
	if c.Buffer <= 0 {
		c.Buffer = DefaultBuffer
	}
	if c.PollTimeout <= 0 {
		c.PollTimeout = DefaultPollTimeout
	}
	if c.MaxPolling <= 0 {
		c.MaxPolling = DefaultMaxPolling
	}
	return &Hub{c: c, pollers: map[pollerKey]*poller{}, perCred: map[string]int{}, polls: map[string]int64{},
		polling: make(chan struct{}, c.MaxPolling)}
}

// Interval is the configured interval.
func (h *Hub) Interval() time.Duration { return h.c.Interval }

// Subscribe starts receiving src's changes as the client creds name.
// It refuses with a *LimitError beyond the bounds. The subscription ends
// when ctx ends (Next returns ctx.Err()), on a 401 or 403 poll, when the
// subscriber is too slow, or when the Hub closes.
func (h *Hub) Subscribe(ctx context.Context, creds restclient.Credentials, src Source) (*Subscription, error) {
	id := creds.Identity()
	key := pollerKey{id, src.Key}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	if h.c.MaxTotal > 0 && h.total >= h.c.MaxTotal {
		h.mu.Unlock()
		return nil, &LimitError{What: "total", Limit: h.c.MaxTotal}
	}
	if h.c.MaxPerCredential > 0 && h.perCred[id] >= h.c.MaxPerCredential {
		h.mu.Unlock()
		return nil, &LimitError{What: "credential", Limit: h.c.MaxPerCredential}
	}
	h.total++
	h.perCred[id]++
	p := h.pollers[key]
	if p == nil || p.ctx.Err() != nil {
		p = &poller{h: h, key: key, src: src, creds: creds.Normalized(), subs: map[*Subscription]struct{}{}, interval: max(h.c.Interval, src.Interval), poke: make(chan struct{}, 1)}
		p.ctx, p.cancel = context.WithCancel(context.Background())
		h.pollers[key] = p
		p.start()
	}
	s := &Subscription{p: p, notify: make(chan struct{}, eventChannelNotifications), interval: p.currentInterval()}
	p.mu.Lock()
	p.subs[s] = struct{}{}
	p.mu.Unlock()
	h.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { s.end(ctx.Err()) })
	// Under s.mu: end reads it from other goroutines (the poller's, the
	// Hub's Close), and may have run already.
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		stop()
		return s, nil
	}
	s.stopCtx = stop
	s.mu.Unlock()
	return s, nil
}

// Stats are the Hub's counters.
type Stats struct {
	Pollers int
	// Ready are the pollers whose first poll succeeded: they report
	// changes from then on.
	Ready         int
	Subscriptions int
	// Polls are the polls this Hub made, by route, counted once compared
	// with the previous (a poll cancelled in flight is not counted).
	Polls map[string]int64
	// Queued are the events waiting in the subscriptions' queues.
	Queued int64
}

// Stats returns the Hub's counters now.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	st := Stats{Pollers: len(h.pollers), Subscriptions: h.total, Polls: map[string]int64{}, Queued: h.queued.Load()}
	for _, p := range h.pollers {
		if p.ready.Load() {
			st.Ready++
		}
	}
	h.mu.Unlock()
	h.statsMu.Lock()
	for k, v := range h.polls {
		st.Polls[k] = v
	}
	h.statsMu.Unlock()
	return st
}

// Close ends every subscription with ErrClosed and stops the pollers.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	ps := make([]*poller, 0, len(h.pollers))
	for _, p := range h.pollers {
		ps = append(ps, p)
	}
	h.mu.Unlock()
	for _, p := range ps {
		p.endAll(ErrClosed)
	}
}

// release forgets s; the last subscriber of a poller stops it.
func (h *Hub) release(s *Subscription) {
	p := s.p
	h.mu.Lock()
	defer h.mu.Unlock()
	p.mu.Lock()
	_, ok := p.subs[s]
	delete(p.subs, s)
	empty := len(p.subs) == 0
	p.mu.Unlock()
	if !ok {
		return
	}
	h.total--
	if h.perCred[p.key.identity]--; h.perCred[p.key.identity] <= 0 {
		delete(h.perCred, p.key.identity)
	}
	if empty && h.pollers[p.key] == p {
		delete(h.pollers, p.key)
		p.cancel()
	}
}

func (h *Hub) countPoll(route string) {
	h.statsMu.Lock()
	h.polls[route]++
	h.statsMu.Unlock()
}

// poller polls one source for one identity.
type poller struct {
	h      *Hub
	key    pollerKey
	src    Source
	creds  restclient.Credentials
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	subs     map[*Subscription]struct{}
	interval time.Duration // effective

	ready atomic.Bool // the baseline is set (Stats)

	// poke asks for a poll now (Hub.Poke); pokes that come while one
	// waits, or during a poll, make one poll.
	poke chan struct{}

	// Owned by the polling goroutine.
	seen     map[string]uint64
	newest   time.Time
	baseline bool
	failures int
	calls    []Call // the last poll's
}

// base is the source's interval before stretching.
func (p *poller) base() time.Duration { return max(p.h.c.Interval, p.src.Interval) }

func (p *poller) currentInterval() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.interval
}

func (p *poller) start() {
	if p.h.c.Shared != nil {
		go p.h.c.Shared.run(p)
		return
	}
	go p.run()
}

// run polls until the poller is cancelled: at once, then every interval.
func (p *poller) run() {
	for {
		items, waited, err := p.poll()
		if p.ctx.Err() != nil {
			return
		}
		events, next, end := p.apply(items, waited, err, time.Now())
		p.h.countPoll(p.src.Route)
		if end != nil {
			p.endAll(end)
			return
		}
		p.publish(events)
		t := time.NewTimer(next)
		select {
		case <-p.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-p.poke:
			t.Stop()
		}
	}
}

// publish tells the subscribers of this process about events and makes
// what the changes make stale invalidated.
func (p *poller) publish(events []Event) {
	if len(events) == 0 {
		return
	}
	p.invalidate(events)
	p.deliver(events)
}

// pollTurn is a poll's place among its client's waiting calls: in the
// background, after the calls of every request, on every replica (the
// budget's shared log lets an interactive call waiting on any replica go
// first), so an interactive query never waits behind a poll for more than
// the one slot a poll already holds.
var pollTurn = budget.Turn{Background: true}

// poll fetches the source once, with the subscriber's credentials, at the
// lowest priority of its budget; waited is how long the budget held it.
func (p *poller) poll() (items []Item, waited time.Duration, err error) {
	return p.pollWith(p.ctx)
}

// pollWith is poll under ctx (p.ctx or a context of it).
func (p *poller) pollWith(ctx context.Context) (items []Item, waited time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, p.h.c.PollTimeout)
	defer cancel()
	hooks := append([]restclient.CallHooks(nil), p.h.c.Hooks...)
	if b := p.h.c.Budget; b != nil {
		hooks = append(hooks, restclient.CallHooks{
			Send: func(ctx context.Context, _ restclient.CallStart) error {
				w, err := b.Wait(ctx, restclient.IdentityFromContext(ctx), pollTurn)
				waited += w
				return err
			},
			Answered: func(ctx context.Context, _ restclient.CallStart, resp *http.Response) {
				b.Learn(restclient.IdentityFromContext(ctx), resp.StatusCode, resp.Header)
			},
		})
	}
	var mu sync.Mutex
	var made []Call
	held := false // a polling slot, from the first attempt's sending to the call's end
	hooks = append(hooks, restclient.CallHooks{
		Send: func(ctx context.Context, _ restclient.CallStart) error {
			if held {
				return nil
			}
			select {
			case p.h.polling <- struct{}{}:
				held = true
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		After: func(_ context.Context, info restclient.CallInfo) {
			if held {
				<-p.h.polling
				held = false
			}
			mu.Lock()
			made = append(made, Call{Method: info.Method, Route: info.Route, Status: info.Status,
				Start: time.Now().Add(-info.Duration), Duration: info.Duration, Waited: info.Waited})
			mu.Unlock()
		}})
	creds := p.creds
	// Background: a query's identical GET never waits for this poll's
	// before it is sent (restclient's shared GETs).
	ctx = restclient.WithScope(ctx, restclient.Scope{Credentials: &creds, ReadOnlyResults: true, NoCacheReads: true, Background: true, Hooks: hooks})
	items, err = p.src.Fetch(ctx)
	mu.Lock()
	p.calls = made
	mu.Unlock()
	return items, waited, err
}

// apply compares a poll's result with the previous one and returns the
// changes, the wait before the next poll, and the error that ends the
// source's subscriptions (a 401 or 403), if any.
func (p *poller) apply(items []Item, waited time.Duration, err error, at time.Time) ([]Event, time.Duration, error) {
	base := p.base()
	if err != nil {
		if fatal(err) {
			return nil, 0, err
		}
		p.failures++
		next := base << min(p.failures, 4)
		next = min(next, base*MaxStretch)
		p.setInterval(next)
		return []Event{{Kind: Failed, At: at, Interval: next, Err: err, Calls: p.calls}}, next, nil
	}
	p.failures = 0
	next := base
	if waited > 0 {
		next = min(base+waited, base*MaxStretch)
	}
	if b := p.h.c.Budget; b != nil {
		if until := b.PausedUntil(p.key.identity); until.After(at.Add(next)) {
			next = min(until.Sub(at), base*MaxStretch)
		}
	}
	p.setInterval(next)
	events := p.diff(items, at, next)
	for i := range events {
		events[i].Calls = p.calls
	}
	return events, next, nil
}

func (p *poller) setInterval(d time.Duration) {
	p.mu.Lock()
	p.interval = d
	p.mu.Unlock()
}

// diff returns the changes of items since the previous poll and makes
// items the new baseline.
func (p *poller) diff(items []Item, at time.Time, interval time.Duration) []Event {
	seen := make(map[string]uint64, len(items))
	var newest time.Time
	var events []Event
	var encoded [][]byte // of events, in their order
	for _, it := range items {
		b, _ := json.Marshal(it.Value)
		fp := fingerprint(b)
		// A decoded id aliases its page's body (restclient's decoders):
		// the baseline and the events keep a copy, not the page.
		id := strings.Clone(it.ID)
		if id == "" {
			id = fmt.Sprintf("fp:%016x", fp)
		}
		seen[id] = fp
		if it.Created.After(newest) {
			newest = it.Created
		}
		if !p.baseline {
			continue
		}
		old, ok := p.seen[id]
		switch {
		case !ok:
			kind := Created
			if !it.Created.IsZero() && !p.newest.IsZero() && it.Created.Before(p.newest) {
				kind = Updated
			}
			events = append(events, Event{Kind: kind, ID: id, Value: it.Value, At: at, Interval: interval})
			encoded = append(encoded, b)
		case old != fp:
			events = append(events, Event{Kind: Updated, ID: id, Value: it.Value, At: at, Interval: interval})
			encoded = append(encoded, b)
		}
	}
	p.detach(events, encoded)
	// The upstream lists newest first; events go oldest first.
	for i, j := 0, len(events)-1; i < j; i, j = i+1, j-1 {
		events[i], events[j] = events[j], events[i]
	}
	p.seen, p.baseline = seen, true
	p.ready.Store(true)
	if newest.After(p.newest) {
		p.newest = newest
	}
	return events
}

// detach gives events the objects decoded again from their JSON encodings
// (encoded, in the same order), all at once: what a subscriber's queue
// keeps of them then holds the changed objects of one poll only, never the
// page's body, which the strings of the page's objects alias (restclient's
// decoders). Events keep their objects when the source cannot decode.
func (p *poller) detach(events []Event, encoded [][]byte) {
	if p.src.Decode == nil || len(events) == 0 || slices.ContainsFunc(encoded, func(b []byte) bool { return b == nil }) {
		return
	}
	body := append([]byte(`{"items":[`), bytes.Join(encoded, []byte(","))...)
	values, err := p.src.Decode(append(body, "]}"...))
	if err != nil || len(values) != len(events) {
		return
	}
	for i := range events {
		events[i].Value = values[i]
	}
}

// invalidate drops the cached entries the changes among events make stale.
func (p *poller) invalidate(events []Event) {
	c := p.h.c.Cache
	if c == nil || p.src.Stale == nil {
		return
	}
	changes := make([]Event, 0, len(events))
	for _, e := range events {
		if e.Kind != Failed {
			changes = append(changes, e)
		}
	}
	if len(changes) == 0 {
		return
	}
	for _, s := range p.src.Stale(changes) {
		_ = c.Invalidate(p.ctx, s.Route, s.Param, s.Value)
	}
}

// subscribers returns the poller's subscribers at this moment.
func (p *poller) subscribers() []*Subscription {
	p.mu.Lock()
	defer p.mu.Unlock()
	subs := make([]*Subscription, 0, len(p.subs))
	for s := range p.subs {
		subs = append(subs, s)
	}
	return subs
}

// deliver queues events for every subscriber.
func (p *poller) deliver(events []Event) {
	subs := p.subscribers()
	for _, s := range subs {
		s.push(events)
	}
}

// endAll ends every subscriber with err and stops the poller. The poller
// leaves the Hub first: a Subscribe from then on starts a new one, and any
// that joined this one before is in the snapshot of those ended.
func (p *poller) endAll(err error) {
	h := p.h
	h.mu.Lock()
	if h.pollers[p.key] == p {
		delete(h.pollers, p.key)
	}
	p.cancel()
	h.mu.Unlock()
	for _, s := range p.subscribers() {
		s.end(err)
	}
}

// fatal reports whether a poll's error ends the subscriptions: the
// credentials are refused (401) or lack the right (403).
func fatal(err error) bool {
	if refused, ok := errors.AsType[*restclient.RefusedCredentialsError](err); ok && refused.Refused != nil {
		err = refused.Refused
	}
	return restclient.IsUnauthorized(err) || restclient.IsForbidden(err)
}

// Fingerprint is the hash of v's JSON encoding (64-bit FNV-1a).
func Fingerprint(v any) uint64 {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return fingerprint(b)
}

// fingerprint is Fingerprint of an object encoded as b (nil: 0).
func fingerprint(b []byte) uint64 {
	if b == nil {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

// Subscription is one subscriber's stream.
type Subscription struct {
	p      *poller
	notify chan struct{}

	mu       sync.Mutex
	stopCtx  func() bool // stops the AfterFunc of Subscribe's ctx
	queue    []Event
	byID     map[string]int // queued node -> index in queue; nil when empty
	err      error
	done     bool
	interval time.Duration

	// offer, when set (Deliver), takes the events instead of Next.
	offer func(Event, error) bool
	ended bool // offer took the end
}

// Deliver makes the subscription hand its events to offer instead of Next,
// from the goroutine that queues them (the poller's fan-out) or the one
// calling Pump, never a goroutine of its own. offer must not block: it
// returns false when it cannot take an event now (the event stays queued
// until the next Pump). The end is offered last, as the error of an Event
// that only has the Interval (ctx.Err() when the subscriber's context ended
// it); offer is not called again once it took the end. offer runs with the
// subscription locked: it must not call the subscription's methods. Call
// Deliver once, before any Pump.
func (s *Subscription) Deliver(offer func(e Event, end error) bool) {
	s.mu.Lock()
	s.offer = offer
	s.notify = nil
	s.mu.Unlock()
	s.Pump()
}

// Pump offers the queued events (Deliver) until offer refuses one.
func (s *Subscription) Pump() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.offer == nil || s.ended {
		return
	}
	if s.done {
		s.ended = s.offer(Event{Interval: s.interval}, s.err)
		return
	}
	for len(s.queue) > 0 && s.offer(s.queue[0], nil) {
		s.pop()
	}
}

// pop removes the queue's head; s.mu held.
func (s *Subscription) pop() Event {
	e := s.queue[0]
	s.queue[0] = Event{}
	s.queue = s.queue[1:]
	s.p.h.queued.Add(-1)
	delete(s.byID, e.ID)
	for id, i := range s.byID {
		s.byID[id] = i - 1
	}
	if len(s.queue) == 0 {
		s.queue, s.byID = nil, nil
	}
	return e
}

// push queues events, coalescing those of a node already queued.
func (s *Subscription) push(events []Event) {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	h := s.p.h
	// Behind: events of an earlier poll still wait. Only such a
	// subscriber is ended for the replica's bound, never one taking its
	// events as they come, whatever burst it receives.
	behind := len(s.queue) > 0
	over := false
	for _, e := range events {
		s.interval = e.Interval
		if e.Kind != Failed {
			if i, ok := s.byID[e.ID]; ok {
				kind := s.queue[i].Kind
				s.queue[i] = e
				if kind == Created {
					s.queue[i].Kind = Created
				}
				continue
			}
			if s.byID == nil {
				s.byID = map[string]int{}
			}
			s.byID[e.ID] = len(s.queue)
		}
		s.queue = append(s.queue, e)
		queued := h.queued.Add(1)
		if len(s.queue) > h.c.Buffer || behind && h.c.MaxQueued > 0 && queued > int64(h.c.MaxQueued) {
			over = true
			break
		}
	}
	s.mu.Unlock()
	if over {
		s.end(ErrTooSlow)
		return
	}
	s.wake()
}

// wake tells Next, or the Deliver offer, that something changed.
func (s *Subscription) wake() {
	s.mu.Lock()
	notify, offer := s.notify, s.offer
	s.mu.Unlock()
	if offer != nil {
		s.Pump()
		return
	}
	select {
	case notify <- struct{}{}:
	default:
	}
}

// end ends the subscription with err (once).
func (s *Subscription) end(err error) {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.done, s.err = true, err
	s.p.h.queued.Add(-int64(len(s.queue)))
	s.queue, s.byID = nil, nil
	stop := s.stopCtx
	s.stopCtx = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	s.p.h.release(s)
	s.wake()
}

// Next returns the next event; once the subscription has ended, the error
// that ended it (ctx.Err() when ctx ended it).
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		s.mu.Lock()
		if s.done {
			err := s.err
			s.mu.Unlock()
			return Event{}, err
		}
		if len(s.queue) > 0 {
			e := s.pop()
			s.mu.Unlock()
			return e, nil
		}
		notify := s.notify
		s.mu.Unlock()
		select {
		case <-notify:
		case <-ctx.Done():
			s.end(ctx.Err())
		}
	}
}

// Interval is the source's effective polling interval as last reported.
func (s *Subscription) Interval() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.interval
}

// Close ends the subscription.
func (s *Subscription) Close() { s.end(context.Canceled) }
