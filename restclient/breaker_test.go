package restclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// stateLog records breaker state changes.
type stateLog struct {
	mu      sync.Mutex
	changes []string
}

func (l *stateLog) record(route string, from, to BreakerState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.changes = append(l.changes, fmt.Sprintf("%s: %s->%s", route, from, to))
}

func (l *stateLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.changes)
}

// failingRoute answers status while bad is set, else a valid event.
func failingRoute(u *upstream, pattern string, status int, bad *atomic.Bool) *atomic.Int64 {
	var n atomic.Int64
	u.handle(pattern, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if bad.Load() {
			w.WriteHeader(status)
			io.WriteString(w, `{"message":"down","type":"unavailable"}`)
			return
		}
		io.WriteString(w, `{"event":{"id":"e"},"product":{"id":"p"},"booking":{"id":"b"}}`)
	})
	return &n
}

var noRetry = WithRetry(RetryPolicy{MaxRetries: 0})

// waitState polls the breaker of GET route until it is want (the open ->
// half-open move happens when the state is read after OpenTimeout).
func waitState(t *testing.T, c *Client, method, route string, want BreakerState) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.ClientBreakerState(method, route, testCreds) != want {
		if time.Now().After(deadline) {
			t.Fatalf("breaker of %s %s is %s, never became %s", method, route, c.ClientBreakerState(method, route, testCreds), want)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestBreakerOpensAndFailsFast(t *testing.T) {
	u := newUpstream(t)
	bad := new(atomic.Bool)
	bad.Store(true)
	n := failingRoute(u, OpGetEvent.Pattern(), http.StatusServiceUnavailable, bad)
	obs, log := &observations{}, &stateLog{}
	c := u.client(WithBreakerStateChange(log.record)) // default breaker, 2 retries
	for i := range 5 {
		if _, _, err := c.Events.GetEvent(obs.ctx(t), "e"); StatusCode(err) != 503 {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	// The breaker counts logical calls: 5 calls of 3 attempts each.
	if n.Load() != 15 {
		t.Errorf("%d upstream hits, want 15", n.Load())
	}
	if got := log.get(); !slices.Equal(got, []string{"GET /events/v1/{id} client " + testID[:8] + ": closed->open"}) {
		t.Errorf("state changes %v", got)
	}
	if c.ClientBreakerState("GET", OpGetEvent.Route, testCreds) != BreakerOpen {
		t.Error("breaker not open")
	}
	for _, id := range []string{"e", "other"} { // the route, not the id, is broken
		ev, resp, err := c.Events.GetEvent(obs.ctx(t), id)
		var ce *CircuitOpenError
		if !errors.As(err, &ce) || ev != nil || resp != nil {
			t.Fatalf("err %T %v", err, err)
		}
		if ce.Method != "GET" || ce.Route != OpGetEvent.Route || !IsCircuitOpen(err) || !errors.Is(err, ErrCircuitOpen) {
			t.Errorf("%+v", ce)
		}
		if IsTransport(err) || IsServerError(err) || StatusCode(err) != 0 {
			t.Error("circuit open mistaken for another failure")
		}
		if err.Error() != "GET /events/v1/{id}: circuit open: this client's calls of the route keep failing, not called" {
			t.Errorf("text %q", err)
		}
	}
	if n.Load() != 15 {
		t.Errorf("open breaker let %d calls through", n.Load()-15)
	}
	ci := obs.last(t)
	if ci.Status != 0 || !IsCircuitOpen(ci.Err) || ci.Retries != 0 || ci.Route != OpGetEvent.Route || ci.Shared {
		t.Errorf("observed %+v", ci)
	}
	if IsCircuitOpen(errors.New("x")) || IsCircuitOpen(nil) {
		t.Error("IsCircuitOpen of other errors")
	}
}

func TestBreakerIgnoresClientErrorsAndThrottling(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusBadRequest, http.StatusConflict, http.StatusTooManyRequests} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			u := newUpstream(t)
			bad := new(atomic.Bool)
			bad.Store(true)
			n := failingRoute(u, OpGetEvent.Pattern(), status, bad)
			log := &stateLog{}
			c := u.client(noRetry, WithBreakerStateChange(log.record))
			for i := range 20 {
				if _, _, err := c.Events.GetEvent(ctxT(t), "e"); StatusCode(err) != status {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			if n.Load() != 20 || len(log.get()) != 0 || c.ClientBreakerState("GET", OpGetEvent.Route, testCreds) != BreakerClosed {
				t.Errorf("%d hits, changes %v", n.Load(), log.get())
			}
		})
	}
}

func TestBreakerSuccessResetsConsecutiveFailures(t *testing.T) {
	u := newUpstream(t)
	var n atomic.Int64
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 5 { // the upstream answered: a 404 is a success
			w.WriteHeader(404)
			return
		}
		w.WriteHeader(500)
	})
	c := u.client(noRetry)
	for range 9 { // 4 failures, 1 success, 4 failures: never 5 in a row, 9 < MinRequests
		if _, _, err := c.Events.GetEvent(ctxT(t), "e"); IsCircuitOpen(err) {
			t.Fatal("opened")
		}
	}
	if n.Load() != 9 || c.ClientBreakerState("GET", OpGetEvent.Route, testCreds) != BreakerClosed {
		t.Errorf("%d hits", n.Load())
	}
}

