package restclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

// GETs over the client's own connections
//
// A client with its own HTTP client (no WithHTTPClient, no proxy for the
// base URL) sends its GETs through getPool: HTTP/1.1 connections to the one
// upstream host, pooled by github.com/valyala/fasthttp's HostClient, with
// each exchange written and read on the calling goroutine. net/http's
// Transport hands every request to two goroutines of its connection (a
// writer and a reader) and parses the answer's header into a map; this is
// half its CPU per GET (BenchmarkLocalService). Writes keep net/http: its
// transport knows a request was written in full (TransportError.Sent) and
// notices an idle connection the upstream closed before writing on it,
// which a non-idempotent request needs; a GET that meets such a connection
// is simply sent again on another one.
//
// What callers see is unchanged: an *http.Response with the status and
// canonical header (its body consumed), the 2xx body in a slice of its own,
// gzip'ed bodies decompressed, *TransportError and ctx.Err() as before.
// Cancelling ctx ends an exchange at once (its connection's deadline is set
// in the past, and the connection closed).

// getPool is a Client's pool of upstream connections for GETs.
type getPool struct {
	hc     *fasthttp.HostClient
	dialer net.Dialer
	tls    *tls.Config // nil for http
}

// maxStaleTries bounds the sends of one GET that met a pooled connection the
// upstream had closed while idle (nothing read back). The pool's other idle
// connections are then closed too (the upstream most likely dropped them
// all, as net/http's transport would have noticed), so the next try dials.
const maxStaleTries = 3

// newGetPool returns the pool for u, the client's base URL, or nil when its
// GETs must go through net/http (a proxy is configured for it).
func newGetPool(u *url.URL, maxConns int, timeout time.Duration) *getPool {
	if p, err := http.ProxyFromEnvironment(&http.Request{URL: u}); err != nil || p != nil {
		return nil
	}
	addr := u.Host
	if u.Port() == "" {
		if u.Scheme == "https" {
			addr = net.JoinHostPort(u.Hostname(), "443")
		} else {
			addr = net.JoinHostPort(u.Hostname(), "80")
		}
	}
	p := &getPool{dialer: net.Dialer{Timeout: min(timeout, 5*time.Second), KeepAlive: 30 * time.Second}}
	if u.Scheme == "https" {
		p.tls = &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	}
	// Only the pool's fields matter: the exchange (roundTrip below) is
	// ours, so HostClient.Do's settings (user agent, path normalising, body
	// size) would be set for nothing.
	p.hc = &fasthttp.HostClient{
		Addr:                addr,
		DialTimeout:         p.dial,
		MaxConns:            maxConns,
		MaxConnWaitTimeout:  timeout,
		MaxIdleConnDuration: 30 * time.Second,
		ReadBufferSize:      16 << 10, // the longest response header accepted
	}
	return p
}

// upConn is a pooled connection: it counts what an exchange reads (none
// means the upstream answered nothing) and whether it carried one before.
type upConn struct {
	net.Conn
	used  bool
	nread int
}

func (c *upConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.nread += n
	return n, err
}

