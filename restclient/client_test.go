package restclient

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/workspacenet/facade/internal/base/clock"
)

func TestNewClientValidation(t *testing.T) {
	for _, base := range []string{"", "::", "ftp://h/x", "http://", "http://u:p@h/api", "http://h/api?x=1", "http://h/api#f"} {
		if _, err := NewClient(base); err == nil {
			t.Errorf("NewClient(%q) accepted", base)
		}
	}
	for name, o := range map[string]Option{
		"nil http client":  WithHTTPClient(nil),
		"basic empty id":   WithBasicAuth("", "s", ""),
		"basic colon id":   WithBasicAuth("a:b", "s", ""),
		"basic network":    WithBasicAuth("a", "s", "net-1"),
		"basic newline":    WithBasicAuth("a", "s", testNetwork+"\n"),
		"bearer empty":     WithBearerToken("", testNetwork),
		"bearer newline":   WithBearerToken("t\r\n", testNetwork),
		"bearer no net":    WithBearerToken("t", ""),
		"bearer bad net":   WithBearerToken("t", "net-1"),
		"timeout zero":     WithTimeout(0),
		"retry negative":   WithRetry(RetryPolicy{MaxRetries: -1}),
		"retry max < base": WithRetry(RetryPolicy{BaseDelay: time.Second, MaxDelay: time.Millisecond}),
		"in flight zero":   WithMaxInFlight(0),
		"user agent empty": WithUserAgent(""),
		"user agent ctrl":  WithUserAgent("a\x00"),
	} {
		if _, err := NewClient("http://h", o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c, err := NewClient("https://h:8443/api/", WithRetry(RetryPolicy{MaxRetries: 5}), WithMaxInFlight(7), WithTimeout(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if c.base != "https://h:8443/api" || c.retry != (RetryPolicy{MaxRetries: 5, BaseDelay: 100 * time.Millisecond, MaxDelay: 2 * time.Second}) {
		t.Errorf("base %q retry %+v", c.base, c.retry)
	}
	tr, ok := c.hc.Transport.(*http.Transport)
	if !ok {
		t.Fatal("default transport is not *http.Transport")
	}
	if tr.MaxIdleConns != 7 || tr.MaxIdleConnsPerHost != 7 || tr.MaxConnsPerHost != 7 || tr.IdleConnTimeout != idleConnTimeout ||
		tr.MaxResponseHeaderBytes != maxResponseHeader || !tr.ForceAttemptHTTP2 ||
		tr.TLSClientConfig == nil || tr.TLSClientConfig.MinVersion != tls.VersionTLS12 {
		t.Errorf("transport not tuned: %+v", tr)
	}
	if c.rt != c.hc.Transport {
		t.Error("attempts do not call the client's own transport")
	}
	if c.hc == http.DefaultClient || c.hc.Timeout == 0 || c.slots.max != 7 {
		t.Error("http client not owned or unbounded")
	}
	if c.Billing == nil || c.Transactions == nil || c.Resources == nil || c.Visitors == nil ||
		c.Feed == nil || c.Shop == nil || c.Discounts == nil || c.Events == nil {
		t.Error("a service is nil")
	}
}

func TestNilContext(t *testing.T) {
	c, _ := NewClient("http://127.0.0.1:1")
	//lint:ignore SA1012 the nil context is the point
	if _, _, err := c.Events.GetEvent(nil, "e"); err == nil { //nolint:staticcheck
		t.Error("nil context accepted")
	}
}

func TestUserAgentAndHTTPClient(t *testing.T) {
	u := newUpstream(t)
	var sent atomic.Int64
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		if ua := r.Header.Get("User-Agent"); ua != "facade-test/2" {
			t.Errorf("User-Agent %q", ua)
		}
		w.Write([]byte(`{"event":{"id":"e"}}`))
	})
	c := u.client(WithUserAgent("facade-test/2"), WithHTTPClient(hc))
	ev, _, err := c.Events.GetEvent(ctxT(t), "e")
	if err != nil || ev.ID != "e" || sent.Load() != 1 {
		t.Fatalf("%v %v sent=%d", ev, err, sent.Load())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// statusSequence answers the statuses in order, then 200 with body ok.
func statusSequence(t *testing.T, u *upstream, pattern string, headers []http.Header, statuses []int, ok string) *atomic.Int64 {
	var n atomic.Int64
	u.handle(pattern, func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if i < len(statuses) {
			if i < len(headers) {
				for k, v := range headers[i] {
					w.Header()[k] = v
				}
			}
			w.WriteHeader(statuses[i])
			w.Write([]byte(`{"message":"try later","type":"unavailable"}`))
			return
		}
		w.Write([]byte(ok))
	})
	return &n
}

func TestRetryGET(t *testing.T) {
	u := newUpstream(t)
	obs := &observations{}
	n := statusSequence(t, u, OpGetResource.Pattern(), nil, []int{503, 502}, `{"resource":{"id":"r"}}`)
	c := u.client()
	var waits []time.Duration
	c.wait = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	c.jitter = func(d time.Duration) time.Duration { return d } // the cap itself
	r, resp, err := c.Resources.GetResource(obs.ctx(t), "r")
	if err != nil || r.ID != "r" || resp.StatusCode != 200 {
		t.Fatalf("%v %v", r, err)
	}
	if n.Load() != 3 {
		t.Errorf("%d attempts", n.Load())
	}
	if len(waits) != 2 || waits[0] != 100*time.Millisecond || waits[1] != 200*time.Millisecond {
		t.Errorf("waits %v, want exponential 100ms, 200ms", waits)
	}
	ci := obs.last(t)
	if ci.Retries != 2 || ci.Status != 200 || ci.Err != nil || ci.Route != OpGetResource.Route || ci.Duration <= 0 {
		t.Errorf("observed %+v", ci)
	}
}

func TestRetryExhausted(t *testing.T) {
	u := newUpstream(t)
	obs := &observations{}
	n := statusSequence(t, u, OpGetEvent.Pattern(), nil, []int{504, 504, 504, 504}, `{}`)
	c := u.client(WithRetry(RetryPolicy{MaxRetries: 3, BaseDelay: time.Millisecond}))
	_, resp, err := c.Events.GetEvent(obs.ctx(t), "e")
	if !IsServerError(err) || StatusCode(err) != 504 || resp == nil || resp.StatusCode != 504 {
		t.Fatalf("err %v", err)
	}
	if n.Load() != 4 {
		t.Errorf("%d attempts, want 4", n.Load())
	}
	if ci := obs.last(t); ci.Retries != 3 || ci.Status != 504 || !errors.Is(ci.Err, err) {
		t.Errorf("observed %+v", ci)
	}
}

func TestNoRetry(t *testing.T) {
	cases := []struct {
		name    string
		pattern string
		status  int
		call    func(c *Client) error
	}{
		{"GET 500", OpGetEvent.Pattern(), 500, func(c *Client) error { _, _, err := c.Events.GetEvent(ctxT(t), "e"); return err }},
		{"GET 404", OpGetEvent.Pattern(), 404, func(c *Client) error { _, _, err := c.Events.GetEvent(ctxT(t), "e"); return err }},
		{"POST 503", OpCreatePost.Pattern(), 503, func(c *Client) error {
			_, _, err := c.Feed.CreatePost(ctxT(t), &PostCreateRequest{LocationRef: new("l")})
			return err
		}},
		{"POST 429", OpCreateBooking.Pattern(), 429, func(c *Client) error {
			_, _, err := c.Resources.CreateBooking(ctxT(t), &BookingCreateRequest{})
			return err
		}},
		{"PUT 502", OpUpdateVisit.Pattern(), 502, func(c *Client) error {
			_, _, err := c.Visitors.UpdateVisit(ctxT(t), "v", &VisitUpdateRequest{})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := newUpstream(t)
			n := statusSequence(t, u, tc.pattern, nil, []int{tc.status, tc.status, tc.status}, `{}`)
			err := tc.call(u.client())
			if StatusCode(err) != tc.status || n.Load() != 1 {
				t.Errorf("err %v after %d attempts", err, n.Load())
			}
		})
	}
	t.Run("retries disabled", func(t *testing.T) {
		u := newUpstream(t)
		n := statusSequence(t, u, OpGetEvent.Pattern(), nil, []int{503, 503}, `{}`)
		_, _, err := u.client(WithRetry(RetryPolicy{MaxRetries: 0})).Events.GetEvent(ctxT(t), "e")
		if StatusCode(err) != 503 || n.Load() != 1 {
			t.Errorf("err %v after %d attempts", err, n.Load())
		}
	})
}

func TestRetryAfter(t *testing.T) {
	u := newUpstream(t)
	n := statusSequence(t, u, OpGetProduct.Pattern(),
		[]http.Header{{"Retry-After": {"3"}}}, []int{429}, `{"product":{"id":"p"}}`)
	c := u.client()
	var waits []time.Duration
	c.wait = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	p, _, err := c.Shop.GetProduct(ctxT(t), "p")
	if err != nil || p.ID != "p" || n.Load() != 2 {
		t.Fatalf("%v after %d", err, n.Load())
	}
	if len(waits) != 1 || waits[0] != 3*time.Second {
		t.Errorf("waits %v, want [3s]", waits)
	}
}

func TestRetryAfterLongIsWaitedWithinTheDeadline(t *testing.T) {
	u := newUpstream(t)
	// 9s is above 4 * MaxDelay (2s), which bounds 503's Retry-After; a 429's
	// is waited whatever it says when the deadline (30s) leaves room.
	n := statusSequence(t, u, OpGetEvent.Pattern(), []http.Header{{"Retry-After": {"9"}}}, []int{429}, `{"event":{"id":"e"}}`)
	c := u.client()
	var waits []time.Duration
	c.wait = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	obs := &observations{}
	if _, _, err := c.Events.GetEvent(obs.ctx(t), "e"); err != nil || n.Load() != 2 {
		t.Fatalf("err %v after %d", err, n.Load())
	}
	if len(waits) != 1 || waits[0] != 9*time.Second {
		t.Errorf("waits %v, want [9s]", waits)
	}
	if ci := obs.last(t); ci.Retries != 1 || ci.RateLimited != 1 {
		t.Errorf("observed %+v", ci)
	}
}

func TestRetryAfterBeyondTheDeadline(t *testing.T) {
	u := newUpstream(t)
	n := statusSequence(t, u, OpGetEvent.Pattern(), []http.Header{{"Retry-After": {"60"}}}, []int{429}, `{}`)
	_, _, err := u.client().Events.GetEvent(ctxT(t), "e") // 30s deadline
	d, ok := IsRateLimited(err)
	if !ok || d != 60*time.Second || n.Load() != 1 {
		t.Errorf("err %v (%v %v) after %d", err, d, ok, n.Load())
	}
}

func Test429WithoutRetryAfterBacksOffFromOneSecond(t *testing.T) {
	u := newUpstream(t)
	n := statusSequence(t, u, OpGetEvent.Pattern(), nil, []int{429, 429, 429, 429}, `{"event":{"id":"e"}}`)
	c := u.client() // default policy: 2 retries, which 429s do not use up
	var waits []time.Duration
	c.wait = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	c.jitter = func(d time.Duration) time.Duration { return d }
	if _, _, err := c.Events.GetEvent(ctxT(t), "e"); err != nil || n.Load() != 5 {
		t.Fatalf("err %v after %d", err, n.Load())
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	if !slices.Equal(waits, want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
}

func TestRetryNeverPastDeadline(t *testing.T) {
	u := newUpstream(t)
	n := statusSequence(t, u, OpGetEvent.Pattern(), []http.Header{{"Retry-After": {"5"}}}, []int{503}, `{}`)
	c := u.client(WithRetry(RetryPolicy{MaxRetries: 2, MaxDelay: 10 * time.Second}))
	c.wait = func(context.Context, time.Duration) error {
		t.Error("waited although the deadline is nearer than Retry-After")
		return nil
	}
	ctx, cancel := context.WithTimeout(ctxT(t), 2*time.Second)
	defer cancel()
	_, _, err := c.Events.GetEvent(ctx, "e")
	if StatusCode(err) != 503 || n.Load() != 1 {
		t.Errorf("err %v after %d", err, n.Load())
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	u := newUpstream(t)
	statusSequence(t, u, OpGetEvent.Pattern(), nil, []int{503, 503}, `{}`)
	c := u.client()
	ctx, cancel := context.WithCancel(ctxT(t))
	c.wait = func(ctx context.Context, d time.Duration) error {
		cancel()
		return clock.Sleep(ctx, time.Hour)
	}
	_, resp, err := c.Events.GetEvent(ctx, "e")
	if err != context.Canceled || resp != nil {
		t.Errorf("err %v resp %v, want context.Canceled", err, resp)
	}
}

func TestBackoff(t *testing.T) {
	c, _ := NewClient("http://h", WithRetry(RetryPolicy{MaxRetries: 50, BaseDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond}))
	c.jitter = func(d time.Duration) time.Duration { return d }
	for i, want := range []time.Duration{10, 20, 40, 50, 50} {
		if got := c.backoff(i); got != want*time.Millisecond {
			t.Errorf("backoff(%d) = %v, want %v", i, got, want*time.Millisecond)
		}
	}
	if got := c.backoff(40); got != 50*time.Millisecond {
		t.Errorf("backoff(40) = %v", got)
	}
	for range 100 {
		if d := fullJitter(10); d < 0 || d > 10 {
			t.Fatalf("jitter %v out of [0, 10]", d)
		}
	}
	if fullJitter(0) != 0 {
		t.Error("jitter of 0")
	}
}

func TestConnectionRefusedRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	obs := &observations{}
	c, err := NewClient("http://"+addr+"/api", WithBearerToken(testToken, testNetwork))
	if err != nil {
		t.Fatal(err)
	}
	var waits int
	c.wait = func(ctx context.Context, d time.Duration) error { waits++; return nil }
	_, resp, err := c.Resources.GetResource(obs.ctx(t), "r")
	var te *TransportError
	if !errors.As(err, &te) || !IsTransport(err) || te.Timeout() || resp != nil {
		t.Fatalf("err %T %v", err, err)
	}
	if waits != 2 || obs.last(t).Retries != 2 || obs.last(t).Status != 0 {
		t.Errorf("waits %d, observed %+v", waits, obs.last(t))
	}
	if strings.Contains(err.Error(), "http://") || !strings.HasPrefix(err.Error(), "GET /resources/v1/{id}: transport error:") {
		t.Errorf("error text %q", err)
	}
	if StatusCode(err) != 0 || IsNotFound(err) {
		t.Error("transport error mistaken for an HTTP answer")
	}
	// POST is not retried on connection errors either.
	waits = 0
	if _, _, err := c.Resources.CreateBooking(obs.ctx(t), &BookingCreateRequest{}); !IsTransport(err) || waits != 0 {
		t.Errorf("POST: err %v waits %d", err, waits)
	}
}

func TestConnectionDroppedRetried(t *testing.T) {
	u := newUpstream(t)
	var n atomic.Int64
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			conn.Close() // no answer at all
			return
		}
		w.Write([]byte(`{"event":{"id":"e"}}`))
	})
	obs := &observations{}
	ev, _, err := u.client().Events.GetEvent(obs.ctx(t), "e")
	if err != nil || ev.ID != "e" {
		t.Fatalf("%v", err)
	}
	if ci := obs.last(t); ci.Retries < 1 {
		t.Errorf("observed %+v", ci)
	}
}

// TestAttemptTimeout: an attempt the upstream never answers ends with the
// attempt timeout, as a timeout TransportError, and is not retried. The
// upstream is in memory in a synctest bubble: the timeout runs on fake time,
// so a slow machine cannot spend it before the request reaches the upstream.
func TestAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, n := memUpstream(t, func(*http.Request) int { return 0 }, WithTimeout(20*time.Millisecond))
		start := time.Now()
		_, _, err := c.Events.GetEvent(t.Context(), "e")
		var te *TransportError
		if !errors.As(err, &te) || !te.Timeout() {
			t.Fatalf("err %T %v, want a timeout TransportError", err, err)
		}
		if n.Load() != 1 {
			t.Errorf("%d attempts: timeouts are not retried", n.Load())
		}
		if d := time.Since(start); d != 20*time.Millisecond {
			t.Errorf("gave up after %v, want the attempt timeout (20ms)", d)
		}
	})
}

