package live

import (
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/workspacenet/facade/internal/base/sealbox"
	"github.com/workspacenet/facade/internal/policy/redisx"
	"github.com/workspacenet/facade/restclient"
)

// Shared pollers
//
// With Redis, the replicas' pollers of one (identity, source) are one: the
// replica holding the source's lease polls, the others only listen. The
// lease (key wnf:live:lease:<name>) lives for two thirds of an interval and
// its holder renews it every third, so when the holder dies another replica
// takes the lease, and polls, within one interval. The holder publishes
// each poll's events on wnf:live:ch:<name> and keeps the comparison's
// baseline (ids and fingerprints) in wnf:live:state:<name>, so whoever takes
// over goes on from it. <name> is an HMAC of the identity and the source
// under a key derived from the secret (the identity alone is a plain hash,
// and names a client's budget log in Redis: a plain hash of it and a
// source would let a reader of Redis confirm a guessed source);
// every value is sealed (internal/base/sealbox, under the facade's secret, the
// name as additional data): nothing in Redis reads in clear, and nothing
// sealed for one name opens as another's. While Redis is unavailable
// (redisx degraded) every replica polls for its own subscribers; so does a
// poller that does not hold the lease and cannot hear the holder (its
// channel is not subscribed on the replica's one PubSub connection:
// bus.go), without publishing.

const sharedPrefix = "wnf:live:"

// Shared is the Redis side of the pollers of every replica.
type Shared struct {
	rc      *redisx.Client
	bus     *bus
	box     *sealbox.Box
	names   []byte // HMAC key of the sources' names
	replica string
}

// NewShared returns the Shared of rc, sealing with secret (the replicas'
// common secret).
func NewShared(rc *redisx.Client, secret []byte) *Shared {
	var id [8]byte
	_, _ = rand.Read(id[:])
	names, err := hkdf.Key(sha256.New, secret, nil, "wnf:live:v1 names", 32)
	if err != nil {
		panic("live: hkdf: " + err.Error()) // only for a key length SHA-256 cannot give
	}
	return &Shared{rc: rc, bus: newBus(rc), box: sealbox.New(secret, "live"), names: names, replica: hex.EncodeToString(id[:])}
}