// dial opens a connection to addr, with TLS (HTTP/1.1 only) for https,
// within d (what is left of the GET's deadline) and the dialer's timeout.
func (p *getPool) dial(addr string, d time.Duration) (net.Conn, error) {
	if d <= 0 || d > p.dialer.Timeout {
		d = p.dialer.Timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	c, err := p.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if p.tls != nil {
		tc := tls.Client(c, p.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	return &upConn{Conn: c}, nil
}

// aLongTimeAgo is a deadline that has passed: setting it ends a blocked
// read or write at once.
var aLongTimeAgo = time.Unix(1, 0)

// roundTrip sends req and reads its answer into resp before deadline or
// until ctx ends. answered reports that the answer's header arrived (a
// failure after it cut the body short). A body of a known length is read
// into a slice of that size, the caller's to keep: *spare is then resp's own
// body buffer, to swap back (see bodyOf).
func (p *getPool) roundTrip(ctx context.Context, req *fasthttp.Request, resp *fasthttp.Response, deadline time.Time, spare *[]byte) (answered bool, err error) {
	for try := 1; ; try++ {
		cc, err := p.hc.AcquireConn(time.Until(deadline), false)
		if err != nil {
			return false, err
		}
		conn := cc.Conn().(*upConn)
		reused := conn.used
		conn.used, conn.nread = true, 0
		answered, err := p.exchange(ctx, conn, req, resp, deadline, spare)
		// ConnectionClose: asked for, or an answer that ends with the
		// connection (no length, not chunked; HTTP/1.0).
		keep := err == nil && !resp.ConnectionClose()
		if keep && ctx.Done() != nil && ctx.Err() != nil {
			keep = false // the deadline may be the cancellation's
		}
		if keep {
			p.hc.ReleaseConn(cc)
		} else {
			p.hc.CloseConn(cc)
		}
		if err == nil || !reused || conn.nread > 0 || try == maxStaleTries || ctx.Err() != nil || isTimeout(err) {
			return answered, err
		}
		// An idle connection the upstream had closed: nothing came back,
		// and a GET may be sent again, on a new connection.
		p.hc.CloseIdleConnections()
	}
}

// exchange writes req on conn and reads the answer into resp.
func (p *getPool) exchange(ctx context.Context, conn *upConn, req *fasthttp.Request, resp *fasthttp.Response, deadline time.Time, spare *[]byte) (answered bool, err error) {
	if err := conn.SetDeadline(deadline); err != nil {
		return false, err
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(aLongTimeAgo) })
		defer stop()
	}
	bw := p.hc.AcquireWriter(conn)
	err = req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	p.hc.ReleaseWriter(bw)
	if err != nil {
		return false, err
	}
	br := p.hc.AcquireReader(conn)
	defer p.hc.ReleaseReader(br)
	resp.Reset()
	resp.Header.SetNoDefaultContentType(true) // the header as the upstream sent it
	if err := resp.Header.Read(br); err != nil {
		return false, err
	}
	for n := 0; resp.Header.StatusCode() < 200; n++ { // interim answers (1xx)
		if n == 8 {
			return false, errors.New("too many interim responses")
		}
		if err := resp.Header.Read(br); err != nil {
			return false, err
		}
	}
	if sc := resp.StatusCode(); sc == http.StatusNoContent || sc == http.StatusNotModified {
		return true, nil
	}
	if n := resp.Header.ContentLength(); n >= 0 && n <= maxResponseBody {
		*spare = resp.SwapBody(make([]byte, 0, n))
	}
	if err := resp.ReadBody(br, maxResponseBody); err != nil {
		return true, err
	}
	if resp.Header.ContentLength() == -1 { // chunked: the trailer ends it
		if err := resp.Header.ReadTrailer(br); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return true, err
		}
	}
	return true, nil
}

// isTimeout reports whether err is a deadline's (net's or fasthttp's).
func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// get is attempt for a GET through the client's pool: the same answer,
// body and errors.
func (c *Client) get(ctx context.Context, rc call, target string, creds who) (*http.Response, []byte, error) {
	deadline := time.Now().Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(http.MethodGet)
	req.SetRequestURI(target)
	req.URI().DisablePathNormalizing = true
	h := &req.Header
	h.Set("Accept", c.headerVals[0])
	h.SetUserAgent(c.userAgent)
	if creds.Authorization != "" {
		h.Set("Authorization", creds.Authorization)
	}
	if creds.NetworkID != "" {
		h.Set("Service-Network-Id", creds.NetworkID)
	}
	h.Set("Accept-Encoding", acceptEncoding)
	if trace.SpanContextFromContext(ctx).IsValid() {
		otel.GetTextMapPropagator().Inject(ctx, requestCarrier{h})
	}

	var spare []byte
	answered, err := c.gets.roundTrip(ctx, req, resp, deadline, &spare)
	if err != nil && !errors.Is(err, fasthttp.ErrBodyTooLarge) {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if isTimeout(err) { // as net/http's: a net.Error
			err = os.ErrDeadlineExceeded
		}
		te := newTransportError(rc.method, rc.route, err)
		te.Sent, te.Answered = answered, answered
		return nil, nil, te
	}
	hr := answerOf(resp)
	if err != nil {
		return hr, nil, &DecodeError{Method: rc.method, Route: rc.route, Err: errBodyTooLarge}
	}
	body := bodyOf(resp, spare)
	gzipped := len(body) > 0 && hasGzip(hr.Header)
	if gzipped {
		hr.Body = io.NopCloser(bytes.NewReader(body))
		ungzip(hr, rc.method)
		defer func() { hr.Body.Close(); hr.Body = http.NoBody }()
	}
	if hr.StatusCode < 200 || hr.StatusCode > 299 {
		if !gzipped {
			hr.Body = io.NopCloser(bytes.NewReader(body))
			defer func() { hr.Body = http.NoBody }()
		}
		err := checkResponse(rc.method, rc.route, c.pathOf(target), hr)
		if e, ok := asErrorResponse(err); ok {
			e.redact(creds.secrets())
		}
		return hr, nil, err
	}
	if !gzipped {
		return hr, body, nil
	}
	data, err := readBody(hr.Body, -1, c.bodySizes.hint(rc.route))
	switch {
	case err != nil:
		te := newTransportError(rc.method, rc.route, err)
		te.Sent, te.Answered = true, true
		return nil, nil, te
	case len(data) > maxResponseBody:
		return hr, nil, &DecodeError{Method: rc.method, Route: rc.route, Err: errBodyTooLarge}
	}
	return hr, data, nil
}