func TestCancelInFlight(t *testing.T) {
	u := newUpstream(t)
	entered := make(chan struct{})
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done()
	})
	obs := &observations{}
	c := u.client()
	ctx, cancel := context.WithCancel(obs.ctx(t))
	go func() {
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
		}
		cancel()
	}()
	_, resp, err := c.Events.GetEvent(ctx, "e")
	if err != context.Canceled || resp != nil {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if ci := obs.last(t); ci.Err != context.Canceled || ci.Retries != 0 {
		t.Errorf("observed %+v", ci)
	}
}

func TestContextAlreadyDone(t *testing.T) {
	u := newUpstream(t)
	c := u.client()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := c.Events.GetEvent(ctx, "e"); err != context.Canceled {
		t.Errorf("err %v", err)
	}
	dctx, dcancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer dcancel()
	if _, _, err := c.Events.GetEvent(dctx, "e"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v", err)
	}
	if u.hits.Load() != 0 {
		t.Errorf("%d requests sent with a done context", u.hits.Load())
	}
}

func TestMaxInFlight(t *testing.T) {
	u := newUpstream(t)
	release := make(chan struct{})
	entered := make(chan struct{}, 10)
	var cur, peak atomic.Int64
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		v := cur.Add(1)
		for {
			p := peak.Load()
			if v <= p || peak.CompareAndSwap(p, v) {
				break
			}
		}
		entered <- struct{}{}
		select {
		case <-release:
		case <-time.After(10 * time.Second):
			t.Error("never released")
		}
		cur.Add(-1)
		w.Write([]byte(`{"event":{"id":"e"}}`))
	})
	c := u.client(WithMaxInFlight(2), WithSharedGets(false)) // 4 identical GETs, 4 upstream calls
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			_, _, err := c.Events.GetEvent(ctxT(t), "e")
			errs <- err
		})
	}
	for range 2 {
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatal("requests did not start")
		}
	}
	// Both slots are taken: a call whose context ends while waiting for one
	// returns its ctx error without reaching the upstream.
	ctx, cancel := context.WithCancel(ctxT(t))
	cancel()
	c2ctx := ctx
	if _, _, err := c.Events.GetEvent(c2ctx, "e"); err != context.Canceled {
		t.Errorf("waiting call: %v", err)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if peak.Load() > 2 || u.hits.Load() != 4 {
		t.Errorf("peak %d in flight, %d hits", peak.Load(), u.hits.Load())
	}
}

