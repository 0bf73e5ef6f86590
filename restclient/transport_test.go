package restclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Tests of the connections every call goes over, against an upstream whose
// bytes on the wire the test writes itself: whatever an upstream (or a
// proxy in front of it) sends on a pooled connection outside an exchange,
// no caller receives an answer to another request.

// wireUpstream is a fake upstream on loopback. On each connection it reads
// the requests in order and answers GET /events/v1/{id} with the event
// {"id": id, "title": "<token>'s private event"} of the token that asked.
type wireUpstream struct {
	t   *testing.T
	url string

	mu    sync.Mutex
	conns []*wireConn

	// requests counts the requests read, on any connection.
	requests atomic.Int64
}

// wireConn is one connection of a wireUpstream.
type wireConn struct {
	net.Conn
	// gone is closed when the client has closed the connection (the
	// server read its end).
	gone chan struct{}
	// answered counts the requests answered on the connection.
	answered atomic.Int64
	// muted: requests read on the connection are counted in late and left
	// unanswered, and the connection is closed.
	muted atomic.Bool
	late  atomic.Int64

	mu sync.Mutex
	// before is written ahead of the next answer on the connection.
	before []byte
}

func newWireUpstream(t *testing.T) *wireUpstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &wireUpstream{t: t, url: "http://" + ln.Addr().String() + basePath}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		u.mu.Lock()
		for _, c := range u.conns {
			c.Close()
		}
		u.mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wc := &wireConn{Conn: c, gone: make(chan struct{})}
			u.mu.Lock()
			u.conns = append(u.conns, wc)
			u.mu.Unlock()
			wg.Go(func() { u.serve(wc) })
		}
	})
	return u
}

// serve answers wc's requests in order until the client closes it.
func (u *wireUpstream) serve(wc *wireConn) {
	defer close(wc.gone)
	defer wc.Close()
	br := bufio.NewReader(wc)
	for {
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		u.requests.Add(1)
		if wc.muted.Load() {
			wc.late.Add(1)
			return
		}
		wc.mu.Lock()
		out := append(wc.before, eventAnswer(r)...)
		wc.before = nil
		wc.mu.Unlock()
		if _, err := wc.Write(out); err != nil {
			return
		}
		wc.answered.Add(1)
	}
}

// eventAnswer is the whole HTTP answer to r: the event of r's id, titled
// after r's token.
func eventAnswer(r *http.Request) []byte {
	id := strings.TrimPrefix(r.URL.Path, basePath+"/events/v1/")
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	return answerBytes(fmt.Sprintf(`{"event":{"id":%q,"title":%q}}`, id, token+"'s private event"))
}

func answerBytes(body string) []byte {
	return []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

// only returns the one connection u has accepted so far.
func (u *wireUpstream) only() *wireConn {
	u.t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.conns) != 1 {
		u.t.Fatalf("%d connections, want 1", len(u.conns))
	}
	return u.conns[0]
}

// connCount returns the number of connections u has accepted.
func (u *wireUpstream) connCount() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.conns)
}

// waitClosedByClient waits for the client to close wc, as a client must
// when bytes arrive on a connection with no request outstanding; it fails
// t (and returns) when the client keeps the connection, so that the caller
// goes on to show what reusing it does. The bound only stops a test that
// would hang.
func waitClosedByClient(t *testing.T, wc *wireConn) {
	t.Helper()
	select {
	case <-wc.gone:
	case <-time.After(10 * time.Second):
		t.Error("the client kept an idle connection on which bytes arrived with no request outstanding")
	}
}

