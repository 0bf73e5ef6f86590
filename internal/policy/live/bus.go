package live

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/workspacenet/facade/internal/policy/redisx"
)

// The replica's one PubSub connection
//
// Every poller of a replica hears its source's channel through one Redis
// connection, the bus's: however many sources the replica's subscribers
// watch, its Redis connections are its pool's (go-redis's pool_size at
// most) and this one. The bus subscribes a channel when its first listener
// comes and unsubscribes it when its last leaves (one goroutine sends these
// commands, batched, in the order the listeners come and go), and hands
// each message to the listeners' inboxes. The connection is opened with
// the first listener and closed with the last.
//
// The bus knows which channels Redis confirmed subscribed: a listener is
// listening only while its channel is. When the connection breaks (or Redis
// refuses a new one), every channel is unconfirmed until go-redis has
// connected again and Redis confirmed it anew (a SUBSCRIBE Redis refused is
// asked again after a pause); a poller not listening does
// not hear the lease holder, so it polls for its own subscribers meanwhile
// (Shared.run). A connection silent for busPing is PINGed, and one that
// does not answer within the next busPing is replaced.

// busPing is how long the bus's connection may stay silent before a PING.
const busPing = 5 * time.Second

// inboxSize bounds the messages waiting for one listener: its poller takes
// them whenever it is not polling, and it hears another replica's polls
// while polling only when the lease moved (its own poll is then cancelled
// at the next renewal, a third of an interval). Past it the oldest is
// dropped.
const inboxSize = 16

// bus is the replica's one PubSub connection (see above).
type bus struct {
	rc *redisx.Client

	mu       sync.Mutex
	ps       *redis.PubSub // nil while nobody listens
	stop     context.CancelFunc
	channels map[string]*busChannel
	pending  map[string]bool // channel -> subscribe (true) or unsubscribe, not sent yet
	poke     chan struct{}   // the sender has pending commands
}

// busChannel is one channel's listeners and whether Redis confirmed it.
type busChannel struct {
	inboxes   []*inbox
	confirmed bool
}

// inbox is what the bus hands one listener: the messages of its channel
// and whether it listens. wake is poked at each change.
type inbox struct {
	wake chan struct{}

	mu        sync.Mutex
	msgs      []string
	listening bool
	dropped   int // messages dropped past inboxSize (tests)
}

func newBus(rc *redisx.Client) *bus {
	return &bus{rc: rc, channels: map[string]*busChannel{}, pending: map[string]bool{}}
}

// listen makes in hear channel (subscribing it when it is the first).
func (b *bus) listen(channel string) *inbox {
	in := &inbox{wake: make(chan struct{}, 1)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ps == nil {
		b.start()
	}
	c := b.channels[channel]
	if c == nil {
		c = &busChannel{}
		b.channels[channel] = c
		b.request(channel, true)
	}
	c.inboxes = append(c.inboxes, in)
	in.listening = c.confirmed
	return in
}

// leave stops in hearing channel (unsubscribing it when it was the last;
// closing the connection when nobody listens any more).
func (b *bus) leave(channel string, in *inbox) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.channels[channel]
	if c == nil {
		return
	}
	for i, x := range c.inboxes {
		if x == in {
			c.inboxes = append(c.inboxes[:i], c.inboxes[i+1:]...)
			break
		}
	}
	if len(c.inboxes) > 0 {
		return
	}
	delete(b.channels, channel)
	if len(b.channels) == 0 {
		b.stop()
		b.ps, b.stop, b.pending = nil, nil, map[string]bool{}
		return
	}
	b.request(channel, false)
}

// request queues a SUBSCRIBE (sub) or UNSUBSCRIBE of channel for the
// sender (b.mu held).
func (b *bus) request(channel string, sub bool) {
	b.pending[channel] = sub
	select {
	case b.poke <- struct{}{}:
	default:
	}
}

// start opens the connection's PubSub and its two goroutines (b.mu held):
// one receives, one sends the pending commands.
func (b *bus) start() {
	ctx, cancel := context.WithCancel(context.Background())
	ps := b.rc.Subscribe(ctx) // no channel: nothing is sent yet
	b.ps, b.stop, b.poke = ps, cancel, make(chan struct{}, 1)
	poke := b.poke
	go b.send(ctx, ps, poke)
	go b.receive(ctx, ps)
	context.AfterFunc(ctx, func() { _ = ps.Close() })
}

