package restclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// awaitWaiters waits until n callers in all are waiting on shared GETs of c
// and returns how many upstream calls they share (flights in progress).
func awaitWaiters(t *testing.T, c *Client, n int) (flights int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.flights.mu.Lock()
		waiters := 0
		for _, f := range c.flights.m {
			waiters += f.waiters
		}
		flights = len(c.flights.m)
		c.flights.mu.Unlock()
		if waiters == n {
			return flights
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d callers waiting on shared calls, want %d", waiters, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// blockingResource serves GET /resources/v1/{id} once release is closed.
func blockingResource(t *testing.T, u *upstream, release chan struct{}) {
	u.handle(OpGetResource.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(10 * time.Second):
			t.Error("never released")
		}
		if r.Context().Err() != nil {
			t.Error("the shared upstream call was cancelled")
		}
		w.Header().Set("X-Upstream", "1")
		io.WriteString(w, `{"resource":{"id":"`+r.PathValue("id")+`","title":"Room","capacity":4}}`)
	})
}

type result struct {
	r    *Resource
	resp *Response
	err  error
}

func TestSharedGetsOneUpstreamCall(t *testing.T) {
	u := newUpstream(t)
	release := make(chan struct{})
	blockingResource(t, u, release)
	obs := &observations{}
	c := u.client()
	const n = 8
	results := make(chan result, n)
	ctx := WithCredentials(obs.ctx(t), Credentials{Authorization: "Bearer same", NetworkID: "net"})
	for range n {
		go func() {
			r, resp, err := c.Resources.GetResource(ctx, "r1")
			results <- result{r, resp, err}
		}()
	}
	if started := awaitWaiters(t, c, n); started != 1 {
		t.Fatalf("%d upstream calls started for identical GETs", started)
	}
	close(release)
	var got []result
	for range n {
		res := <-results
		if res.err != nil || res.r.ID != "r1" || *res.r.Title != "Room" || res.resp.StatusCode != 200 || res.resp.Header.Get("X-Upstream") != "1" {
			t.Fatalf("%+v", res)
		}
		got = append(got, res)
	}
	if u.hits.Load() != 1 {
		t.Errorf("%d upstream hits, want 1", u.hits.Load())
	}
	// Every caller owns its result: mutating one leaves the others alone.
	*got[0].r.Title = "changed"
	*got[0].r.Capacity = 99
	got[0].resp.Header.Set("X-Upstream", "changed")
	for _, res := range got[1:] {
		if res.r == got[0].r || *res.r.Title != "Room" || *res.r.Capacity != 4 || res.resp.Header.Get("X-Upstream") != "1" {
			t.Fatalf("results are not independent: %+v", res.r)
		}
	}
	// One observed call made the upstream call; the others are marked shared.
	obs.mu.Lock()
	defer obs.mu.Unlock()
	var own, shared int
	for _, ci := range obs.calls {
		if ci.Status != 200 || ci.Err != nil || ci.Route != OpGetResource.Route {
			t.Errorf("observed %+v", ci)
		}
		if ci.Shared {
			shared++
		} else {
			own++
		}
	}
	if own != 1 || shared != n-1 {
		t.Errorf("observed %d own and %d shared calls", own, shared)
	}
}

func TestSharedGetsNeverAcrossCredentials(t *testing.T) {
	u := newUpstream(t)
	release := make(chan struct{})
	var mu sync.Mutex
	seen := map[string]int{}
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("Authorization")+"|"+r.Header.Get("service-network-id")]++
		mu.Unlock()
		<-release
		io.WriteString(w, `{"event":{"id":"e"}}`)
	})
	c := u.client()
	creds := []Credentials{
		{Authorization: "Bearer a", NetworkID: "n1"},
		{Authorization: "Bearer a", NetworkID: "n2"},
		{Authorization: "Bearer b", NetworkID: "n1"},
		{Authorization: "Bearer b", NetworkID: "n1"}, // same as the one before: shares
	}
	errs := make(chan error, len(creds))
	for _, cr := range creds {
		go func() {
			_, _, err := c.Events.GetEvent(WithCredentials(ctxT(t), cr), "e")
			errs <- err
		}()
	}
	if started := awaitWaiters(t, c, len(creds)); started != 3 {
		t.Errorf("%d upstream calls started, want 3", started)
	}
	close(release)
	for range creds {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if u.hits.Load() != 3 || seen["Bearer a|n1"] != 1 || seen["Bearer a|n2"] != 1 || seen["Bearer b|n1"] != 1 {
		t.Errorf("%d hits: %v", u.hits.Load(), seen)
	}
}