// wireClient is a client of u without credentials of its own: each call
// carries its tenant's (WithCredentials) and makes its own upstream
// exchange (no shared GETs), so each answer read is one call's.
func wireClient(t *testing.T, u *wireUpstream, opts ...Option) *Client {
	t.Helper()
	c, err := NewClient(u.url, append([]Option{WithSharedGets(false)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// getAs makes tenant's GET of event id and checks that the answer is that
// event, for that tenant.
func getAs(t *testing.T, ctx context.Context, c *Client, tenant Credentials, id string) {
	t.Helper()
	ev, _, err := c.Events.GetEvent(WithCredentials(ctx, tenant), id)
	if err != nil {
		t.Errorf("%s's GET %s: %v", tenant.Authorization, id, err)
		return
	}
	want := strings.TrimPrefix(tenant.Authorization, "Bearer ") + "'s private event"
	if ev.ID != id || ev.Title == nil || *ev.Title != want {
		title := "<nil>"
		if ev.Title != nil {
			title = *ev.Title
		}
		t.Errorf("%s's GET %s received event %q titled %q: an answer to another request", tenant.Authorization, id, ev.ID, title)
	}
}

// TestGetUnsolicitedAnswerNotDelivered (tenants of breaker_tenants_test.go): an upstream sends, on an idle
// keep-alive connection, a second copy of the answer it gave tenant A. The
// client drops the connection, and tenant B's GET (and A's next one) get
// their own answers: never A's copy, never each other's.
func TestGetUnsolicitedAnswerNotDelivered(t *testing.T) {
	u := newWireUpstream(t)
	c := wireClient(t, u)
	getAs(t, ctxT(t), c, tenantA, "a1")
	wc := u.only()
	dup := answerBytes(`{"event":{"id":"a1","title":"tenant-a's private event"}}`)
	if _, err := wc.Write(dup); err != nil {
		t.Fatal(err)
	}
	waitClosedByClient(t, wc)
	getAs(t, ctxT(t), c, tenantB, "b1")
	getAs(t, ctxT(t), c, tenantA, "a2")
	getAs(t, ctxT(t), c, tenantB, "b2")
	if n := u.requests.Load(); n != 4 {
		t.Errorf("the upstream read %d requests, want 4", n)
	}
}

// TestGet408OnIdleConnection: a front end answers 408 Request Timeout on an
// idle keep-alive connection and closes it. The next GET is not sent on it:
// it goes out once, on a new connection, and succeeds without a retry or an
// error, and without counting as a failure (a breaker that opens at the
// first failure stays closed).
func TestGet408OnIdleConnection(t *testing.T) {
	u := newWireUpstream(t)
	c := wireClient(t, u, WithCircuitBreaker(BreakerSettings{ConsecutiveFailures: 1}))
	getAs(t, ctxT(t), c, tenantA, "a1")
	wc := u.only()
	wc.muted.Store(true)
	if _, err := wc.Write([]byte("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	// The front end sends nothing more; it closes its end fully once the
	// client has closed its own (which the test waits for, and which may
	// have happened already).
	if err := wc.Conn.(*net.TCPConn).CloseWrite(); err != nil && !errors.Is(err, net.ErrClosed) {
		t.Fatal(err)
	}
	waitClosedByClient(t, wc)

	obs := &observations{}
	ev, _, err := c.Events.GetEvent(WithCredentials(obs.ctx(t), tenantB), "b1")
	if err != nil {
		t.Fatalf("B's GET after a 408 on an idle connection: %v", err)
	}
	if ev.ID != "b1" {
		t.Errorf("B received event %q", ev.ID)
	}
	if ci := obs.last(t); ci.Retries != 0 || ci.Err != nil || ci.Status != http.StatusOK {
		t.Errorf("B's call observed as %+v, want one attempt answered 200", ci)
	}
	if s := c.ClientBreakerState(http.MethodGet, OpGetEvent.Route, tenantB); s != BreakerClosed {
		t.Errorf("B's breaker %v: the 408 counted as a failure", s)
	}
	if n := wc.late.Load(); n != 0 {
		t.Errorf("%d requests sent on the connection after its 408", n)
	}
	if n, k := u.requests.Load(), u.connCount(); n != 2 || k != 2 {
		t.Errorf("the upstream read %d requests on %d connections, want 2 on 2", n, k)
	}
}

// TestGetAnswerSplitAcrossReuse: part of an answer (a copy of tenant A's)
// arrives on an idle keep-alive connection; the rest would follow the next
// request sent on it. The client drops the connection at the first part:
// no caller reads the answer, whole or in part, and A and B alternating
// afterwards each get their own.
func TestGetAnswerSplitAcrossReuse(t *testing.T) {
	u := newWireUpstream(t)
	c := wireClient(t, u)
	getAs(t, ctxT(t), c, tenantA, "a1")
	wc := u.only()
	dup := answerBytes(`{"event":{"id":"b1","title":"tenant-a's private event"}}`)
	head, rest := dup[:30], dup[30:] // in the middle of the header
	wc.mu.Lock()
	wc.before = rest
	wc.mu.Unlock()
	if _, err := wc.Write(head); err != nil {
		t.Fatal(err)
	}
	waitClosedByClient(t, wc)
	for i := range 3 {
		getAs(t, ctxT(t), c, tenantB, "b"+strconv.Itoa(i+1))
		getAs(t, ctxT(t), c, tenantA, "a"+strconv.Itoa(i+2))
	}
	if n := u.requests.Load(); n != 7 {
		t.Errorf("the upstream read %d requests, want 7", n)
	}
}

// TestGetRequestAsNetHTTP: the upstream receives the same request from the
// client's own transport as from a plain *http.Client (WithHTTPClient):
// method, escaped path, query, headers (credentials, Accept, User-Agent,
// Host), gzip asked for, and no body.
func TestGetRequestAsNetHTTP(t *testing.T) {
	u := newUpstream(t)
	type seen struct {
		uri, host string
		header    http.Header
		body      string
		length    int64
	}
	var got []seen
	var mu sync.Mutex
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.RequestURI, r.Host, r.Header.Clone(), string(b), r.ContentLength})
		mu.Unlock()
		w.Write([]byte(`{"event":{"id":"a/b"}}`))
	})
	for _, c := range []*Client{u.client(WithUserAgent("facade-test/3")), u.client(WithUserAgent("facade-test/3"), WithHTTPClient(&http.Client{}))} {
		if ev, _, err := c.Events.GetEvent(ctxT(t), "a/b ?"); err != nil || ev.ID != "a/b" {
			t.Fatalf("%v %v", ev, err)
		}
	}
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	own, std := got[0], got[1]
	if want := basePath + "/events/v1/a%2Fb%20%3F"; own.uri != want || std.uri != want {
		t.Errorf("request URIs %q (own transport), %q (plain client), want %q", own.uri, std.uri, want)
	}
	if own.host != std.host || own.body != "" || own.length != 0 {
		t.Errorf("own transport: host %q (plain client %q), body %q, length %d", own.host, std.host, own.body, own.length)
	}
	for _, k := range []string{"Authorization", "Service-Network-Id", "Accept", "User-Agent"} {
		if own.header.Get(k) == "" || own.header.Get(k) != std.header.Get(k) {
			t.Errorf("%s: %q from the own transport, %q from a plain client", k, own.header.Get(k), std.header.Get(k))
		}
	}
	if g := own.header.Get("Accept-Encoding"); g != "gzip" {
		t.Errorf("Accept-Encoding %q", g)
	}
	for k := range own.header {
		if _, ok := std.header[k]; !ok {
			t.Errorf("the own transport sent %s: %q, a plain client does not", k, own.header[k])
		}
	}
}

// TestGetAnswerAsNetHTTP: the *http.Response a GET returns through the
// client's own transport has the status and canonical header a plain
// *http.Client's has, repeated headers included.
func TestGetAnswerAsNetHTTP(t *testing.T) {
	u := newUpstream(t)
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["ratelimit-remaining"] = []string{"7"} // sent as is, in lower case
		h.Add("X-Many", "one")
		h.Add("X-Many", "two")
		h.Set("Content-Type", "application/json")
		w.Write([]byte(`{"event":{"id":"e"}}`))
	})
	var answers []*http.Response
	for _, c := range []*Client{u.client(), u.client(WithHTTPClient(&http.Client{}))} {
		_, resp, err := c.Events.GetEvent(ctxT(t), "e")
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, resp.Response)
	}
	own, std := answers[0], answers[1]
	if own.StatusCode != 200 || own.Status != std.Status || own.ProtoMajor != 1 {
		t.Errorf("own transport: %d %q %s, plain client: %q", own.StatusCode, own.Status, own.Proto, std.Status)
	}
	for _, k := range []string{"Ratelimit-Remaining", "X-Many", "Content-Type", "Content-Length", "Date"} {
		if strings.Join(own.Header[k], ",") != strings.Join(std.Header[k], ",") || len(own.Header[k]) == 0 {
			t.Errorf("%s: %q from the own transport, %q from a plain client", k, own.Header[k], std.Header[k])
		}
	}
	if own.ContentLength != std.ContentLength {
		t.Errorf("ContentLength %d, plain client %d", own.ContentLength, std.ContentLength)
	}
}

