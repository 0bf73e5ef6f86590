package livequery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/internal/policy/calls"
	"github.com/workspacenet/facade/internal/policy/live"
	"github.com/workspacenet/facade/restclient"
)

// Serve serves the live query of ctx (the operation's context; Is): next
// executes the operation afresh at each call, creds are its client's.
// release, when set, runs once the live query ends (the transport stops
// asking for its results: ctx ends).
func (e *Engine) Serve(ctx context.Context, next graphql.OperationHandler, creds restclient.Credentials, release func()) graphql.ResponseHandler {
	q := &query{e: e, opCtx: ctx, next: next, creds: creds, memo: newMemo(), watches: map[string]*watch{},
		pending: map[string][]live.Event{}, wake: make(chan struct{}, 1)}
	context.AfterFunc(ctx, func() {
		// The connection's slot first: once its sources are let go, a new
		// live query of the connection can take it.
		if release != nil {
			release()
		}
		q.closeAll()
	})
	return q.respond
}

// query is one live query.
type query struct {
	e     *Engine
	opCtx context.Context
	next  graphql.OperationHandler
	creds restclient.Credentials
	memo  *memo

	// Owned by the goroutine asking for results (respond).
	revision int
	last     []byte // the last result's data
	lastErrs []byte // and errors, as sent
	lastRun  time.Time
	failures int
	done     bool

	mu       sync.Mutex
	watches  map[string]*watch
	pending  map[string][]live.Event // source key -> changes not run yet
	polls    []calls.Call            // the calls of the polls that saw them (part "poll")
	lastPoll *calls.Call             // the first call of the last poll added to polls
	endErr   error
	retry    bool // the last re-run failed: run again after the backoff
	closed   bool
	wake     chan struct{}
}

// watch is one source the live query watches.
type watch struct {
	src    live.Source
	sub    *live.Subscription
	closed bool // q.mu
}

// respond is the live query's ResponseHandler: the first result, then
// each changed result, until ctx ends or the query ends with an error.
func (q *query) respond(ctx context.Context) *graphql.Response {
	if q.done {
		return nil
	}
	if q.revision == 0 {
		return q.first(ctx)
	}
	for {
		if !q.waitChange(ctx) {
			q.done = true
			return nil
		}
		q.mu.Lock()
		end := q.endErr
		q.mu.Unlock()
		if end != nil {
			q.done = true
			q.revision++
			return q.update(&graphql.Response{Errors: gqlerror.List{asGQL(end)}}, []Op{}, nil)
		}
		if resp := q.rerun(ctx); resp != nil {
			return resp
		}
	}
}

// first runs the query once and starts watching what it read.
func (q *query) first(ctx context.Context) *graphql.Response {
	resp := q.run(ctx, false)
	reads := q.memo.end(true)
	if resp == nil || len(resp.Data) == 0 || bytes.Equal(bytes.TrimSpace(resp.Data), []byte("null")) {
		q.done = true
		return resp // nothing to keep current
	}
	q.lastRun = time.Now()
	q.last, q.lastErrs = compact(resp.Data), errorsJSON(resp.Errors)
	q.revision = 1
	info := q.watch(reads)
	q.bound()
	info["keptBytes"] = len(q.last) + len(q.lastErrs) + q.memo.bytes()
	if resp.Extensions == nil {
		resp.Extensions = map[string]any{}
	}
	resp.Extensions["live"] = info
	resp.Extensions[resultKey] = liftable{Revision: 1}
	return resp
}

// run executes the operation with the memo answering its GETs.
func (q *query) run(ctx context.Context, rerun bool) *graphql.Response {
	q.memo.begin()
	rctx := restclient.WithScope(ctx, restclient.Scope{Reads: q.memo})
	if rerun {
		rctx = context.WithValue(rctx, rerunKey{}, true)
	}
	return q.next(q.opCtx)(rctx)
}