func TestMaxInFlightWaitCancelled(t *testing.T) {
	c, _ := NewClient("http://h", WithMaxInFlight(1))
	if err := c.slots.acquire(t.Context(), "someone"); err != nil { // the only slot is taken
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
	defer cancel()
	if _, _, err := c.Events.GetEvent(ctx, "e"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v", err)
	}
}

func TestPerCallCredentials(t *testing.T) {
	u := newUpstream(t)
	type hdrs struct{ auth, net string }
	got := make(chan hdrs, 1)
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		_, hasNet := r.Header["Service-Network-Id"]
		n := r.Header.Get("service-network-id")
		if !hasNet {
			n = "<absent>"
		}
		got <- hdrs{r.Header.Get("Authorization"), n}
		w.Write([]byte(`{"event":{"id":"e"}}`))
	})
	c := u.client() // fixed bearer credentials
	for _, tc := range []struct {
		ctx  context.Context
		want hdrs
	}{
		{ctxT(t), hdrs{"Bearer " + testToken, testNetwork}},
		{WithCredentials(ctxT(t), Credentials{Authorization: "Bearer caller", NetworkID: "n2"}), hdrs{"Bearer caller", "n2"}},
		{WithCredentials(ctxT(t), Credentials{Authorization: "Basic abc="}), hdrs{"Basic abc=", "<absent>"}},
		{WithCredentials(ctxT(t), Credentials{}), hdrs{"", "<absent>"}},
	} {
		if _, _, err := c.Events.GetEvent(tc.ctx, "e"); err != nil {
			t.Fatal(err)
		}
		if h := <-got; h != tc.want {
			t.Errorf("sent %+v, want %+v", h, tc.want)
		}
	}
	cr, ok := CredentialsFromContext(WithCredentials(t.Context(), Credentials{NetworkID: "x"}))
	if !ok || cr.NetworkID != "x" {
		t.Error("CredentialsFromContext")
	}
	if _, ok := CredentialsFromContext(t.Context()); ok {
		t.Error("credentials in an empty context")
	}
	bad := WithCredentials(ctxT(t), Credentials{Authorization: "Bearer a\r\nX-Evil: 1"})
	if _, _, err := c.Events.GetEvent(bad, "e"); err == nil || strings.Contains(err.Error(), "Evil") {
		t.Errorf("header injection: %v", err)
	}
	if _, _, err := c.Events.GetEvent(WithCredentials(ctxT(t), Credentials{NetworkID: "n\n"}), "e"); err == nil {
		t.Error("invalid network id accepted")
	}
}

