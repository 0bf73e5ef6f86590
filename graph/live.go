package graph

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/admission"
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/limits"
	"github.com/workspacenet/facade/graph/livetransport"
	"github.com/workspacenet/facade/graph/model"
	"github.com/workspacenet/facade/internal/policy/calls"
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
	conn := livetransport.ConnOf(ctx)
	if !conn.Take() {
		return nil, tooManySubscriptions("connection", conn.Max())
	}
	sub, err := r.live.Subscribe(ctx, creds, src)
	if err != nil {
		conn.Give()
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
	give := func() { gave.Do(conn.Give) }
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
		if ev != nil && !slot.send(ch, ev, e) {
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
// upstream call report (trace), it also holds the polls of the events in
// the channel, in the channel's order: the report of the response that
// takes an event from the channel starts with its poll's calls
// (upstreamReport).
type liveSlot struct {
	sub   *live.Subscription
	trace bool

	mu    sync.Mutex
	polls []live.Event
}

// send puts ev in ch if there is room, with the live event e whose poll
// saw it; it reports whether it did. s may be nil.
func (s *liveSlot) send(ch chan<- *model.LiveEvent, ev *model.LiveEvent, e live.Event) bool {
	if s == nil || !s.trace {
		select {
		case ch <- ev:
			return true
		default:
			return false
		}
	}
	// Under the lock: the response that takes ev reads its poll after it
	// is recorded (pollOfTaken).
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case ch <- ev:
		s.polls = append(s.polls, live.Event{Calls: e.Calls, CallsStart: e.CallsStart})
		return true
	default:
		return false
	}
}

// pollOfTaken returns the poll (live.Event.Calls and CallsStart) of the
// event the transport took last from the channel.
func (s *liveSlot) pollOfTaken() live.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.polls) == 0 {
		return live.Event{}
	}
	p := s.polls[0]
	s.polls[0] = live.Event{}
	s.polls = s.polls[1:]
	return p
}

// eventReport is the extensions.upstream of a subscription's event: the
// calls of the poll that saw the change (part "poll"), then the calls made
// to resolve the event's selection (its links), on one time line starting
// when the poll began. Count counts both.
func eventReport(poll live.Event, c *calls.Collector) calls.Report {
	rep := c.Report()
	if len(poll.Calls) == 0 {
		return rep
	}
	shift := 0.0
	if start := c.Origin(); !start.IsZero() {
		shift = msOf(start.Sub(poll.CallsStart))
	}
	out := make([]calls.Call, 0, len(poll.Calls)+len(rep.Calls))
	out = append(out, poll.Calls...)
	for _, l := range rep.Calls {
		l.StartMs += shift
		out = append(out, l)
	}
	rep.Calls = out
	rep.Count += len(poll.Calls)
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

// eventRequest gives each response of a live transport (each event of a
// subscription, each query or mutation sent over a WebSocket) a request of
// its own: its loaders and its collector of upstream calls, so what it
// links is fetched afresh, batched, and counted against MaxUpstreamCalls
// per response, never cached across the connection's operations. A query or
// mutation has the deadline RequestTimeout and holds its cost units in admit
// while it executes, as over HTTP (a subscription's events are admitted one
// by one: node).
func (o *Options) eventRequest(admit *admission.Controller) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		if !livetransport.IsLive(ctx) {
			return next(ctx)
		}
		if slot, ok := ctx.Value(liveSlotKey{}).(*liveSlot); ok && slot.sub != nil {
			slot.sub.Pump()
		}
		prev := requestFrom(ctx)
		req := &request{Context: ctx, hasCredentials: prev.hasCredentials, trace: prev.trace}
		req.collector = calls.Collector{Max: o.MaxUpstreamCalls, Keep: prev.trace, Part: callPart}
		req.calls = &req.collector
		req.loaders = o.requestLoaders(&req.batching)
		if oc := graphql.GetOperationContext(ctx); oc.Operation != nil && oc.Operation.Operation != ast.Subscription && o.RequestTimeout > 0 {
			var cancel context.CancelFunc
			req.Context, cancel = context.WithTimeout(req.Context, o.RequestTimeout)
			defer cancel()
		}
		if oc := graphql.GetOperationContext(ctx); admit != nil && oc.Operation != nil && oc.Operation.Operation != ast.Subscription {
			if st := limits.Of(oc); st != nil {
				release, err := admit.Hold(req, restclient.IdentityFromContext(ctx), st.Cost)
				if err != nil {
					return &graphql.Response{Errors: gqlerror.List{err}}
				}
				req.release = release
			}
		}
		resp := next(eventRootField(req))
		if req.release != nil {
			req.release()
		}
		return resp
	}
}

// subscriptionSlots gives a subscription over a live transport its
// liveSlot. (A subscription over plain HTTP never gets here: graph/overhttp
// refuses it.)
func subscriptionSlots(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if !livetransport.IsLive(ctx) {
		return next(ctx)
	}
	if oc := graphql.GetOperationContext(ctx); oc.Operation != nil && oc.Operation.Operation == ast.Subscription {
		return next(context.WithValue(ctx, liveSlotKey{}, &liveSlot{trace: requestFrom(ctx).trace}))
	}
	return next(ctx)
}