// send sends the pending commands of ps, batched, until ctx ends. A failed
// command needs no retry: go-redis keeps the channels it was asked for and
// subscribes them again on its next connection.
func (b *bus) send(ctx context.Context, ps *redis.PubSub, poke chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-poke:
		}
		b.mu.Lock()
		if b.ps != ps {
			b.mu.Unlock()
			return
		}
		var sub, unsub []string
		for ch, s := range b.pending {
			if s {
				sub = append(sub, ch)
			} else {
				unsub = append(unsub, ch)
			}
		}
		clear(b.pending)
		b.mu.Unlock()
		if len(unsub) > 0 {
			_ = ps.Unsubscribe(ctx, unsub...)
		}
		if len(sub) > 0 {
			_ = ps.Subscribe(ctx, sub...)
		}
	}
}

// receive reads ps until ctx ends: confirmations, messages, PONGs.
func (b *bus) receive(ctx context.Context, ps *redis.PubSub) {
	pinged := false
	backoff := 50 * time.Millisecond
	for {
		m, err := ps.ReceiveTimeout(ctx, busPing)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && !pinged {
				pinged = ps.Ping(ctx) == nil
				continue
			}
			if _, refused := errors.AsType[redis.Error](err); !refused || pinged {
				// Broken, refused, or silent after a PING: nothing is heard
				// until Redis confirms the channels on a new connection.
				b.unconfirm()
				if pinged {
					b.replace(ps)
					return
				}
			}
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, time.Second)
			// Redis refused a SUBSCRIBE (an ACL without the channel) and the
			// connection stays: ask again for what it has not confirmed.
			b.resubscribe()
			continue
		}
		pinged, backoff = false, 50*time.Millisecond
		switch m := m.(type) {
		case *redis.Subscription:
			b.confirm(m.Channel, m.Kind == "subscribe")
		case *redis.Message:
			b.deliver(m.Channel, m.Payload)
		}
	}
}

// replace closes ps, silent after a PING, for a new PubSub subscribed to
// every channel.
func (b *bus) replace(ps *redis.PubSub) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ps != ps {
		return
	}
	b.stop()
	b.start()
	for ch := range b.channels {
		b.request(ch, true)
	}
}

// resubscribe asks again for the channels Redis has not confirmed.
func (b *bus) resubscribe() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch, c := range b.channels {
		if !c.confirmed {
			b.request(ch, true)
		}
	}
}

// confirm records Redis's answer to a SUBSCRIBE (on) or UNSUBSCRIBE.
func (b *bus) confirm(channel string, on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.channels[channel]
	if c == nil {
		return
	}
	c.confirmed = on
	for _, in := range c.inboxes {
		in.setListening(on)
	}
}

// unconfirm marks every channel unconfirmed: the connection is gone.
func (b *bus) unconfirm() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.channels {
		if c.confirmed {
			c.confirmed = false
			for _, in := range c.inboxes {
				in.setListening(false)
			}
		}
	}
}

// deliver hands a message to its channel's listeners.
func (b *bus) deliver(channel, payload string) {
	b.mu.Lock()
	var inboxes []*inbox
	if c := b.channels[channel]; c != nil {
		inboxes = append(inboxes, c.inboxes...)
	}
	b.mu.Unlock()
	for _, in := range inboxes {
		in.put(payload)
	}
}

func (in *inbox) poke() {
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

func (in *inbox) setListening(on bool) {
	in.mu.Lock()
	changed := in.listening != on
	in.listening = on
	in.mu.Unlock()
	if changed {
		in.poke()
	}
}

// isListening reports whether the listener hears its channel now.
func (in *inbox) isListening() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.listening
}

func (in *inbox) put(payload string) {
	in.mu.Lock()
	if len(in.msgs) >= inboxSize {
		in.msgs[0] = ""
		in.msgs = in.msgs[1:]
		in.dropped++
	}
	in.msgs = append(in.msgs, payload)
	in.mu.Unlock()
	in.poke()
}

// take returns the waiting messages, oldest first.
func (in *inbox) take() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	msgs := in.msgs
	in.msgs = nil
	return msgs
}