func TestNoCredentials(t *testing.T) {
	u := newUpstream(t)
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.Header["Authorization"]; ok {
			t.Error("Authorization sent without credentials")
		}
		w.WriteHeader(401)
		w.Write([]byte(`{"message":"missing credentials","type":"unauthorized"}`))
	})
	c, _ := NewClient(u.srv.URL + basePath)
	_, _, err := c.Events.GetEvent(ctxT(t), "e")
	if !IsUnauthorized(err) {
		t.Errorf("err %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	for name, body := range map[string]string{
		"not json":         `<html>oops</html>`,
		"no wrapper":       `{"other":{}}`,
		"null wrapper":     `{"event":null}`,
		"null body":        `null`,
		"array body":       `[]`,
		"wrong type":       `{"event":{"id":"e","showAttendees":"yes"}}`,
		"trailing":         `{"event":{}} x`,
		"empty":            ``,
		"wrong field type": `{"event":{"price":[]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			u := newUpstream(t)
			u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
			ev, resp, err := u.client().Events.GetEvent(ctxT(t), "e")
			var de *DecodeError
			if !errors.As(err, &de) || ev != nil || resp == nil || resp.StatusCode != 200 {
				t.Fatalf("ev %v err %T %v", ev, err, err)
			}
			if de.Route != OpGetEvent.Route || de.Unwrap() == nil || !strings.HasPrefix(err.Error(), "GET /events/v1/{id}: decoding response") {
				t.Errorf("%+v", de)
			}
			if u.hits.Load() != 1 {
				t.Errorf("decode errors are not retried: %d hits", u.hits.Load())
			}
		})
	}
	u := newUpstream(t)
	u.handle(OpListRedemptions.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"redemptions":[],"nextPageToken":7}`)
	})
	u.handle(OpListOrders.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"orders":{},"nextPageToken":"x"}`)
	})
	u.handle(OpListComments.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"comments":[],"searchQueryNext":[]}`)
	})
	u.handle(OpListInvoiceItems.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"invoice":1}`)
	})
	var de *DecodeError
	if _, _, err := u.client().Discounts.ListRedemptions(ctxT(t), nil); !errors.As(err, &de) {
		t.Errorf("numeric page token: %v", err)
	}
	if _, _, err := u.client().Shop.ListOrders(ctxT(t), nil); !errors.As(err, &de) {
		t.Errorf("object instead of list: %v", err)
	}
	if _, _, err := u.client().Feed.ListComments(ctxT(t), "p"); !errors.As(err, &de) {
		t.Errorf("array searchQueryNext: %v", err)
	}
	if _, _, err := u.client().Billing.ListInvoiceItems(ctxT(t), "i"); !errors.As(err, &de) {
		t.Errorf("numeric invoice: %v", err)
	}
}

func TestUnknownAndMissingFieldsTolerated(t *testing.T) {
	u := newUpstream(t)
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"event":{"id":"e","brandNew":{"x":[1,2]},"startDate":null,"endDate":"","limitedAttendees":{"limit":12.5}},"meta":1}`)
	})
	ev, _, err := u.client().Events.GetEvent(ctxT(t), "e")
	if err != nil {
		t.Fatal(err)
	}
	if ev.StartDate != nil || ev.EndDate == nil || !ev.EndDate.IsZero() || *ev.LimitedAttendees.Limit != 12.5 || ev.Title != nil {
		t.Errorf("%+v", ev)
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	u := newUpstream(t)
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://elsewhere.invalid/steal", http.StatusFound)
	})
	_, _, err := u.client().Events.GetEvent(ctxT(t), "e")
	if StatusCode(err) != http.StatusFound {
		t.Errorf("err %v", err)
	}
}