// name is the source's name in Redis: it reveals neither the identity nor
// the source, and cannot be computed without the secret.
func (s *Shared) name(k pollerKey) string {
	h := hmac.New(sha256.New, s.names)
	h.Write([]byte(k.identity + "\x00" + k.source)) // the identity is fixed-length hex
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// sharedMsg is what the holder publishes after a poll.
type sharedMsg struct {
	Replica  string          `json:"r"`
	Interval time.Duration   `json:"n"`
	Events   []sharedEvent   `json:"e,omitempty"`
	Items    json.RawMessage `json:"i,omitempty"` // {"items": [the values of the non-Failed events]}
	End      *sharedErr      `json:"end,omitempty"`
	Calls    []Call          `json:"c,omitempty"` // the poll's
}

type sharedEvent struct {
	Kind Kind       `json:"k"`
	ID   string     `json:"id"`
	At   time.Time  `json:"at"`
	Err  *sharedErr `json:"err,omitempty"`
}

// sharedErr carries a poll's error to the other replicas as what the
// error presenter needs: the upstream's answer, or a failure to get one.
type sharedErr struct {
	Status        int    `json:"s,omitempty"`
	Method, Route string `json:",omitempty"`
	Message, Type string `json:",omitempty"`
}

func toShared(err error) *sharedErr {
	if e, ok := errors.AsType[*restclient.ErrorResponse](err); ok {
		return &sharedErr{Status: e.StatusCode, Method: e.Method, Route: e.Route, Message: e.Message, Type: e.Type}
	}
	return &sharedErr{Message: "the upstream could not be reached"}
}

func (e *sharedErr) err(route string) error {
	if e.Status != 0 {
		return &restclient.ErrorResponse{StatusCode: e.Status, Method: e.Method, Route: e.Route, Message: e.Message, Type: e.Type}
	}
	return &restclient.TransportError{Method: "GET", Route: route, Err: errors.New(e.Message)}
}

type sharedState struct {
	Seen   map[string]uint64 `json:"s"`
	Newest time.Time         `json:"n"`
}

// Lease scripts: take the lease or renew it if it is ours; give it back if
// it is ours.
var (
	takeLease = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0`)
	dropLease = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)
)

// run is the poller's loop with Redis: poll while holding the lease, else
// deliver what the holder publishes, or, while the replica's PubSub
// connection does not hear the source's channel, poll alone for this
// replica's subscribers (publishing nothing). A poll may take longer than
// the lease lives (its calls wait at the lowest priority of the budget, an
// upstream may answer slowly): the lease is renewed on its schedule while
// the poll is in progress, and a poll whose lease was lost meanwhile
// (another replica holds it) is cancelled and its result dropped, so that
// two replicas never publish the changes of one baseline.
func (s *Shared) run(p *poller) {
	name := s.name(p.key)
	interval := p.base()
	r := &sharedRun{
		s: s, p: p, ad: []byte(name),
		lease: sharedPrefix + "lease:" + name, state: sharedPrefix + "state:" + name, channel: sharedPrefix + "ch:" + name,
		ttl: max(interval*2/3, 2*time.Millisecond), renew: max(interval/3, time.Millisecond),
	}
	r.in = s.bus.listen(r.channel)
	defer s.bus.leave(r.channel, r.in)
	pokeName := s.pokeName(p.key.identity)
	r.pokeAD, r.pokeChannel = []byte(pokeName), pokeChannelPrefix+pokeName
	r.pokes = s.bus.listen(r.pokeChannel)
	defer s.bus.leave(r.pokeChannel, r.pokes)
	r.wake = time.NewTimer(r.renew)
	defer r.wake.Stop()
	s.awaitListening(p, r.lease, r.wake, r.in, r.pokes)
	defer r.release()
	for {
		held := s.takeLease(p.ctx, r.lease, r.ttl)
		if held && !r.holding {
			s.loadState(p, r.state, r.ad)
		}
		r.holding = held
		alone := !r.holding && !r.in.isListening()
		if (r.holding || alone) && !time.Now().Before(r.nextPoll) && r.poll() {
			return
		}
		if r.wait(alone) {
			return
		}
	}
}

// sharedRun is one poller's loop with Redis (Shared.run): its source's
// names in Redis, its channel's inbox, and whether it holds the lease.
type sharedRun struct {
	s                     *Shared
	p                     *poller
	lease, state, channel string
	ad                    []byte // the source's name, the sealed values' associated data
	in                    *inbox
	// pokes hears the poke channel of the poller's identity (Hub.Poke).
	pokes       *inbox
	pokeChannel string
	pokeAD      []byte
	ttl, renew  time.Duration // the lease's life, and how often it is renewed
	wake        *time.Timer
	holding     bool
	nextPoll    time.Time
}

// poll polls once, holding the lease (renewed meanwhile) or alone, and
// applies the result: it delivers the events, and, holding, announces them
// to the other replicas and saves the baseline. A lease lost during the poll
// drops the result. It reports whether the poller ended (its context done,
// or the source gone).
func (r *sharedRun) poll() (ended bool) {
	var (
		items  []Item
		waited time.Duration
		lost   bool
		err    error
	)
	if r.holding {
		items, waited, lost, err = r.s.pollHolding(r.p, r.lease, r.ttl, r.renew)
	} else {
		items, waited, err = r.p.poll()
	}
	if r.p.ctx.Err() != nil {
		return true
	}
	if lost {
		// Another replica holds the lease: it polls, and publishes.
		r.holding = false
		return false
	}
	events, next, end := r.p.apply(items, waited, err, time.Now())
	r.p.h.countPoll(r.p.src.Route)
	r.nextPoll = time.Now().Add(next)
	if r.holding {
		r.s.announce(r.p, r.channel, r.ad, events, next, end)
	}
	if end != nil {
		r.p.endAll(end)
		return true
	}
	r.p.publish(events)
	if r.holding {
		r.s.saveState(r.p, r.state, r.ad, 10*next)
	}
	return false
}

// wait sleeps until the lease is due for renewal or, when this replica
// polls (holding, or alone), the next poll is due, delivering what the
// holder publishes meanwhile. It reports whether the poller ended.
func (r *sharedRun) wait(alone bool) (ended bool) {
	d := r.renew
	if r.holding || alone {
		d = min(d, max(time.Until(r.nextPoll), 0))
	}
	r.wake.Reset(d)
	select {
	case <-r.p.ctx.Done():
		return true
	case <-r.wake.C:
	case <-r.in.wake:
		for _, m := range r.in.take() {
			if end := r.s.receive(r.p, m, r.ad); end != nil {
				r.p.endAll(end)
				return true
			}
			if r.holding {
				// Another replica polled: it holds the lease now.
				r.nextPoll = time.Now().Add(r.p.currentInterval())
			}
		}
	case <-r.p.poke:
		r.poked()
	case <-r.pokes.wake:
		for _, m := range r.pokes.take() {
			if r.s.pokedBy(r.p, m, r.pokeAD) {
				r.poked()
			}
		}
	}
	return false
}

// release gives the lease back, when held, for another replica to take
// at once.
func (r *sharedRun) release() {
	if !r.holding {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.s.rc.OpTimeout())
	defer cancel()
	_ = r.s.rc.DoKey(ctx, r.lease, func(ctx context.Context, rd redis.UniversalClient) error {
		return dropLease.Run(ctx, rd, []string{r.lease}, r.s.replica).Err()
	})
}

// awaitListening waits, at most one Redis operation's time, for the
// replica's PubSub connection to hear the source's channel and its
// identity's poke channel (in, pokes) before the first lease is tried: a
// poller that would not hold the lease then hears the holder from its first
// poll on, instead of polling alone, and a holder hears the pokes of the
// writes made after its first poll. Not while Redis is unavailable (every
// replica polls alone then).
func (s *Shared) awaitListening(p *poller, lease string, t *time.Timer, in, pokes *inbox) {
	if !s.rc.HealthyKey(lease) {
		return
	}
	t.Reset(s.rc.OpTimeout())
	// Messages that came meanwhile are taken by run's loop.
	defer in.poke()
	defer pokes.poke()
	for !in.isListening() || !pokes.isListening() {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
			return
		case <-in.wake:
		case <-pokes.wake:
		}
	}
}

// takeLease takes the lease, or renews it if it is ours; it reports
// whether this replica may poll: it holds the lease, or Redis (the node of
// the lease's key) is unavailable and every replica polls alone.
func (s *Shared) takeLease(ctx context.Context, lease string, ttl time.Duration) bool {
	if !s.rc.HealthyKey(lease) {
		return true
	}
	var got int64
	err := s.rc.DoKey(ctx, lease, func(ctx context.Context, r redis.UniversalClient) error {
		var err error
		got, err = takeLease.Run(ctx, r, []string{lease}, s.replica, ttl.Milliseconds()).Int64()
		return err
	})
	return err != nil || got == 1 // a failing Redis: poll alone
}

// pollHolding polls while renewing the lease every renew; lost reports that
// the lease is another replica's: a renewal found it so (and cancelled the
// poll), or the renewal once the poll is over did (its result is not to be
// published: the new holder polls from the same baseline).
func (s *Shared) pollHolding(p *poller, lease string, ttl, renew time.Duration) (items []Item, waited time.Duration, lost bool, err error) {
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	var gone atomic.Bool
	done := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(renew)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if !s.takeLease(ctx, lease, ttl) && ctx.Err() == nil {
				gone.Store(true)
				cancel()
				return
			}
		}
	}()
	items, waited, err = p.pollWith(ctx)
	close(done)
	<-renewed
	if gone.Load() || p.ctx.Err() != nil {
		return nil, 0, true, nil
	}
	return items, waited, !s.takeLease(p.ctx, lease, ttl), err
}

// announce publishes a poll's events (or the error that ends the source).
func (s *Shared) announce(p *poller, channel string, ad []byte, events []Event, next time.Duration, end error) {
	m := sharedMsg{Replica: s.replica, Interval: next, Calls: p.calls}
	var values []any
	for _, e := range events {
		se := sharedEvent{Kind: e.Kind, ID: e.ID, At: e.At}
		if e.Kind == Failed {
			se.Err = toShared(e.Err)
		} else {
			values = append(values, e.Value)
		}
		m.Events = append(m.Events, se)
	}
	if end != nil {
		m.End = toShared(end)
	} else if len(m.Events) == 0 {
		return // nothing to say
	}
	if len(values) > 0 {
		b, err := json.Marshal(map[string]any{"items": values})
		if err != nil {
			return
		}
		m.Items = b
	}
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	sealed := s.box.Seal(nil, b, ad)
	_ = s.rc.DoKey(p.ctx, channel, func(ctx context.Context, r redis.UniversalClient) error {
		return r.Publish(ctx, channel, sealed).Err()
	})
}

// receive delivers what another replica's poll saw; it returns the error
// that ends the source, if that poll was refused.
func (s *Shared) receive(p *poller, payload string, ad []byte) error {
	b, err := s.box.Open([]byte(payload), ad)
	if err != nil {
		return nil
	}
	var m sharedMsg
	if json.Unmarshal(b, &m) != nil || m.Replica == s.replica {
		return nil
	}
	p.setInterval(m.Interval)
	if m.End != nil {
		return m.End.err(p.src.Route)
	}
	var values []any
	if len(m.Items) > 0 && p.src.Decode != nil {
		if values, err = p.src.Decode(m.Items); err != nil {
			return nil
		}
	}
	events := make([]Event, 0, len(m.Events))
	for _, se := range m.Events {
		e := Event{Kind: se.Kind, ID: se.ID, At: se.At, Interval: m.Interval, Calls: m.Calls}
		if se.Kind == Failed {
			e.Err = se.Err.err(p.src.Route)
		} else {
			if len(values) == 0 {
				continue
			}
			e.Value, values = values[0], values[1:]
		}
		events = append(events, e)
	}
	p.deliver(events)
	return nil
}

func (s *Shared) saveState(p *poller, key string, ad []byte, ttl time.Duration) {
	b, err := json.Marshal(sharedState{Seen: p.seen, Newest: p.newest})
	if err != nil {
		return
	}
	sealed := s.box.Seal(nil, b, ad)
	_ = s.rc.DoKey(p.ctx, key, func(ctx context.Context, r redis.UniversalClient) error {
		return r.Set(ctx, key, sealed, ttl).Err()
	})
}

// loadState takes over the baseline the previous holder left, if any.
func (s *Shared) loadState(p *poller, key string, ad []byte) {
	var raw []byte
	err := s.rc.DoKey(p.ctx, key, func(ctx context.Context, r redis.UniversalClient) error {
		var err error
		raw, err = r.Get(ctx, key).Bytes()
		return err
	})
	if err != nil {
		return
	}
	b, err := s.box.Open(raw, ad)
	if err != nil {
		return
	}
	var st sharedState
	if json.Unmarshal(b, &st) != nil || st.Seen == nil {
		return
	}
	p.seen, p.newest, p.baseline = st.Seen, st.Newest, true
	p.ready.Store(true)
}
