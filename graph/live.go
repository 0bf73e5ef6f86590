package graph

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/workspacenet/facade/graph/admission"
	"github.com/workspacenet/facade/graph/calls"
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/limits"
	"github.com/workspacenet/facade/graph/model"
	"github.com/workspacenet/facade/internal/policy/live"
	"github.com/workspacenet/facade/restclient"
)

// subscribe starts src's events for the subscriber of ctx: refused without
// credentials, beyond the connection's, the credential's or the replica's
// bound of subscriptions, or when live data is off. The channel closes when
// the subscription ends; an end the client did not ask for (a 401 or 403
// poll, a subscriber too slow) is its last event, of kind ERROR.
func (r *Resolver) subscribe(ctx context.Context, src live.Source) (<-chan *model.LiveEvent, error) {
	if r.live == nil {
		return nil, &gqlerr.Coded{Code: errcode.BadRequest, Message: "subscriptions are off on this server"}
	}
	creds, ok := restclient.CredentialsFromContext(ctx)
	if !ok || !requestFrom(ctx).hasCredentials {
		return nil, gqlerr.ErrNoCredentials
	}
	conn := connFrom(ctx)
	if !conn.take() {
		return nil, tooManySubscriptions("connection", conn.max)
	}
	sub, err := r.live.Subscribe(ctx, creds, src)
	if err != nil {
		conn.give()
		if lim, ok := errors.AsType[*live.LimitError](err); ok {
			return nil, tooManySubscriptions(lim.What, lim.Limit)
		}
		return nil, err
	}
	// The poller's fan-out (or the transport asking for the next response:
	// eventRequest) puts events straight into ch; one fits at a time, the
	// others wait, coalesced, in the subscription's queue.
	ch := make(chan *model.LiveEvent, 1)
	slot, _ := ctx.Value(liveSlotKey{}).(*liveSlot)
	// The connection's slot comes back once, when the subscription ends:
	// when the transport takes its end, or when ctx ends (the client sent
	// complete, or went away), whichever comes first. An end that ctx
	// ended is never taken when it waited for room in ch (a subscriber
	// too slow): the transport stops asking for responses with ctx.
	var gave sync.Once
	give := func() { gave.Do(conn.give) }
	stop := context.AfterFunc(ctx, give)
	sub.Deliver(func(e live.Event, end error) bool {
		var ev *model.LiveEvent
		switch {
		case end != nil && ctx.Err() != nil:
		case end != nil:
			ev = &model.LiveEvent{Kind: model.LiveEventKindError, Err: endError(end), PollIntervalMs: int(e.Interval.Milliseconds())}
		default:
			ev = &model.LiveEvent{Kind: kinds[e.Kind], Node: e.Value, Err: e.Err, At: restclient.Timestamp{Time: e.At.UTC()}, PollIntervalMs: int(e.Interval.Milliseconds())}
		}
		if ev != nil && !slot.send(ch, ev, e.Calls) {
			return false
		}
		if end != nil {
			close(ch)
			stop()
			give()
		}
		return true
	})
	if slot != nil {
		slot.sub = sub
	}
	return ch, nil
}

// liveSlot is where a live operation's subscription is found by the
// transport's next call for a response (eventRequest), which refills the
// subscription's channel from its queue. When the operation asked for the
// upstream call report (trace), it also holds the poll calls of the events
// in the channel, in the channel's order: the report of the response that
// takes an event from the channel starts with them (upstreamReport).
type liveSlot struct {
	sub   *live.Subscription
	trace bool

	mu    sync.Mutex
	polls [][]live.Call
}

// send puts ev in ch if there is room, with the calls of the poll that saw
// it; it reports whether it did. s may be nil.
func (s *liveSlot) send(ch chan<- *model.LiveEvent, ev *model.LiveEvent, polls []live.Call) bool {
	if s == nil || !s.trace {
		select {
		case ch <- ev:
			return true
		default:
			return false
		}
	}
	// Under the lock: the response that takes ev reads its polls after
	// they are recorded (pollsOfTaken).
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case ch <- ev:
		s.polls = append(s.polls, polls)
		return true
	default:
		return false
	}
}