func TestBreakerFailureRatio(t *testing.T) {
	u := newUpstream(t)
	var n atomic.Int64
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			w.WriteHeader(502)
			return
		}
		io.WriteString(w, `{"event":{"id":"e"}}`)
	})
	c := u.client(noRetry)
	// success, failure, ...: the 10th call makes 5 failures of 10.
	for i := 1; i <= 10; i++ {
		if got := c.ClientBreakerState("GET", OpGetEvent.Route, testCreds); got != BreakerClosed {
			t.Fatalf("before call %d: %s", i, got)
		}
		c.Events.GetEvent(ctxT(t), "e")
	}
	if c.ClientBreakerState("GET", OpGetEvent.Route, testCreds) != BreakerOpen {
		t.Error("a 50% failure ratio over 10 calls did not open the breaker")
	}
}

func TestBreakerIgnoresCallerCancellation(t *testing.T) {
	u := newUpstream(t)
	entered := make(chan struct{}, 1)
	block := func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // only then does the server watch for the client leaving
		entered <- struct{}{}
		<-r.Context().Done()
	}
	u.handle(OpGetEvent.Pattern(), block)
	u.handle(OpCreateBooking.Pattern(), block)
	log := &stateLog{}
	c := u.client(noRetry, WithSharedGets(false), WithBreakerStateChange(log.record))
	cancelled := func(call func(ctx context.Context) error) {
		t.Helper()
		ctx, cancel := context.WithCancel(ctxT(t))
		defer cancel()
		errc := make(chan error, 1)
		go func() { errc <- call(ctx) }()
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatal("request did not arrive")
		}
		cancel()
		select {
		case err := <-errc:
			if err != context.Canceled {
				t.Fatalf("err %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("call did not return")
		}
	}
	for range 8 {
		cancelled(func(ctx context.Context) error { _, _, err := c.Events.GetEvent(ctx, "e"); return err })
		cancelled(func(ctx context.Context) error {
			_, _, err := c.Resources.CreateBooking(ctx, &BookingCreateRequest{})
			return err
		})
	}
	if len(log.get()) != 0 || c.ClientBreakerState("GET", OpGetEvent.Route, testCreds) != BreakerClosed ||
		c.ClientBreakerState("POST", OpCreateBooking.Route, testCreds) != BreakerClosed {
		t.Errorf("cancellations moved a breaker: %v", log.get())
	}
	if u.hits.Load() != 16 {
		t.Errorf("%d hits", u.hits.Load())
	}
}