func TestSharedGetsCancelledWaiter(t *testing.T) {
	u := newUpstream(t)
	release := make(chan struct{})
	blockingResource(t, u, release)
	c := u.client()

	// The caller that starts the upstream call leaves; the others still get it.
	leaderCtx, cancelLeader := context.WithCancel(ctxT(t))
	defer cancelLeader()
	leader := make(chan result, 1)
	go func() {
		r, resp, err := c.Resources.GetResource(leaderCtx, "r1")
		leader <- result{r, resp, err}
	}()
	if awaitWaiters(t, c, 1) != 1 {
		t.Fatal("first caller did not start the call")
	}
	waiterCtx, cancelWaiter := context.WithCancel(ctxT(t))
	defer cancelWaiter()
	others := make(chan result, 3)
	for i := range 3 {
		ctx := ctxT(t)
		if i == 0 {
			ctx = waiterCtx
		}
		go func() {
			r, resp, err := c.Resources.GetResource(ctx, "r1")
			others <- result{r, resp, err}
		}()
	}
	if awaitWaiters(t, c, 4) != 1 {
		t.Fatal("an identical GET started its own call")
	}
	cancelLeader()
	cancelWaiter()
	for _, ch := range []chan result{leader, others} {
		select {
		case res := <-ch:
			if res.err != context.Canceled || res.resp != nil || res.r != nil {
				t.Fatalf("cancelled caller got %+v", res)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a cancelled caller did not return promptly")
		}
	}
	close(release)
	for range 2 {
		if res := <-others; res.err != nil || res.r.ID != "r1" {
			t.Errorf("%+v", res)
		}
	}
	if u.hits.Load() != 1 {
		t.Errorf("%d hits", u.hits.Load())
	}
}

func TestSharedGetAbandonedIsCancelled(t *testing.T) {
	u := newUpstream(t)
	var n atomic.Int64
	entered, gone := make(chan struct{}), make(chan struct{})
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			close(entered)
			<-r.Context().Done() // the last waiter left: the call is cancelled
			close(gone)
			return
		}
		io.WriteString(w, `{"event":{"id":"e"}}`)
	})
	c := u.client()
	ctx, cancel := context.WithCancel(ctxT(t))
	errc := make(chan error, 1)
	go func() { _, _, err := c.Events.GetEvent(ctx, "e"); errc <- err }()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("request did not arrive")
	}
	cancel()
	if err := <-errc; err != context.Canceled {
		t.Fatalf("err %v", err)
	}
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the abandoned upstream call was not cancelled")
	}
	// A later identical GET starts afresh instead of joining the dead call.
	if ev, _, err := c.Events.GetEvent(ctxT(t), "e"); err != nil || ev.ID != "e" || n.Load() != 2 {
		t.Errorf("%v after %d hits", err, n.Load())
	}
}

func TestSharedGetsShareErrors(t *testing.T) {
	u := newUpstream(t)
	release := make(chan struct{})
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		<-release
		w.WriteHeader(404)
		io.WriteString(w, `{"message":"no such event","type":"not_found"}`)
	})
	obs := &observations{}
	c := u.client()
	errs := make(chan error, 3)
	for range 3 {
		go func() { _, _, err := c.Events.GetEvent(obs.ctx(t), "e"); errs <- err }()
	}
	awaitWaiters(t, c, 3)
	close(release)
	var got []*ErrorResponse
	for range 3 {
		var e *ErrorResponse
		if err := <-errs; !errors.As(err, &e) || e.Message != "no such event" {
			t.Fatalf("err %v", err)
		}
		got = append(got, e)
	}
	if got[0] == got[1] || got[1] == got[2] || u.hits.Load() != 1 {
		t.Errorf("errors shared by pointer or %d hits", u.hits.Load())
	}
	if ci := obs.last(t); ci.Status != 404 || !IsNotFound(ci.Err) {
		t.Errorf("observed %+v", ci)
	}
}