// pollsOfTaken returns the poll calls of the event the transport took last
// from the channel.
func (s *liveSlot) pollsOfTaken() []live.Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.polls) == 0 {
		return nil
	}
	p := s.polls[0]
	s.polls[0] = nil
	s.polls = s.polls[1:]
	return p
}

// eventReport is the extensions.upstream of a subscription's event: the
// calls of the poll that saw the change (part "poll"), then the calls made
// to resolve the event's selection (its links), on one time line starting
// at the poll's first call. Count counts both.
func eventReport(polls []live.Call, c *calls.Collector) calls.Report {
	rep := c.Report()
	if len(polls) == 0 {
		return rep
	}
	origin := polls[0].Start
	for _, p := range polls {
		if p.Start.Before(origin) {
			origin = p.Start
		}
	}
	out := make([]calls.Call, 0, len(polls)+len(rep.Calls))
	for _, p := range polls {
		out = append(out, calls.Call{Method: p.Method, Path: p.Route, Status: p.Status, StartMs: msOf(p.Start.Sub(origin)),
			DurationMs: msOf(p.Duration), WaitedMs: msOf(p.Waited), Part: "poll"})
	}
	shift := 0.0
	if start := c.Origin(); !start.IsZero() {
		shift = msOf(start.Sub(origin))
	}
	for _, l := range rep.Calls {
		l.StartMs += shift
		out = append(out, l)
	}
	rep.Calls = out
	rep.Count += len(polls)
	return rep
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

type liveSlotKey struct{}

var kinds = map[live.Kind]model.LiveEventKind{live.Created: model.LiveEventKindCreated, live.Updated: model.LiveEventKindUpdated, live.Failed: model.LiveEventKindError}

// endError is the error of a subscription's last event.
func endError(err error) error {
	if errors.Is(err, live.ErrTooSlow) {
		return &gqlerr.Coded{Code: errcode.SubscriberTooSlow, Message: "the subscription ended: its events were not taken as fast as they came"}
	}
	if errors.Is(err, live.ErrClosed) {
		return &gqlerr.Coded{Code: errcode.UpstreamUnavailable, Message: "the subscription ended: the server is shutting down; subscribe again"}
	}
	return err
}

func tooManySubscriptions(limit string, maximum int) error {
	what := map[string]string{"connection": "on this connection", "credential": "for these credentials", "total": "on this server"}[limit]
	return &gqlerr.Coded{Code: errcode.TooManySubscriptions, Message: "too many subscriptions " + what + ": at most " + strconv.Itoa(maximum),
		Ext: map[string]any{"limit": limit, "maximum": maximum}}
}

// node returns a live event's object as T, or its error. The event's
// execution is admitted as an operation of the subscription's cost
// (graph/admission) before its node resolves; eventRequest releases the
// units once the event is written.
func node[T any](ctx context.Context, admit *admission.Controller, e *model.LiveEvent) (*T, error) {
	if e.Err != nil {
		return nil, e.Err
	}
	if st := limits.StatsFrom(ctx); admit != nil && st != nil {
		release, err := admit.Hold(ctx, restclient.IdentityFromContext(ctx), st.Cost)
		if err != nil {
			return nil, err
		}
		req := requestFrom(ctx)
		if req.release != nil {
			req.release()
		}
		req.release = release
	}
	v, _ := e.Node.(*T)
	return v, nil
}

// checkOneID validates two optional id arguments of which exactly one must
// be given.
func checkOneID(fieldA string, a *string, fieldB string, b *string) error {
	if (deref(a) == "") == (deref(b) == "") {
		return gqlerr.Input(fieldA, "give exactly one of %s and %s", fieldA, fieldB)
	}
	return checkOptIDs(fieldA, a, fieldB, b)
}

// enumValue is *p, or the zero value (no filter) when p is nil.
func enumValue[T ~string](p *T) T {
	if p == nil {
		return ""
	}
	return *p
}
