package restclient

import (
	"context"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// sendLog records what the Send hooks of one test saw, in order.
type sendLog struct {
	mu     sync.Mutex
	events []string
}

func (l *sendLog) add(e string) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *sendLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

// queuedSend is a Send hook that waits as a low-priority budget waiter
// does: until release is closed; cancelled, it leaves at once unless
// ignoreCancel (a slot granted the instant the call was cancelled).
func queuedSend(log *sendLog, entered chan<- struct{}, release <-chan struct{}, ignoreCancel bool) CallHooks {
	return CallHooks{Send: func(ctx context.Context, _ CallStart) error {
		log.add("background waits")
		entered <- struct{}{}
		if ignoreCancel {
			<-release
			log.add("background granted")
			return nil
		}
		select {
		case <-release:
			log.add("background granted")
			return nil
		case <-ctx.Done():
			log.add("background cancelled")
			return ctx.Err()
		}
	}}
}

// TestInteractiveCallOvertakesABackgroundFlight: a poll's GET waits for its
// Send (the budget's lowest priority); a query's identical GET does not join
// it: it is sent at once through the query's own hooks, the poll stops
// waiting and gets the query's answer. One upstream request; the poll's call
// is the shared one. The same when the poll's slot comes the instant the
// query overtook it: that slot goes unused, still one request.
func TestInteractiveCallOvertakesABackgroundFlight(t *testing.T) {
	for _, late := range []bool{false, true} {
		u := newUpstream(t)
		u.handle("GET /resources/v1/{id}", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"resource":{"id":"`+r.PathValue("id")+`","title":"Room"}}`)
		})
		c := u.client()
		log := &sendLog{}
		entered, release := make(chan struct{}, 1), make(chan struct{})
		var bgInfo, qInfo CallInfo
		bg := WithScope(t.Context(), Scope{Background: true, ReadOnlyResults: true, Hooks: []CallHooks{
			queuedSend(log, entered, release, late),
			{After: func(_ context.Context, ci CallInfo) { bgInfo = ci }},
		}})
		query := WithScope(t.Context(), Scope{Hooks: []CallHooks{{
			Send:  func(context.Context, CallStart) error { log.add("query sent"); return nil },
			After: func(_ context.Context, ci CallInfo) { qInfo = ci },
		}}})
		polled := make(chan result, 1)
		go func() {
			r, resp, err := c.Resources.GetResource(bg, "r1")
			polled <- result{r, resp, err}
		}()
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the background call never reached its Send")
		}
		r, _, err := c.Resources.GetResource(query, "r1")
		if err != nil || r.ID != "r1" {
			t.Fatalf("late %v: query: %+v %v", late, r, err)
		}
		if late {
			close(release) // the poll's slot comes now: unused
		}
		var p result
		select {
		case p = <-polled:
		case <-time.After(10 * time.Second):
			t.Fatalf("late %v: the poll never returned", late)
		}
		if p.err != nil || p.r.ID != "r1" || *p.r.Title != "Room" {
			t.Fatalf("late %v: poll: %+v %v", late, p.r, p.err)
		}
		if n := u.hits.Load(); n != 1 {
			t.Errorf("late %v: %d upstream requests, want 1", late, n)
		}
		// The query's Send and the poll's leaving run at once: in either order.
		end := "background cancelled"
		if late {
			end = "background granted"
		}
		got := log.list()
		if len(got) != 3 || got[0] != "background waits" || !slices.Contains(got, "query sent") || !slices.Contains(got, end) {
			t.Errorf("late %v: Send hooks saw %v, want the background call waiting, then the query sent and %q", late, got, end)
		}
		if qInfo.Shared || !bgInfo.Shared || bgInfo.Status != 200 || bgInfo.Err != nil {
			t.Errorf("late %v: query's call %+v, poll's %+v; want the query's own and the poll's shared", late, qInfo, bgInfo)
		}
		if !late {
			close(release)
		}
	}
}

// TestSentBackgroundFlightIsJoined: a poll's GET already sent (the upstream
// holds its answer) is joined by a query's identical GET: the query's Send
// hook never runs, one upstream request.
func TestSentBackgroundFlightIsJoined(t *testing.T) {
	u := newUpstream(t)
	release := make(chan struct{})
	blockingResource(t, u, release)
	c := u.client()
	log := &sendLog{}
	bg := WithScope(t.Context(), Scope{Background: true, Hooks: []CallHooks{{Send: func(context.Context, CallStart) error {
		log.add("background sent")
		return nil
	}}}})
	query := WithScope(t.Context(), Scope{Hooks: []CallHooks{{Send: func(context.Context, CallStart) error {
		log.add("query sent")
		return nil
	}}}})
	results := make(chan result, 2)
	get := func(ctx context.Context) {
		r, resp, err := c.Resources.GetResource(ctx, "r1")
		results <- result{r, resp, err}
	}
	go get(bg)
	for u.hits.Load() == 0 { // sent: the upstream holds it
		time.Sleep(time.Millisecond)
	}
	go get(query)
	awaitWaiters(t, c, 2)
	close(release)
	for range 2 {
		if r := <-results; r.err != nil || r.r.ID != "r1" {
			t.Fatalf("%+v", r)
		}
	}
	if n := u.hits.Load(); n != 1 {
		t.Errorf("%d upstream requests, want 1", n)
	}
	if got := log.list(); len(got) != 1 || got[0] != "background sent" {
		t.Errorf("Send hooks saw %v, want the background call's only", got)
	}
}