// TestBreakerHalfOpenRecovery runs in a synctest bubble: the open timeout
// (50ms) is fake time, which stands still between a call and the test's look
// at the breaker, however slow the machine.
func TestBreakerHalfOpenRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bad := new(atomic.Bool)
		bad.Store(true)
		log := &stateLog{}
		var route = OpGetEvent.Route
		c, n := memUpstream(t, func(*http.Request) int {
			if bad.Load() {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		}, noRetry, WithBreakerStateChange(log.record), WithCircuitBreaker(BreakerSettings{
			ConsecutiveFailures: 2, OpenTimeout: 50 * time.Millisecond, HalfOpenProbes: 2,
		}))
		trip := func() {
			t.Helper()
			for range 2 {
				c.Events.GetEvent(ctxT(t), "e")
			}
			if c.ClientBreakerState("GET", route, testCreds) != BreakerOpen {
				t.Fatal("not open")
			}
		}
		trip()
		hits := n.Load()
		if _, _, err := c.Events.GetEvent(ctxT(t), "e"); !IsCircuitOpen(err) || n.Load() != hits {
			t.Fatalf("open breaker: %v, %d hits", err, n.Load()-hits)
		}

		// Still failing when half-open: the first probe's failure reopens it.
		waitState(t, c, "GET", route, BreakerHalfOpen)
		if _, _, err := c.Events.GetEvent(ctxT(t), "e"); StatusCode(err) != 500 || n.Load() != hits+1 {
			t.Fatalf("probe: %v", err)
		}
		if c.ClientBreakerState("GET", route, testCreds) != BreakerOpen {
			t.Fatal("failed probe did not reopen the breaker")
		}

		// Recovered: both probes must succeed to close it.
		bad.Store(false)
		waitState(t, c, "GET", route, BreakerHalfOpen)
		for i := range 2 {
			if _, _, err := c.Events.GetEvent(ctxT(t), "e"); err != nil {
				t.Fatalf("probe %d: %v", i, err)
			}
			if i == 0 && c.ClientBreakerState("GET", route, testCreds) != BreakerHalfOpen {
				t.Error("closed after one of two probes")
			}
		}
		if c.ClientBreakerState("GET", route, testCreds) != BreakerClosed || n.Load() != hits+3 {
			t.Errorf("state %s after recovery, %d hits", c.ClientBreakerState("GET", route, testCreds), n.Load()-hits)
		}
		want := []string{"closed->open", "open->half-open", "half-open->open", "open->half-open", "half-open->closed"}
		for i := range want {
			want[i] = "GET " + route + " client " + testID[:8] + ": " + want[i]
		}
		if got := log.get(); !slices.Equal(got, want) {
			t.Errorf("changes %v\nwant %v", got, want)
		}
	})
}

func TestBreakerHalfOpenProbeLimitAndAbandonedProbe(t *testing.T) {
	u := newUpstream(t)
	var bad atomic.Bool
	bad.Store(true)
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		if bad.Load() {
			w.WriteHeader(503)
			return
		}
		entered <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, `{"event":{"id":"e"}}`)
	})
	var route = OpGetEvent.Route
	c := u.client(noRetry, WithCircuitBreaker(BreakerSettings{ConsecutiveFailures: 1, OpenTimeout: 50 * time.Millisecond, HalfOpenProbes: 1}))
	c.Events.GetEvent(ctxT(t), "e")
	bad.Store(false)
	waitState(t, c, "GET", route, BreakerHalfOpen)

	// The one probe is in flight: a second call is refused without I/O.
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	errc := make(chan error, 1)
	go func() { _, _, err := c.Events.GetEvent(ctx, "e"); errc <- err }()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("probe did not arrive")
	}
	if _, _, err := c.Events.GetEvent(ctxT(t), "other"); !IsCircuitOpen(err) {
		t.Errorf("second call while probing: %v", err)
	}
	// The caller abandons the probe: that is no evidence against the
	// upstream and must not leave the breaker stuck half-open.
	cancel()
	if err := <-errc; err != context.Canceled {
		t.Fatalf("abandoned probe: %v", err)
	}
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, _, err := c.Events.GetEvent(ctxT(t), "e")
		if err == nil {
			break
		}
		if !IsCircuitOpen(err) || time.Now().After(deadline) {
			t.Fatalf("after the abandoned probe: %v", err)
		}
		time.Sleep(time.Millisecond) // the shared call records its outcome after the caller left
	}
	if c.ClientBreakerState("GET", route, testCreds) != BreakerClosed {
		t.Errorf("state %s", c.ClientBreakerState("GET", route, testCreds))
	}
}

func TestBreakerPerRoute(t *testing.T) {
	u := newUpstream(t)
	bad := new(atomic.Bool)
	bad.Store(true)
	good := new(atomic.Bool)
	failingRoute(u, OpGetEvent.Pattern(), 503, bad)
	products := failingRoute(u, OpGetProduct.Pattern(), 503, good)
	bookings := failingRoute(u, OpCreateBooking.Pattern(), 503, good)
	c := u.client(noRetry)
	for range 5 {
		c.Events.GetEvent(ctxT(t), "e")
	}
	if _, _, err := c.Events.GetEvent(ctxT(t), "e"); !IsCircuitOpen(err) {
		t.Fatalf("events: %v", err)
	}
	if p, _, err := c.Shop.GetProduct(ctxT(t), "p"); err != nil || p.ID != "p" || products.Load() != 1 {
		t.Errorf("products: %v", err)
	}
	if _, _, err := c.Resources.CreateBooking(ctxT(t), &BookingCreateRequest{}); err != nil || bookings.Load() != 1 {
		t.Errorf("bookings: %v", err)
	}
	if c.ClientBreakerState("GET", OpGetProduct.Route, testCreds) != BreakerClosed {
		t.Error("products breaker moved")
	}
	// Breakers are per client.
	if _, _, err := u.client(noRetry).Events.GetEvent(ctxT(t), "e"); StatusCode(err) != 503 {
		t.Errorf("another client: %v", err)
	}
}

func TestBreakerTransportErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := NewClient("http://"+addr+"/api", noRetry, WithCircuitBreaker(BreakerSettings{ConsecutiveFailures: 3}))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, _, err := c.Events.GetEvent(ctxT(t), "e"); !IsTransport(err) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if _, _, err := c.Events.GetEvent(ctxT(t), "e"); !IsCircuitOpen(err) {
		t.Errorf("after 3 refused connections: %v", err)
	}
}

func TestBreakerDisabled(t *testing.T) {
	u := newUpstream(t)
	bad := new(atomic.Bool)
	bad.Store(true)
	n := failingRoute(u, OpGetEvent.Pattern(), 503, bad)
	c := u.client(noRetry, WithCircuitBreaker(BreakerSettings{Disabled: true, ConsecutiveFailures: 1}))
	for range 12 {
		if _, _, err := c.Events.GetEvent(ctxT(t), "e"); StatusCode(err) != 503 {
			t.Fatalf("err %v", err)
		}
	}
	if n.Load() != 12 || c.ClientBreakerState("GET", OpGetEvent.Route, testCreds) != BreakerClosed {
		t.Errorf("%d hits", n.Load())
	}
}

func TestWithCircuitBreakerSettings(t *testing.T) {
	for name, s := range map[string]BreakerSettings{
		"ratio above 1":    {FailureRatio: 1.5},
		"negative ratio":   {FailureRatio: -0.1},
		"negative window":  {Window: -time.Second},
		"negative timeout": {OpenTimeout: -time.Second},
	} {
		if _, err := NewClient("http://h", WithCircuitBreaker(s)); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	c, err := NewClient("http://h", WithCircuitBreaker(BreakerSettings{ConsecutiveFailures: 2, Window: time.Minute}))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultBreakerSettings()
	want.ConsecutiveFailures, want.Window = 2, time.Minute
	if c.breakerSettings != want || c.breakers.settings != want {
		t.Errorf("settings %+v", c.breakerSettings)
	}
	for s, want := range map[BreakerState]string{BreakerClosed: "closed", BreakerHalfOpen: "half-open", BreakerOpen: "open", 7: "unknown"} {
		if s.String() != want {
			t.Errorf("%d: %s", s, s)
		}
	}
}

func TestClassify(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	live := context.Background()
	for name, tc := range map[string]struct {
		ctx  context.Context
		err  error
		want outcome
	}{
		"ok":                {live, nil, outcomeSuccess},
		"500":               {live, &ErrorResponse{StatusCode: 500}, outcomeFailure},
		"504":               {live, &ErrorResponse{StatusCode: 504}, outcomeFailure},
		"transport":         {live, &TransportError{Err: errors.New("reset")}, outcomeFailure},
		"attempt timeout":   {live, &TransportError{Err: context.DeadlineExceeded}, outcomeFailure},
		"404":               {live, &ErrorResponse{StatusCode: 404}, outcomeSuccess},
		"401":               {live, &ErrorResponse{StatusCode: 401}, outcomeSuccess},
		"429":               {live, &ErrorResponse{StatusCode: 429}, outcomeIgnored},
		"decode":            {live, &DecodeError{Err: errors.New("bad")}, outcomeSuccess},
		"caller cancelled":  {done, context.Canceled, outcomeIgnored},
		"canceled, ctx ok":  {live, context.Canceled, outcomeSuccess},
		"5xx after cancel?": {done, &ErrorResponse{StatusCode: 503}, outcomeFailure},
	} {
		if got := classify(tc.ctx, tc.err); got != tc.want {
			t.Errorf("%s: %d, want %d", name, got, tc.want)
		}
	}
}

// lateAllow is a route's real breaker whose next Allow, once armed, runs only
// after the open timeout has passed: a call that read the breaker's state
// just before Allow saw "open", and Allow then moves the breaker to half-open
// and admits the call as a probe. Tests use it in a synctest bubble, where
// the sleep passes fake time at once.
type lateAllow struct {
	breaker
	delay time.Duration
	armed bool
}

func (b *lateAllow) Allow() (func(bool), error) {
	if b.armed {
		b.armed = false
		time.Sleep(b.delay)
	}
	return b.breaker.Allow()
}

// TestBreakerIgnoredProbeAdmittedByAllowReturnsItsSlot reproduces the probe
// slot leak: the open timeout passes between a call's last look at the
// breaker (open) and its Allow, which admits it as the one half-open probe;
// the probe's outcome is ignored (a 429, or the caller's cancellation). The
// probe's slot must come back: later calls are admitted, not refused for
// good.
func TestBreakerIgnoredProbeAdmittedByAllowReturnsItsSlot(t *testing.T) {
	var (
		route       = OpGetEvent.Route
		openTimeout = 5 * time.Second
	)
	for _, ignored := range []string{"429", "caller cancelled"} {
		t.Run(ignored, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var (
					answers    = []int{503, 0, 200} // 0: the ignored outcome
					hits       int
					cancelCall context.CancelFunc
				)
				hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					status := answers[hits]
					hits++
					if status == 0 && ignored == "caller cancelled" {
						cancelCall()
						return nil, r.Context().Err()
					}
					if status == 0 {
						status = http.StatusTooManyRequests
					}
					body := `{"event":{"id":"e"}}`
					if status != 200 {
						body = `{"message":"no","type":"unavailable"}`
					}
					return &http.Response{
						StatusCode: status, Header: http.Header{}, Request: r,
						Body: io.NopCloser(strings.NewReader(body)),
					}, nil
				})}
				log := &stateLog{}
				c, err := NewClient("http://upstream.test/api", noRetry, WithHTTPClient(hc), WithSharedGets(false),
					WithBearerToken(testToken, testNetwork), WithBreakerStateChange(log.record),
					WithCircuitBreaker(BreakerSettings{ConsecutiveFailures: 1, OpenTimeout: openTimeout, HalfOpenProbes: 1}))
				if err != nil {
					t.Fatal(err)
				}
				// gobreaker moves to half-open once its open expiry is
				// strictly before now.
				late := &lateAllow{breaker: c.breakers.get("GET", route, testID), delay: openTimeout + time.Millisecond}
				c.breakers.mu.Lock()
				c.breakers.m[breakerKey{"GET", route, testID}] = late
				c.breakers.mu.Unlock()

				if _, _, err := c.Events.GetEvent(t.Context(), "e"); StatusCode(err) != 503 {
					t.Fatalf("tripping call: %v", err)
				}
				// Fake time stands still until the goroutine sleeps: the
				// breaker is open at the call's start, and turns half-open
				// inside its Allow.
				if s := c.ClientBreakerState("GET", route, testCreds); s != BreakerOpen {
					t.Fatalf("before the probe: %s", s)
				}
				late.armed = true
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				cancelCall = cancel
				_, _, err = c.Events.GetEvent(ctx, "e")
				if wantStatus := map[string]int{"429": 429, "caller cancelled": 0}[ignored]; StatusCode(err) != wantStatus ||
					(ignored == "caller cancelled") != errors.Is(err, context.Canceled) {
					t.Fatalf("probe: %v", err)
				}
				if hits != 2 || late.armed {
					t.Fatalf("the probe was not admitted: %d upstream calls", hits)
				}

				// Half-open has no timeout: a leaked slot refuses calls
				// however long one waits.
				time.Sleep(10 * openTimeout)
				if _, _, err := c.Events.GetEvent(t.Context(), "e"); err != nil {
					t.Fatalf("after the ignored probe: %v (probe slot leaked, breaker %s)", err, c.ClientBreakerState("GET", route, testCreds))
				}
				if hits != 3 || c.ClientBreakerState("GET", route, testCreds) != BreakerClosed {
					t.Errorf("%d upstream calls, breaker %s", hits, c.ClientBreakerState("GET", route, testCreds))
				}
				want := []string{"closed->open", "open->half-open", "half-open->closed"}
				for i := range want {
					want[i] = "GET " + route + " client " + testID[:8] + ": " + want[i]
				}
				if got := log.get(); !slices.Equal(got, want) {
					t.Errorf("changes %v\nwant %v", got, want)
				}
			})
		})
	}
}