// countConns counts the connections u's server accepts.
func countConns(u *upstream) *atomic.Int64 { return &u.conns }

// TestGetConnectionsReused: sequential GETs, with bodies of a fixed length
// and chunked, go over one connection.
func TestGetConnectionsReused(t *testing.T) {
	u := newUpstream(t)
	conns := countConns(u)
	big := `{"event":{"id":"e","title":"` + strings.Repeat("x", 20000) + `"}}`
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") == "chunked" {
			w.Write([]byte(big[:10000])) // over the server's buffer: chunked
			w.Write([]byte(big[10000:]))
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(big)))
		w.Write([]byte(big))
	})
	c := u.client()
	for i := range 6 {
		id := "sized"
		if i%2 == 1 {
			id = "chunked"
		}
		ev, resp, err := c.Events.GetEvent(ctxT(t), id)
		if err != nil || ev.ID != "e" || ev.Title == nil || len(*ev.Title) != 20000 {
			t.Fatalf("GET %d: %v", i, err)
		}
		if id == "chunked" && resp.ContentLength != -1 {
			t.Errorf("chunked answer with ContentLength %d", resp.ContentLength)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 6 sequential GETs, want 1", n)
	}
}

// TestGetStaleConnectionSentAgain: when the upstream has closed an idle
// connection, a GET on it is sent again on a new one, without counting as
// a retry.
func TestGetStaleConnectionSentAgain(t *testing.T) {
	u := newUpstream(t)
	var mu sync.Mutex
	var idle []net.Conn
	var conns atomic.Int64
	u.onConnState(func(c net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			conns.Add(1)
		case http.StateIdle:
			mu.Lock()
			idle = append(idle, c)
			mu.Unlock()
		}
	})
	var n atomic.Int64
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Write([]byte(`{"event":{"id":"e"}}`))
	})
	c := u.client(WithRetry(RetryPolicy{})) // no retries: a resend is not one
	if _, _, err := c.Events.GetEvent(ctxT(t), "e"); err != nil {
		t.Fatal(err)
	}
	// The server closes the idle connection without a word.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		k := len(idle)
		mu.Unlock()
		if k > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	for _, ic := range idle {
		ic.Close()
	}
	mu.Unlock()
	obs := &observations{}
	if _, _, err := c.Events.GetEvent(obs.ctx(t), "e"); err != nil {
		t.Fatalf("GET after the upstream closed the idle connection: %v", err)
	}
	if ci := obs.last(t); ci.Retries != 0 {
		t.Errorf("observed %+v", ci)
	}
	if n.Load() != 2 || conns.Load() != 2 {
		t.Errorf("%d requests over %d connections, want 2 over 2", n.Load(), conns.Load())
	}
}