// rerun applies the pending changes to the memo and runs the query again:
// the update to send, or nil when the result did not change.
func (q *query) rerun(ctx context.Context) *graphql.Response {
	q.mu.Lock()
	pending, polls := q.pending, q.polls
	q.pending, q.polls, q.retry = map[string][]live.Event{}, nil, false
	for key, events := range pending {
		if w := q.watches[key]; w != nil && !w.closed {
			q.memo.apply(w.src, events)
		}
	}
	q.mu.Unlock()
	q.lastRun = time.Now()
	resp := q.run(ctx, true)
	if failed(resp) {
		// Failed: its errors go to the client, the result stays, and the
		// query runs again after a backoff, as a failing poll.
		q.memo.endMerge()
		q.failures++
		q.mu.Lock()
		q.retry = true
		q.mu.Unlock()
		if resp == nil {
			resp = &graphql.Response{}
		}
		q.revision++
		return q.update(resp, []Op{}, polls)
	}
	q.failures = 0
	q.watch(q.memo.end(true))
	data, errs := compact(resp.Data), errorsJSON(resp.Errors)
	if bytes.Equal(data, q.last) && bytes.Equal(errs, q.lastErrs) {
		q.bound()
		return nil
	}
	ops, err := Diff(q.last, data)
	if err != nil {
		return &graphql.Response{Errors: gqlerror.List{asGQL(err)}}
	}
	q.last, q.lastErrs = data, errs
	q.revision++
	q.bound()
	return q.update(resp, ops, polls)
}

// failed reports whether a re-run failed: no data, or an upstream call
// that failed for a reason that passes (its field's null is not what the
// upstream holds, so it must not replace the last result).
func failed(resp *graphql.Response) bool {
	if resp == nil || len(resp.Data) == 0 || bytes.Equal(bytes.TrimSpace(resp.Data), []byte("null")) {
		return true
	}
	for _, e := range resp.Errors {
		switch e.Extensions["code"] {
		case errcode.UpstreamUnavailable, errcode.RateLimited, errcode.Overloaded:
			return true
		}
	}
	return false
}

// update makes resp the update of the current revision: patch in place of
// its data (Lift), and the polls' calls when the upstream report is on.
func (q *query) update(resp *graphql.Response, ops []Op, polls []calls.Call) *graphql.Response {
	p, _ := json.Marshal(ops)
	if resp.Extensions == nil {
		resp.Extensions = map[string]any{}
	}
	resp.Extensions[resultKey] = liftable{Revision: q.revision, Patch: p}
	if _, traced := resp.Extensions["upstream"]; traced && len(polls) > 0 {
		resp.Extensions["live"] = map[string]any{"polls": polls}
	}
	return resp
}

// waitChange waits for a change (or the end, or a retry) and then for the
// query's next turn: at most one run per interval, longer after failed
// runs. false: ctx ended.
func (q *query) waitChange(ctx context.Context) bool {
	for {
		q.mu.Lock()
		ready := len(q.pending) > 0 || q.endErr != nil || q.retry
		end := q.endErr != nil
		q.mu.Unlock()
		if end {
			return true
		}
		if ready {
			break
		}
		select {
		case <-ctx.Done():
			return false
		case <-q.wake:
		}
	}
	if d := time.Until(q.lastRun.Add(q.delay())); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return true
}

// delay is the least time between two runs: the interval, doubled by each
// failed run in a row, up to live.MaxStretch times.
func (q *query) delay() time.Duration {
	base := q.e.c.Hub.Interval()
	return min(base<<min(q.failures, 4), base*live.MaxStretch)
}

// bound keeps what the query holds between runs within MaxBytes.
func (q *query) bound() {
	maxBytes := q.e.c.MaxBytes
	if len(q.last) > maxBytes {
		q.end(gqlerr.New(errcode.LiveQueryTooLarge, "the live query ended: its result is larger than this server keeps for a live query; run it without @live",
			map[string]any{"maximum": maxBytes}))
		return
	}
	if len(q.last)+q.memo.bytes() > maxBytes {
		q.memo.drop()
	}
}

// watch makes the sources of reads the ones watched, and returns what
// the first result's extensions.live says of them.
func (q *query) watch(reads map[string]*read) map[string]any {
	want := map[string]live.Source{}
	var not []map[string]string
	for _, r := range reads {
		src, why := live.ForRead(q.e.c.Client, r.route, r.id, r.q, q.e.c.ReferenceInterval)
		if why != "" {
			not = append(not, map[string]string{"route": r.route, "reason": why})
			continue
		}
		r.key = src.Key
		want[src.Key] = src
	}
	q.mu.Lock()
	var stop []*live.Subscription
	for key, w := range q.watches {
		if _, ok := want[key]; !ok {
			w.closed = true
			stop = append(stop, w.sub)
			delete(q.watches, key)
		}
	}
	closed := q.closed
	q.mu.Unlock()
	for _, s := range stop {
		s.Close()
	}
	if !closed {
		q.subscribe(want)
	}
	return describe(want, not, q.e.c.Hub.Interval())
}