// concurrentHits runs two identical calls and reports whether both reached
// the upstream at the same time (the handler waits for the second).
func concurrentHits(t *testing.T, u *upstream, pattern string, body string, call func() error) {
	t.Helper()
	entered := make(chan struct{}, 2)
	release := make(chan struct{})
	u.handle(pattern, func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		io.WriteString(w, body)
	})
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- call() }()
	}
	for range 2 {
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			close(release)
			t.Fatal("the identical calls did not both reach the upstream")
		}
	}
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestSharedGetsOffAndWritesNeverShared(t *testing.T) {
	u := newUpstream(t)
	c := u.client(WithSharedGets(false))
	concurrentHits(t, u, OpGetEvent.Pattern(), `{"event":{"id":"e"}}`, func() error {
		_, _, err := c.Events.GetEvent(ctxT(t), "e")
		return err
	})
	c = u.client() // sharing on: still one call per write
	concurrentHits(t, u, OpUpdateVisit.Pattern(), `{"visit":{"id":"v"}}`, func() error {
		_, _, err := c.Visitors.UpdateVisit(ctxT(t), "v", &VisitUpdateRequest{})
		return err
	})
	concurrentHits(t, u, OpCreatePost.Pattern(), `{"post":{"id":"p"}}`, func() error {
		_, _, err := c.Feed.CreatePost(ctxT(t), &PostCreateRequest{})
		return err
	})
	if u.hits.Load() != 6 {
		t.Errorf("%d hits, want 6", u.hits.Load())
	}
}

func TestFlightKey(t *testing.T) {
	base := newFlightKey("GET", "http://h/a?x=1", identify(Credentials{Authorization: "Bearer t", NetworkID: "n"}))
	for name, k := range map[string]flightKey{
		"method":  newFlightKey("PUT", "http://h/a?x=1", identify(Credentials{Authorization: "Bearer t", NetworkID: "n"})),
		"query":   newFlightKey("GET", "http://h/a?x=2", identify(Credentials{Authorization: "Bearer t", NetworkID: "n"})),
		"auth":    newFlightKey("GET", "http://h/a?x=1", identify(Credentials{Authorization: "Bearer u", NetworkID: "n"})),
		"network": newFlightKey("GET", "http://h/a?x=1", identify(Credentials{Authorization: "Bearer t", NetworkID: "m"})),
		"shifted": newFlightKey("GET", "http://h/a?x=1", identify(Credentials{Authorization: "Bearer tn"})),
	} {
		if k == base {
			t.Errorf("%s: same key", name)
		}
	}
	if base != newFlightKey("GET", "http://h/a?x=1", identify(Credentials{Authorization: "Bearer t", NetworkID: "n"})) {
		t.Error("key not deterministic")
	}
}

func TestCopyError(t *testing.T) {
	plain := errors.New("x")
	if copyError(plain) != plain || copyError(nil) != nil {
		t.Error("other errors are returned as they are")
	}
	for _, err := range []error{&ErrorResponse{StatusCode: 500}, &TransportError{Err: plain}, &DecodeError{Err: plain}, &CircuitOpenError{Method: "GET"}} {
		cp := copyError(err)
		if cp == err || cp.Error() != err.Error() {
			t.Errorf("%T not copied", err)
		}
	}
}

// Callers that only read results (WithReadOnlyResults) and share a GET get
// the body decoded once: the same object. The others still get their own.
func TestSharedGetsReadOnlyDecodedOnce(t *testing.T) {
	u := newUpstream(t)
	release := make(chan struct{})
	blockingResource(t, u, release)
	c := u.client()
	const readOnly, owning = 4, 2
	ro, own := make(chan result, readOnly), make(chan result, owning)
	for i := range readOnly + owning {
		ctx, ch := WithReadOnlyResults(ctxT(t)), ro
		if i >= readOnly {
			ctx, ch = ctxT(t), own
		}
		go func() {
			r, resp, err := c.Resources.GetResource(ctx, "r1")
			ch <- result{r, resp, err}
		}()
	}
	if awaitWaiters(t, c, readOnly+owning) != 1 {
		t.Fatal("identical GETs did not share one call")
	}
	close(release)
	var shared *Resource
	for range readOnly {
		res := <-ro
		if res.err != nil || res.r.ID != "r1" || *res.r.Title != "Room" || res.resp.Header.Get("X-Upstream") != "1" {
			t.Fatalf("%+v", res)
		}
		if shared == nil {
			shared = res.r
		} else if res.r != shared {
			t.Error("read-only callers of one shared GET got different objects")
		}
	}
	var owned []*Resource
	for range owning {
		res := <-own
		if res.err != nil || *res.r.Title != "Room" {
			t.Fatalf("%+v", res)
		}
		if res.r == shared || (len(owned) > 0 && res.r == owned[0]) {
			t.Error("a caller without WithReadOnlyResults got another caller's object")
		}
		owned = append(owned, res.r)
	}
	if u.hits.Load() != 1 {
		t.Errorf("%d upstream hits, want 1", u.hits.Load())
	}
}