// rawUpstream is a TCP server that answers each connection with serve.
func rawUpstream(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				serve(c)
			})
		}
	})
	return "http://" + ln.Addr().String()
}

// TestGetTimeout: a GET the upstream never answers ends at the
// attempt timeout as a timeout TransportError, sent once.
func TestGetTimeout(t *testing.T) {
	var n atomic.Int64
	release := make(chan struct{})
	base := rawUpstream(t, func(net.Conn) { n.Add(1); <-release })
	defer close(release)
	c, err := NewClient(base, WithTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	_, _, err = c.Events.GetEvent(ctxT(t), "e")
	var te *TransportError
	if !errors.As(err, &te) || !te.Timeout() || te.Answered {
		t.Fatalf("err %T %v, want a timeout TransportError without an answer", err, err)
	}
	if n.Load() != 1 {
		t.Errorf("%d attempts: timeouts are not retried", n.Load())
	}
}

// TestGetBodyCutShort: an answer whose body ends early is a TransportError
// that says the header arrived.
func TestGetBodyCutShort(t *testing.T) {
	base := rawUpstream(t, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"event\":")
	})
	c, err := NewClient(base, WithRetry(RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	_, _, err = c.Events.GetEvent(ctxT(t), "e")
	var te *TransportError
	if !errors.As(err, &te) || !te.Answered || te.Timeout() {
		t.Fatalf("err %T %v, want a TransportError after the header", err, err)
	}
}

// TestGetCancelClosesConnection: cancelling a GET in flight ends it at once
// with ctx.Err(); the upstream sees its connection closed, and the next GET
// gets a connection of its own.
func TestGetCancelClosesConnection(t *testing.T) {
	u := newUpstream(t)
	conns := countConns(u)
	entered, gone := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		if first.CompareAndSwap(false, true) {
			close(entered)
			<-r.Context().Done()
			close(gone)
			return
		}
		w.Write([]byte(`{"event":{"id":"e"}}`))
	})
	c := u.client(WithSharedGets(false)) // on the caller's goroutine
	ctx, cancel := context.WithCancel(ctxT(t))
	go func() { <-entered; cancel() }()
	if _, _, err := c.Events.GetEvent(ctx, "e"); err != context.Canceled {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream did not see the cancelled GET's connection close")
	}
	if _, _, err := c.Events.GetEvent(ctxT(t), "e"); err != nil {
		t.Fatal(err)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (the cancelled one is not reused)", n)
	}
}