// subscribe starts watching the sources of want not watched yet.
func (q *query) subscribe(want map[string]live.Source) {
	for key, src := range want {
		q.mu.Lock()
		_, have := q.watches[key]
		q.mu.Unlock()
		if have {
			continue
		}
		sub, err := q.e.c.Hub.Subscribe(q.opCtx, q.creds, src)
		if err != nil {
			q.end(subscribeError(err))
			return
		}
		w := &watch{src: src, sub: sub}
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			sub.Close()
			return
		}
		q.watches[key] = w
		q.mu.Unlock()
		sub.Deliver(func(e live.Event, end error) bool { q.offer(w, e, end); return true })
	}
}

// offer takes a change (or the end) of w's source: from the poller's
// fan-out, never blocking.
func (q *query) offer(w *watch, e live.Event, end error) {
	q.mu.Lock()
	switch {
	case w.closed || q.closed:
	case end != nil:
		if q.endErr == nil {
			q.endErr = end
		}
	case e.Kind != live.Failed:
		events := q.pending[w.src.Key]
		i := 0
		for i < len(events) && events[i].ID != e.ID {
			i++
		}
		if i < len(events) {
			kind := events[i].Kind
			events[i] = e
			if kind == live.Created {
				events[i].Kind = live.Created
			}
		} else {
			events = append(events, e)
		}
		q.pending[w.src.Key] = events
		if len(e.Calls) > 0 && q.lastPoll != &e.Calls[0] { // the events of one poll share its calls
			q.lastPoll = &e.Calls[0]
			q.polls = append(q.polls, e.Calls...)
		}
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// end ends the live query with err after the result being sent.
func (q *query) end(err error) {
	q.mu.Lock()
	if q.endErr == nil {
		q.endErr = err
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// closeAll stops watching (the operation ended).
func (q *query) closeAll() {
	q.mu.Lock()
	q.closed = true
	subs := make([]*live.Subscription, 0, len(q.watches))
	for _, w := range q.watches {
		w.closed = true
		subs = append(subs, w.sub)
	}
	q.watches = map[string]*watch{}
	q.mu.Unlock()
	for _, s := range subs {
		s.Close()
	}
}

func describe(want map[string]live.Source, not []map[string]string, interval time.Duration) map[string]any {
	watched := make([]map[string]any, 0, len(want))
	for key, src := range want {
		watched = append(watched, map[string]any{"source": key, "intervalMs": max(interval, src.Interval).Milliseconds()})
	}
	sort.Slice(watched, func(i, j int) bool { return watched[i]["source"].(string) < watched[j]["source"].(string) })
	sort.Slice(not, func(i, j int) bool { return not[i]["route"] < not[j]["route"] })
	if not == nil {
		not = []map[string]string{}
	}
	return map[string]any{"intervalMs": interval.Milliseconds(), "watched": watched, "notWatched": not}
}

func subscribeError(err error) error {
	if lim, ok := errors.AsType[*live.LimitError](err); ok {
		what := map[string]string{"credential": "for these credentials", "total": "on this server"}[lim.What]
		return gqlerr.New(errcode.TooManySubscriptions, "the live query ended: too many subscriptions "+what+" (each source a live query watches is one)",
			map[string]any{"limit": lim.What, "maximum": lim.Limit})
	}
	return err
}

// asGQL is err as the error of an update.
func asGQL(err error) *gqlerror.Error {
	if g, ok := errors.AsType[*gqlerror.Error](err); ok {
		return g
	}
	if errors.Is(err, live.ErrClosed) {
		return gqlerr.New(errcode.UpstreamUnavailable, "the live query ended: the server is shutting down; run it again", nil)
	}
	if errors.Is(err, live.ErrTooSlow) {
		return gqlerr.New(errcode.SubscriberTooSlow, "the live query ended: its changes were not taken as fast as they came", nil)
	}
	return gqlerr.New(errcode.UpstreamUnavailable, "the live query ended: "+err.Error(), nil)
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return bytes.Clone(b)
	}
	return buf.Bytes()
}

func errorsJSON(errs gqlerror.List) []byte {
	if len(errs) == 0 {
		return nil
	}
	b, _ := json.Marshal(errs)
	return b
}