// bodyOf returns resp's body in a slice of its own: the one exchange read
// a body of known length into (resp gets spare, its buffer, back), or else a
// copy of the chunked body read into resp's pooled buffer.
func bodyOf(resp *fasthttp.Response, spare []byte) []byte {
	if resp.Header.ContentLength() >= 0 {
		return resp.SwapBody(spare)
	}
	return bytes.Clone(resp.Body())
}

// hasGzip reports whether h says the body is gzip'ed.
func hasGzip(h http.Header) bool {
	v := h["Content-Encoding"]
	return len(v) == 1 && strings.EqualFold(v[0], "gzip")
}

// answerOf returns resp's status and header as an *http.Response whose body
// is consumed: the header's keys canonical, its values in one slice.
func answerOf(resp *fasthttp.Response) *http.Response {
	rh := &resp.Header
	n := 0
	for range rh.All() {
		n++
	}
	h := make(http.Header, n)
	vals := make([]string, n)
	i := 0
	for k, v := range rh.All() {
		key := headerKey(k)
		if key == "Transfer-Encoding" { // as net/http: the body is decoded
			continue
		}
		if old, ok := h[key]; ok {
			h[key] = append(old, string(v))
			continue
		}
		vals[i] = string(v)
		h[key] = vals[i : i+1 : i+1]
		i++
	}
	sc := rh.StatusCode()
	cl := int64(rh.ContentLength())
	if cl < 0 {
		cl = -1
	}
	return &http.Response{
		Status: statusLine(sc), StatusCode: sc,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, ContentLength: cl, Body: http.NoBody,
	}
}

// headerKey returns k in canonical form, without allocating for the header
// names the API sends (fasthttp has already normalised their case).
func headerKey(k []byte) string {
	switch string(k) {
	case "Content-Type":
		return "Content-Type"
	case "Content-Length":
		return "Content-Length"
	case "Content-Encoding":
		return "Content-Encoding"
	case "Date":
		return "Date"
	case "Retry-After":
		return "Retry-After"
	case "X-Request-Id":
		return "X-Request-Id"
	case "Ratelimit-Limit":
		return "Ratelimit-Limit"
	case "Ratelimit-Remaining":
		return "Ratelimit-Remaining"
	case "Ratelimit-Reset":
		return "Ratelimit-Reset"
	case "Vary":
		return "Vary"
	}
	return http.CanonicalHeaderKey(string(k))
}

// statusLines are the Status of the answers with a registered code.
var statusLines = func() map[int]string {
	m := make(map[int]string)
	for code := 100; code < 600; code++ {
		if t := http.StatusText(code); t != "" {
			m[code] = strconv.Itoa(code) + " " + t
		}
	}
	return m
}()

func statusLine(code int) string {
	if s, ok := statusLines[code]; ok {
		return s
	}
	return strconv.Itoa(code) + " status code " + strconv.Itoa(code)
}

// requestCarrier lets the trace propagator write a request's header.
type requestCarrier struct{ h *fasthttp.RequestHeader }

func (c requestCarrier) Get(key string) string { return string(c.h.Peek(key)) }
func (c requestCarrier) Set(key, value string) { c.h.Set(key, value) }
func (c requestCarrier) Keys() []string {
	var keys []string
	for k := range c.h.All() {
		keys = append(keys, string(k))
	}
	return keys
}