// TestGetBodyToConnectionClose: an answer with neither a length nor chunks
// ends when the upstream closes; its connection is not reused, and the next
// GET opens another.
func TestGetBodyToConnectionClose(t *testing.T) {
	var n atomic.Int64
	base := rawUpstream(t, func(c net.Conn) {
		n.Add(1)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"event\":{\"id\":\"e\"}}")
	})
	c, err := NewClient(base, WithRetry(RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	for i := range 2 {
		if ev, _, err := c.Events.GetEvent(ctxT(t), "e"); err != nil || ev.ID != "e" {
			t.Fatalf("GET %d: %v", i, err)
		}
	}
	if n.Load() != 2 {
		t.Errorf("%d connections, want 2", n.Load())
	}
}

// TestGetAfterUpstreamDroppedIdleConnections: when the upstream has closed
// every pooled connection, the next GET still gets through (on a new
// connection), without a retry.
func TestGetAfterUpstreamDroppedIdleConnections(t *testing.T) {
	u := newUpstream(t)
	var mu sync.Mutex
	var open []net.Conn
	u.onConnState(func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
		}
	})
	conns := func() int { mu.Lock(); defer mu.Unlock(); return len(open) }
	release := make(chan struct{})
	var n atomic.Int64
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 6 {
			<-release
		}
		w.Write([]byte(`{"event":{"id":"e"}}`))
	})
	c := u.client(WithRetry(RetryPolicy{}), WithSharedGets(false))
	var wg sync.WaitGroup
	for i := range 6 { // six connections in the pool
		wg.Go(func() {
			if _, _, err := c.Events.GetEvent(ctxT(t), "e"+strconv.Itoa(i)); err != nil {
				t.Error(err)
			}
		})
	}
	for n.Load() < 6 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if k := conns(); k != 6 {
		t.Fatalf("%d connections, want 6", k)
	}
	mu.Lock()
	for _, ic := range open {
		ic.Close()
	}
	mu.Unlock()
	if _, _, err := c.Events.GetEvent(ctxT(t), "e"); err != nil {
		t.Fatalf("GET after the upstream dropped its idle connections: %v", err)
	}
	if k := conns(); k != 7 {
		t.Errorf("%d connections, want 7 (the GET on a new one)", k)
	}
}

// TestGetAnswerHeaderAsSent: the header callers see is what the upstream
// sent: no Content-Type it did not send, no Transfer-Encoding (the body is
// decoded), as net/http's.
func TestGetAnswerHeaderAsSent(t *testing.T) {
	base := rawUpstream(t, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n14\r\n{\"event\":{\"id\":\"e\"}}\r\n0\r\n\r\n")
	})
	c, err := NewClient(base)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	ev, resp, err := c.Events.GetEvent(ctxT(t), "e")
	if err != nil || ev.ID != "e" {
		t.Fatalf("%v %v", ev, err)
	}
	for _, k := range []string{"Content-Type", "Transfer-Encoding"} {
		if v, ok := resp.Header[k]; ok {
			t.Errorf("%s: %q, which the upstream did not send or net/http would not show", k, v)
		}
	}
}

// TestGetAnswerHeaderBounded: an answer whose header is longer than
// maxResponseHeader is a TransportError without an answer, whatever
// follows; one just under it is read.
func TestGetAnswerHeaderBounded(t *testing.T) {
	for _, tc := range []struct {
		pad int
		ok  bool
	}{{maxResponseHeader - 1024, true}, {maxResponseHeader + 1, false}} {
		base := rawUpstream(t, func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Pad: "+strings.Repeat("p", tc.pad)+"\r\nContent-Length: 20\r\n\r\n{\"event\":{\"id\":\"e\"}}")
		})
		c, err := NewClient(base, WithRetry(RetryPolicy{}))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = c.Events.GetEvent(ctxT(t), "e")
		c.CloseIdleConnections()
		var te *TransportError
		switch {
		case tc.ok && err != nil:
			t.Errorf("a %d-byte header: %v", tc.pad, err)
		case !tc.ok && (!errors.As(err, &te) || te.Answered):
			t.Errorf("a %d-byte header: err %T %v, want a TransportError without an answer", tc.pad, err, err)
		}
	}
}