// A malformed shared body is a DecodeError naming the route for every
// read-only caller, as it is for one that decodes alone.
func TestSharedGetsReadOnlyMalformed(t *testing.T) {
	u := newUpstream(t)
	release := make(chan struct{})
	u.handle(OpListProducts.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		<-release
		io.WriteString(w, `{"products":[{"id":"p1","title":7}]}`)
	})
	c := u.client()
	const n = 3
	errs := make(chan error, n)
	for range n {
		go func() {
			_, _, err := c.Shop.ListProducts(WithReadOnlyResults(ctxT(t)), &ProductListOptions{LocationRef: "l1"})
			errs <- err
		}()
	}
	if awaitWaiters(t, c, n) != 1 {
		t.Fatal("identical GETs did not share one call")
	}
	close(release)
	for range n {
		var de *DecodeError
		if err := <-errs; !errors.As(err, &de) || de.Route != OpListProducts.Route {
			t.Errorf("got %v, want a DecodeError of /shop/products/v1", err)
		}
	}
}

// A flight's parent keeps its starter's values and none of its deadline or
// cancellation, as context.WithoutCancel.
func TestDetachedIsWithoutCancel(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithTimeout(context.WithValue(t.Context(), key{}, "v"), time.Hour)
	f := &flight{starter: detached{parent}}
	child, stop := context.WithCancel(&f.starter)
	defer stop()
	cancel()
	if _, has := child.Deadline(); has || child.Err() != nil || f.starter.Err() != nil || f.starter.Done() != nil {
		t.Errorf("the starter's deadline or cancellation reached the flight: deadline %v, err %v", has, child.Err())
	}
	if child.Value(key{}) != "v" {
		t.Errorf("the starter's values are lost")
	}
	if context.Cause(child) != nil {
		t.Errorf("Cause of a live flight context: %v", context.Cause(child))
	}
}

// TestSharedGetsEachParse: GetResource and GetResourceLazily of the same
// resource at once share the upstream call, and each caller gets what its
// method decodes: the eager one every object, the lazy one only its scalars.
func TestSharedGetsEachParse(t *testing.T) {
	u := newUpstream(t)
	release := make(chan struct{})
	u.handle(OpGetResource.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		<-release
		io.WriteString(w, `{"resource":{"id":"r1","title":"Room","money":{"currency":"EUR"}}}`)
	})
	c := u.client()
	ctx := WithReadOnlyResults(ctxT(t))
	lazy, eager := make(chan result, 1), make(chan result, 1)
	go func() { r, resp, err := c.Resources.GetResourceLazily(ctx, "r1"); lazy <- result{r, resp, err} }()
	awaitWaiters(t, c, 1)
	go func() { r, resp, err := c.Resources.GetResource(ctx, "r1"); eager <- result{r, resp, err} }()
	awaitWaiters(t, c, 2)
	close(release)
	l, e := <-lazy, <-eager
	if l.err != nil || e.err != nil {
		t.Fatal(l.err, e.err)
	}
	if e.r.Money == nil || e.r.lazy != nil {
		t.Errorf("GetResource got a lazily decoded resource: money %v", e.r.Money)
	}
	if l.r.Money != nil || l.r.lazy == nil {
		t.Errorf("GetResourceLazily decoded the objects")
	}
	if u.hits.Load() != 1 {
		t.Errorf("%d upstream calls, want 1 shared", u.hits.Load())
	}
}
