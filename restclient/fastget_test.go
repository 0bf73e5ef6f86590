package restclient

import (
	"bufio"
	"context"
	"errors"
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

// The tests below are about fastget.go, the pool a client with its own HTTP
// client sends its GETs through; every other test of the package goes
// through it as well for its GETs (and through net/http for writes and with
// WithHTTPClient).

// TestGetPoolIsUsed: a client with its own HTTP client has the pool; one
// given an *http.Client has not.
func TestGetPoolIsUsed(t *testing.T) {
	u := newUpstream(t)
	if u.client().gets == nil {
		t.Error("a client with its own HTTP client sends its GETs through net/http")
	}
	if u.client(WithHTTPClient(&http.Client{})).gets != nil {
		t.Error("a client given an *http.Client does not send its GETs through it")
	}
}

// TestGetRequestAsNetHTTP: the upstream receives the same request from the
// pool as from net/http's transport: method, escaped path, query, headers
// (credentials, Accept, User-Agent, gzip asked for, Host), and no body.
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
	u.handle("GET /events/v1/{id}", func(w http.ResponseWriter, r *http.Request) {
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
	pool, std := got[0], got[1]
	if want := basePath + "/events/v1/a%2Fb%20%3F"; pool.uri != want || std.uri != want {
		t.Errorf("request URIs %q (pool), %q (net/http), want %q", pool.uri, std.uri, want)
	}
	if pool.host != std.host || pool.body != "" || pool.length != 0 {
		t.Errorf("pool: host %q (net/http %q), body %q, length %d", pool.host, std.host, pool.body, pool.length)
	}
	for _, k := range []string{"Authorization", "Service-Network-Id", "Accept", "User-Agent"} {
		if pool.header.Get(k) == "" || pool.header.Get(k) != std.header.Get(k) {
			t.Errorf("%s: %q from the pool, %q from net/http", k, pool.header.Get(k), std.header.Get(k))
		}
	}
	if g := pool.header.Get("Accept-Encoding"); g != "gzip" {
		t.Errorf("Accept-Encoding %q", g)
	}
	for k := range pool.header {
		if _, ok := std.header[k]; !ok {
			t.Errorf("the pool sent %s: %q, net/http does not", k, pool.header[k])
		}
	}
}

// TestGetAnswerAsNetHTTP: the *http.Response a GET returns has the status
// and canonical header net/http's would have, repeated headers included.
func TestGetAnswerAsNetHTTP(t *testing.T) {
	u := newUpstream(t)
	u.handle("GET /events/v1/{id}", func(w http.ResponseWriter, r *http.Request) {
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
	pool, std := answers[0], answers[1]
	if pool.StatusCode != 200 || pool.Status != std.Status || pool.ProtoMajor != 1 {
		t.Errorf("pool: %d %q %s, net/http: %q", pool.StatusCode, pool.Status, pool.Proto, std.Status)
	}
	for _, k := range []string{"Ratelimit-Remaining", "X-Many", "Content-Type", "Content-Length", "Date"} {
		if strings.Join(pool.Header[k], ",") != strings.Join(std.Header[k], ",") || len(pool.Header[k]) == 0 {
			t.Errorf("%s: %q from the pool, %q from net/http", k, pool.Header[k], std.Header[k])
		}
	}
	if pool.ContentLength != std.ContentLength {
		t.Errorf("ContentLength %d, net/http %d", pool.ContentLength, std.ContentLength)
	}
}

// countConns counts the connections u's server accepts.
func countConns(u *upstream) *atomic.Int64 {
	var n atomic.Int64
	u.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	return &n
}

// TestGetConnectionsReused: sequential GETs, with bodies of a fixed length
// and chunked, go over one connection.
func TestGetConnectionsReused(t *testing.T) {
	u := newUpstream(t)
	conns := countConns(u)
	big := `{"event":{"id":"e","title":"` + strings.Repeat("x", 20000) + `"}}`
	u.handle("GET /events/v1/{id}", func(w http.ResponseWriter, r *http.Request) {
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
	u.srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			conns.Add(1)
		case http.StateIdle:
			mu.Lock()
			idle = append(idle, c)
			mu.Unlock()
		}
	}
	var n atomic.Int64
	u.handle("GET /events/v1/{id}", func(w http.ResponseWriter, r *http.Request) {
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

// TestGetTimeoutOnPool: a GET the upstream never answers ends at the
// attempt timeout as a timeout TransportError, sent once.
func TestGetTimeoutOnPool(t *testing.T) {
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
	u.handle("GET /events/v1/{id}", func(w http.ResponseWriter, r *http.Request) {
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
// ends when the upstream closes; its connection is not pooled, and the next
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
		if k := c.gets.hc.ConnsCount(); k != 0 {
			t.Errorf("after GET %d: %d connections pooled, want 0", i, k)
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
	u.srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
		}
	}
	release := make(chan struct{})
	var n atomic.Int64
	u.handle("GET /events/v1/{id}", func(w http.ResponseWriter, r *http.Request) {
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
	if k := c.gets.hc.ConnsCount(); k != 6 {
		t.Fatalf("%d pooled connections, want 6", k)
	}
	mu.Lock()
	for _, ic := range open {
		ic.Close()
	}
	mu.Unlock()
	if _, _, err := c.Events.GetEvent(ctxT(t), "e"); err != nil {
		t.Fatalf("GET after the upstream dropped its idle connections: %v", err)
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