func TestCallHooksSeeErrors(t *testing.T) {
	u := newUpstream(t)
	u.serveJSON(OpCreateVisitRequest.Pattern(), wantRequest{method: "POST", path: OpCreateVisitRequest.Route, body: `{"request":{}}`},
		http.StatusConflict, `{"message":"exists","type":"conflict"}`)
	obs := &observations{}
	ctx := WithCallHooks(ctxT(t), CallHooks{After: func(ctx context.Context, ci CallInfo) {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("After did not get the call's context")
		}
		obs.observe(ctx, ci)
	}})
	_, _, err := u.client().Visitors.CreateVisitRequest(ctx, &VisitRequestCreateRequest{})
	if !IsConflict(err) {
		t.Fatalf("err %v", err)
	}
	ci := obs.last(t)
	if ci.Method != "POST" || ci.Route != OpCreateVisitRequest.Route || ci.Status != 409 || ci.Retries != 0 || !IsConflict(ci.Err) {
		t.Errorf("observed %+v", ci)
	}
}

// A call's URL is the base URL, its route with the escaped id in the
// placeholder, and its query; the path of errors is the part between.
func TestCallTarget(t *testing.T) {
	c, err := NewClient("http://upstream.test/api/")
	if err != nil {
		t.Fatal(err)
	}
	seg, _ := escapeID(&OpUpdatePost.Operation, "a b/c?d")
	for _, tc := range []struct {
		rc         call
		want, path string
	}{
		{call{route: OpListOrders.Route}, "http://upstream.test/api/shop/orders/v1", OpListOrders.Route},
		{call{route: OpGetResource.Route, id: "r1"}, "http://upstream.test/api/resources/v1/r1", "/resources/v1/r1"},
		{call{route: OpListComments.Route, id: seg, query: url.Values{"limit": {"5"}, "q": {"x?y"}}},
			"http://upstream.test/api/feed/posts/v1/a%20b%2Fc%3Fd/comments?limit=5&q=x%3Fy", "/feed/posts/v1/a%20b%2Fc%3Fd/comments"},
	} {
		got := c.target(&tc.rc)
		if got != tc.want || c.pathOf(got) != tc.path {
			t.Errorf("%s with %q: target %q, path %q; want %q, %q", tc.rc.route, tc.rc.id, got, c.pathOf(got), tc.want, tc.path)
		}
	}
}
