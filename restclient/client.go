// Package restclient is a typed client for every operation of the Workspace
// Network Service REST API (../shared/spec/workspace-network-api.md).
//
// A Client holds one service per area of the API (Billing, Transactions,
// Resources, Visitors, Feed, Shop, Discounts, Events); every method has the
// shape
//
//	func (s *ShopService) GetProduct(ctx context.Context, id string) (*Product, *Response, error)
//
// Credentials are fixed per client (WithBasicAuth, WithBearerToken) or travel
// per call in the context (WithCredentials), which wins. Every non-2xx answer
// becomes an *ErrorResponse; a failure to get an answer is a *TransportError;
// a cancelled context returns ctx.Err(). GETs are retried on 429, 502, 503,
// 504 and connection errors; POST and PUT never are.
//
// Each route has a circuit breaker (breaker.go): while a route keeps failing
// with 5xx answers or transport errors, its calls fail fast with a
// *CircuitOpenError. Identical concurrent GETs with the same credentials
// share one upstream call (shared.go). Every call passes through the call
// hooks its context carries (hooks.go), where a caller caps and records the
// calls made on its behalf.
package restclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/workspacenet/facade/internal/base/clock"
	"github.com/workspacenet/facade/internal/base/workers"
)

// Defaults of a new Client.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultMaxInFlight = 64
	// DefaultMaxInFlightPerClient bounds one upstream identity's share of
	// the in-flight requests, so that no tenant can hold them all: half of
	// them, as many as one facade request may have in flight
	// (loaders.DefaultMaxConcurrency), so that one request's calls go out
	// in one wave.
	DefaultMaxInFlightPerClient = 32
	DefaultUserAgent            = "workspacenet-facade-restclient/1"
	// DefaultMaxRetryAfter caps the Retry-After a client acts on and
	// reports (WithMaxRetryAfter).
	DefaultMaxRetryAfter = time.Minute
)

// maxResponseBody caps a successful response body.
const maxResponseBody = 32 << 20

// errBodyTooLarge is the DecodeError's cause for a body over maxResponseBody.
var errBodyTooLarge = errors.New("body exceeds " + strconv.Itoa(maxResponseBody) + " bytes")

// RetryPolicy says how GETs are retried. Zero delays take the defaults
// (BaseDelay 100ms, MaxDelay 2s); MaxRetries 0 disables retries.
type RetryPolicy struct {
	MaxRetries int           // retries after the first attempt; default 2
	BaseDelay  time.Duration // backoff before the first retry (before jitter)
	MaxDelay   time.Duration // cap of one backoff; a Retry-After above 4*MaxDelay is not waited for
}

// DefaultRetryPolicy is the policy of a new Client.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxRetries: 2, BaseDelay: 100 * time.Millisecond, MaxDelay: 2 * time.Second}
}

// Response is the HTTP answer of a call plus the paging it carried.
type Response struct {
	*http.Response         // body already consumed and closed
	NextPageToken   string // "" on the last page
	SearchQueryNext string // credit notes and redemptions only
}

// Client talks to one Workspace Network Service. It is safe for concurrent use.
type Client struct {
	base string // base URL without trailing slash, e.g. http://h:1/api
	hc   *http.Client
	// rt is hc's transport when hc is the client's own (newHTTPClient):
	// every attempt, GET or write, calls it directly (see roundTrip),
	// asking for gzip itself (gzip.go). Nil with WithHTTPClient.
	rt          http.RoundTripper
	fixed       *who
	timeout     time.Duration
	retry       RetryPolicy
	maxInFlight int
	perClient   int
	slots       *slots
	gate        *authGate // authgate.go; nil: off
	userAgent   string
	// headerVals back the values of the request headers that are the same
	// for every request: "application/json", the User-Agent, "gzip".
	headerVals []string

	cache ResponseCache

	// retryAfterCap caps an answer's Retry-After (WithMaxRetryAfter).
	retryAfterCap time.Duration

	breakerSettings BreakerSettings
	onBreakerChange BreakerStateFunc
	breakers        breakers
	shareGets       bool
	flights         flights
	bodySizes       bodySizes

	// wait sleeps d or until ctx ends (ctx.Err()); replaced in tests.
	wait func(ctx context.Context, d time.Duration) error
	// jitter returns a random duration in [0, d]; replaced in tests.
	jitter func(d time.Duration) time.Duration

	common service

	Billing      *BillingService
	Transactions *TransactionsService
	Resources    *ResourcesService
	Visitors     *VisitorsService
	Feed         *FeedService
	Shop         *ShopService
	Discounts    *DiscountsService
	Events       *EventsService
}

type service struct{ client *Client }

// Option configures a Client.
type Option func(*Client) error

// WithHTTPClient makes the client send through hc instead of its own tuned
// *http.Client. The per-attempt timeout still applies.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("restclient: WithHTTPClient: nil *http.Client")
		}
		c.hc = hc
		return nil
	}
}

// WithTimeout sets the timeout of one attempt (default 10s). It is always
// bounded by the caller's deadline.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) error {
		if d <= 0 {
			return errors.New("restclient: WithTimeout: timeout must be positive")
		}
		c.timeout = d
		return nil
	}
}

// WithRetry sets the retry policy of GETs.
func WithRetry(p RetryPolicy) Option {
	return func(c *Client) error {
		if p.MaxRetries < 0 || p.BaseDelay < 0 || p.MaxDelay < 0 {
			return errors.New("restclient: WithRetry: negative value")
		}
		d := DefaultRetryPolicy()
		if p.BaseDelay == 0 {
			p.BaseDelay = d.BaseDelay
		}
		if p.MaxDelay == 0 {
			p.MaxDelay = max(d.MaxDelay, p.BaseDelay)
		}
		if p.MaxDelay < p.BaseDelay {
			return errors.New("restclient: WithRetry: MaxDelay below BaseDelay")
		}
		c.retry = p
		return nil
	}
}

// WithMaxRetryAfter caps the Retry-After of an answer (default 1 minute):
// an upstream asking for a longer wait is waited for, and reported in
// ErrorResponse.RetryAfter, as asking for d.
func WithMaxRetryAfter(d time.Duration) Option {
	return func(c *Client) error {
		if d <= 0 {
			return errors.New("restclient: WithMaxRetryAfter: cap must be positive")
		}
		c.retryAfterCap = d
		return nil
	}
}

// WithMaxInFlight limits the requests in flight at once (default 64); further
// calls wait for a slot, or for their context to end. Waiting upstream
// identities are served round-robin (slots.go).
func WithMaxInFlight(n int) Option {
	return func(c *Client) error {
		if n < 1 {
			return errors.New("restclient: WithMaxInFlight: limit must be at least 1")
		}
		c.maxInFlight = n
		return nil
	}
}

// WithMaxInFlightPerClient limits the requests in flight for one upstream
// identity (Credentials.Identity; default 32, at most WithMaxInFlight), so
// one tenant's flood of slow calls leaves slots to the others.
func WithMaxInFlightPerClient(n int) Option {
	return func(c *Client) error {
		if n < 1 {
			return errors.New("restclient: WithMaxInFlightPerClient: limit must be at least 1")
		}
		c.perClient = n
		return nil
	}
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option {
	return func(c *Client) error {
		if ua == "" || !validHeaderValue(ua) {
			return errors.New("restclient: WithUserAgent: invalid user agent")
		}
		c.userAgent = ua
		return nil
	}
}

// NewClient returns a client of the service at baseURL, an http or https URL
// that may end in a path prefix (http://host:8080/api). Credentials must not
// be embedded in the URL.
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, errors.New("restclient: invalid base URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("restclient: base URL must be http or https")
	case u.Host == "":
		return nil, errors.New("restclient: base URL has no host")
	case u.User != nil:
		return nil, errors.New("restclient: base URL must not carry credentials; use WithBasicAuth or WithBearerToken")
	case u.RawQuery != "" || u.Fragment != "":
		return nil, errors.New("restclient: base URL must not have a query or fragment")
	}
	c := &Client{
		base:        strings.TrimRight(u.String(), "/"),
		timeout:     DefaultTimeout,
		retry:       DefaultRetryPolicy(),
		maxInFlight: DefaultMaxInFlight,
		perClient:   DefaultMaxInFlightPerClient,
		userAgent:   DefaultUserAgent,
		wait:        clock.Sleep,
		jitter:      fullJitter,

		breakerSettings: DefaultBreakerSettings(),
		retryAfterCap:   DefaultMaxRetryAfter,
		shareGets:       true,
		gate:            newAuthGate(DefaultAuthGate()),
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if c.hc == nil {
		c.hc = newHTTPClient(c.maxInFlight, c.timeout)
		c.rt = c.hc.Transport
	}
	c.headerVals = []string{"application/json", c.userAgent, acceptEncoding}
	c.flights.pool = workers.New(flightIdle)
	c.slots = newSlots(c.maxInFlight, min(c.perClient, c.maxInFlight))
	c.breakers.settings, c.breakers.onChange = c.breakerSettings, c.onBreakerChange
	c.common.client = c
	c.Billing = (*BillingService)(&c.common)
	c.Transactions = (*TransactionsService)(&c.common)
	c.Resources = (*ResourcesService)(&c.common)
	c.Visitors = (*VisitorsService)(&c.common)
	c.Feed = (*FeedService)(&c.common)
	c.Shop = (*ShopService)(&c.common)
	c.Discounts = (*DiscountsService)(&c.common)
	c.Events = (*EventsService)(&c.common)
	return c, nil
}

// The client's own transport
//
// Every call a client makes with its own HTTP client (no WithHTTPClient),
// GET or write, goes through one net/http *http.Transport, tuned for fan-out
// to one host. Its HTTP/1.1 connections have a reader of their own between
// exchanges: bytes that arrive on an idle connection (an unsolicited or late
// answer, a front end's 408 before it closes) make the transport drop the
// connection, so no request ever reads an answer that was not its own. A
// GET that meets an idle connection the upstream closed is sent again on
// another by the transport, and is not a retry.

// maxResponseHeader bounds the status line and header of an answer.
const maxResponseHeader = 16 << 10

// idleConnTimeout is how long an idle connection is kept: below the idle
// timeouts of common front ends (60 s and more), so that the client, not
// the upstream, usually ends an idle connection.
const idleConnTimeout = 30 * time.Second

// newHTTPClient returns an *http.Client for one upstream host: as many idle
// and open connections as requests may be in flight (maxInFlight), idle
// connections kept idleConnTimeout, a dial within min(timeout, 5 s), a TLS
// handshake within 5 s, an answer's header at most maxResponseHeader long,
// HTTP/2 when TLS offers it. Each attempt's context bounds the whole
// exchange, header and body, to timeout (attempt), so the transport keeps
// no timer of its own per request (ResponseHeaderTimeout). Redirects are
// not followed (the API has none; following one could carry credentials
// elsewhere).
func newHTTPClient(maxInFlight int, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: min(timeout, 5*time.Second), KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            dialer.DialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           maxInFlight,
		MaxIdleConnsPerHost:    maxInFlight,
		MaxConnsPerHost:        maxInFlight,
		IdleConnTimeout:        idleConnTimeout,
		TLSHandshakeTimeout:    5 * time.Second,
		MaxResponseHeaderBytes: maxResponseHeader,
		ExpectContinueTimeout:  time.Second,
	}
	return &http.Client{
		Transport: tr,
		// A backstop only: each attempt already has a context deadline.
		Timeout: timeout + time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

func fullJitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return rand.N(d + 1)
}

// call is one logical operation.
type call struct {
	method string
	route  string     // path template, with at most one {placeholder}
	id     string     // the escaped segment in route's placeholder ("": none)
	query  url.Values // may be nil
	body   any        // request body, JSON-encoded; nil for none
	// A 2xx body is decoded by parse, into a fresh value that do returns
	// (a shared GET whose callers read results only, WithReadOnlyResults,
	// parses once for all of them); without it the body is ignored.
	parse parseFunc
	// asked: the context's ReadLog and the response cache were asked
	// already (doLogged); do asks neither.
	asked bool
}

// target returns rc's URL: the base URL, rc.route with rc.id in its
// placeholder, and the query, made in one piece.
func (c *Client) target(rc *call) string {
	pre, post := rc.route, ""
	if rc.id != "" {
		i := strings.IndexByte(rc.route, '{')
		j := i + strings.IndexByte(rc.route[i:], '}') + 1
		pre, post = rc.route[:i], rc.route[j:]
	}
	if q := rc.query.Encode(); q != "" {
		return c.base + pre + rc.id + post + "?" + q
	}
	return c.base + pre + rc.id + post
}

// decodes reports whether rc decodes its answer.
func (rc *call) decodes() bool { return rc.parse != nil }

// decodeBody decodes data, a 2xx body, with rc.parse.
func (rc *call) decodeBody(data []byte) (any, pageInfo, error) { return rc.parse(data) }

type pageInfo struct {
	next, searchQueryNext string
}

// credentials returns the credentials of s, a call's scope, else the fixed
// ones.
func (c *Client) credentials(s *scope) who {
	if s.hasWho {
		return s.who
	}
	if c.fixed != nil {
		return *c.fixed
	}
	return anonymous
}

// do runs rc through the call hooks of ctx, then (through its route's
// breaker, with retries, shared when it is a GET and sharing is on) makes it
// and decodes the answer: v is what rc.parse made. A cancelled or expired ctx
// returns ctx.Err() with a nil Response.
func (c *Client) do(ctx context.Context, rc call) (resp *Response, v any, err error) {
	if ctx == nil {
		return nil, nil, errors.New("restclient: nil context")
	}
	start := time.Now()
	sc := scopeOf(ctx)
	creds := c.credentials(sc)
	cacheable := rc.method == http.MethodGet && c.cache != nil && rc.decodes()
	// target is the URL; uri, its part below the base URL, shares its bytes.
	target := c.target(&rc)
	uri := target[len(c.base):]
	if sc.reads != nil && !rc.asked && rc.method == http.MethodGet && rc.decodes() {
		return c.doLogged(ctx, sc, rc, creds, uri, start)
	}
	if cacheable && !sc.noCacheReads && !rc.asked {
		if resp, v, ok := c.cached(ctx, sc.hooks, &rc, &creds, uri, start); ok {
			return resp, v, nil
		}
	}
	var (
		f      fetched
		shared bool
		fl     *flight
	)
	chain, err := before(ctx, sc.hooks, CallStart{Method: rc.method, Route: rc.route, Priority: priorityOf(ctx)})
	if len(chain) > 0 {
		defer func() { ended(ctx, chain, &rc, start, resp, &f, shared, err) }()
	}
	if err != nil {
		return nil, nil, err
	}
	payload, err := sendable(ctx, &rc, &creds)
	if err != nil {
		return nil, nil, err
	}
	f, shared, fl, err = c.exchange(ctx, &rc, target, payload, creds, sc.background)
	if f.hr != nil {
		resp = &Response{Response: f.hr}
	}
	if err != nil || !rc.decodes() {
		return resp, nil, err
	}
	if v, err = decodeAnswer(resp, &rc, fl, f.data, sc.readOnly, &creds); err != nil {
		return resp, nil, err
	}
	if cacheable && !shared {
		c.cache.Put(ctx, creds.Credentials, rc.route, uri, f.data)
	}
	if sc.reads != nil && rc.method == http.MethodGet {
		sc.reads.Read(rc.route, unescaped(rc.id), rc.query, uri, bytes.Clone(f.data))
	}
	if rc.method != http.MethodGet && c.cache != nil {
		c.invalidate(ctx, rc.method, rc.route, rc.id, v)
	}
	return resp, v, nil
}

// doLogged is do for a decoded GET whose context has a ReadLog: the log
// answers first, as a cache hit; a body the response cache answers is read
// into the log too; else the call goes on as any (do, without the log's
// answer), and its 2xx body is read into the log.
func (c *Client) doLogged(ctx context.Context, sc *scope, rc call, creds who, uri string, start time.Time) (*Response, any, error) {
	if body, ok := sc.reads.Answer(rc.route, uri); ok {
		if resp, v, err := c.fromCache(ctx, sc.hooks, rc, body, start); err == nil {
			sc.reads.Read(rc.route, unescaped(rc.id), rc.query, uri, body)
			return resp, v, nil
		}
	}
	if c.cache != nil && !sc.noCacheReads && creds.validate() == nil {
		if body, ok := c.cache.Get(ctx, creds.Credentials, rc.route, uri); ok {
			if resp, v, err := c.fromCache(ctx, sc.hooks, rc, body, start); err == nil {
				sc.reads.Read(rc.route, unescaped(rc.id), rc.query, uri, body)
				return resp, v, nil
			}
		}
	}
	// do reads the fetched body into the log.
	rc.asked = true
	return c.do(ctx, rc)
}

// unescaped is a call's path segment as its caller gave it.
func unescaped(seg string) string {
	if s, err := url.PathUnescape(seg); err == nil {
		return s
	}
	return seg
}

// cached answers rc from the response cache when it holds a body for creds
// (valid ones only) and uri that decodes; ok is false otherwise, and the
// call is made afresh.
func (c *Client) cached(ctx context.Context, hooks []CallHooks, rc *call, creds *who, uri string, start time.Time) (resp *Response, v any, ok bool) {
	if creds.validate() != nil {
		return nil, nil, false
	}
	body, ok := c.cache.Get(ctx, creds.Credentials, rc.route, uri)
	if !ok {
		return nil, nil, false
	}
	resp, v, err := c.fromCache(ctx, hooks, *rc, body, start)
	return resp, v, err == nil
}

// ended tells the After hooks of chain how rc's call ended.
func ended(ctx context.Context, chain []CallHooks, rc *call, start time.Time, resp *Response, f *fetched, shared bool, err error) {
	status := 0
	if resp != nil && resp.Response != nil {
		status = resp.StatusCode
	}
	after(ctx, chain, CallInfo{
		Method: rc.method, Route: rc.route, Status: status,
		Duration: time.Since(start), Retries: f.retries, RateLimited: f.rateLimited, Waited: f.waited,
		Err: err, Shared: shared,
	})
}

// sendable returns rc's encoded body once the call may be sent: its
// credentials are valid header values, its body encodes, ctx is alive.
func sendable(ctx context.Context, rc *call, creds *who) ([]byte, error) {
	if err := creds.validate(); err != nil {
		return nil, err
	}
	var payload []byte
	if rc.body != nil {
		var err error
		if payload, err = json.Marshal(rc.body); err != nil {
			return nil, fmt.Errorf("restclient: %s %s: encoding request body: %w", rc.method, rc.route, err)
		}
	}
	return payload, ctx.Err()
}

// exchange makes rc's exchange: a GET joins an identical one in flight when
// sharing is on (shared: it did; fl: the flight, whose answer is copied for
// each caller but the flight's only one), any other call goes alone through
// its route's breaker.
func (c *Client) exchange(ctx context.Context, rc *call, target string, payload []byte, creds who, background bool) (f fetched, shared bool, fl *flight, err error) {
	if rc.method != http.MethodGet || !c.shareGets {
		f, err = c.guardedFetch(ctx, *rc, target, payload, creds, ctx.Deadline)
		return f, false, nil, err
	}
	f, shared, fl, err = c.sharedFetch(ctx, *rc, target, creds, background)
	if f.hr != nil && !c.flights.alone(fl) {
		f.hr = copyResponse(f.hr) // the flight's answer is every waiter's
	}
	return f, shared, fl, err
}

// decodeAnswer decodes data, rc's 2xx body, and sets resp's page tokens; a
// caller that only reads results (readOnly) of a shared GET takes the
// flight's one decoding.
func decodeAnswer(resp *Response, rc *call, fl *flight, data []byte, readOnly bool, creds *who) (any, error) {
	var (
		v    any
		page pageInfo
		err  error
	)
	if fl != nil && rc.parse != nil && readOnly {
		v, page, err = fl.parsed(rc.parse)
	} else {
		v, page, err = rc.decodeBody(data)
	}
	if err != nil {
		return nil, &DecodeError{Method: rc.method, Route: rc.route, Err: redactErr(err, creds.secrets())}
	}
	resp.NextPageToken, resp.SearchQueryNext = page.next, page.searchQueryNext
	return v, nil
}

// fromCache answers rc with a cached body, and tells the After hooks.
func (c *Client) fromCache(ctx context.Context, hooks []CallHooks, rc call, body []byte, start time.Time) (*Response, any, error) {
	v, page, err := rc.decodeBody(body)
	if err != nil {
		return nil, nil, err
	}
	after(ctx, hooks, CallInfo{Method: rc.method, Route: rc.route, Status: http.StatusOK, Duration: time.Since(start), Cached: true})
	return &Response{Response: cachedResponse(), NextPageToken: page.next, SearchQueryNext: page.searchQueryNext}, v, nil
}

// fetched is the outcome of one logical exchange, before decoding.
type fetched struct {
	hr          *http.Response // last answer, body consumed and closed; nil if none
	data        []byte         // the 2xx body
	retries     int            // attempts - 1
	rateLimited int            // retries after a 429
	waited      time.Duration  // time spent in Send hooks
	sent        bool           // at least one request was sent
}

// counts returns f's accounting without its answer.
func (f fetched) counts() fetched {
	return fetched{retries: f.retries, rateLimited: f.rateLimited, waited: f.waited, sent: f.sent}
}

// fetch runs the attempts of rc with retries, each through the Send and
// Answered hooks of ctx. deadline is the latest time the result is still
// wanted: no backoff is waited past it, and Send hooks see it as their
// context's deadline. A done ctx returns ctx.Err() and no answer.
func (c *Client) fetch(ctx context.Context, rc call, target string, payload []byte, creds who, deadline func() (time.Time, bool)) (f fetched, err error) {
	ctx, span := startCallSpan(ctx, rc, target) // tracing.go; nil when untraced
	if span != nil {
		defer func() { endCallSpan(span, f, err) }()
	}
	chain := callHooks(ctx)
	sends := hasSend(chain)
	cs := CallStart{Method: rc.method, Route: rc.route, Priority: priorityOf(ctx)}
	for {
		if sends {
			waited, err := sendWithin(ctx, chain, cs, deadline)
			f.waited += waited
			if err != nil { // the hook's error as is (a rate budget's refusal)
				if err == ctx.Err() {
					return f.counts(), err
				}
				return f, err
			}
		}
		f.sent = true
		hr, data, err := c.attempt(ctx, rc, target, payload, creds)
		f.hr, f.data = hr, data
		if e, ok := asErrorResponse(err); ok {
			e.RetryAfter = min(e.RetryAfter, c.retryAfterCap)
		}
		if hr != nil && len(chain) > 0 {
			answered(ctx, chain, cs, hr)
		}
		if err == nil {
			return f, nil
		}
		if ctx.Err() != nil {
			return f.counts(), ctx.Err()
		}
		delay, ok := c.retryDelay(rc.method, f, err)
		if !ok {
			return f, err
		}
		// The wait must leave the retry time to answer: as long again as
		// the wait, at most one attempt's timeout. Otherwise the callers
		// get this answer now rather than a deadline error later.
		if dl, has := deadline(); has && time.Until(dl) <= delay+min(delay, c.timeout) {
			return f, err
		}
		if werr := c.wait(ctx, delay); werr != nil {
			return f.counts(), werr
		}
		f.retries++
		if StatusCode(err) == http.StatusTooManyRequests {
			f.rateLimited++
		}
	}
}

// sendWithin runs the Send hooks with deadline as their context's deadline
// (a shared GET's context has none of its own: its waiters' is used).
func sendWithin(ctx context.Context, chain []CallHooks, cs CallStart, deadline func() (time.Time, bool)) (time.Duration, error) {
	if dl, ok := deadline(); ok {
		if cur, has := ctx.Deadline(); !has || dl.Before(cur) {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, dl)
			defer cancel()
		}
	}
	return send(ctx, chain, cs)
}

// max429Retries bounds the retries after 429 answers of one call; the
// caller's deadline usually ends them first.
const max429Retries = 8

// retryDelay decides whether the call so far (f), whose last attempt failed
// with err, is retried, and after how long. GETs only, and never with
// MaxRetries 0. A 429 is retried after its Retry-After, whatever it says, or
// else after an exponential back-off from one second; its retries do not
// count against MaxRetries (the caller's deadline bounds them, and
// max429Retries). Other retryable failures follow the RetryPolicy.
func (c *Client) retryDelay(method string, f fetched, err error) (time.Duration, bool) {
	if method != http.MethodGet || c.retry.MaxRetries == 0 {
		return 0, false
	}
	if e, ok := asErrorResponse(err); ok && e.StatusCode == http.StatusTooManyRequests {
		if f.rateLimited >= max429Retries {
			return 0, false
		}
		if e.RetryAfter > 0 {
			return e.RetryAfter, true
		}
		d := rateLimitBackoff << min(f.rateLimited, 5)
		return d/2 + c.jitter(d/2), true
	}
	retries := f.retries - f.rateLimited
	if retries >= c.retry.MaxRetries {
		return 0, false
	}
	if e, ok := asErrorResponse(err); ok {
		switch e.StatusCode {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		default:
			return 0, false
		}
		if e.RetryAfter > 0 {
			if e.RetryAfter > 4*c.retry.MaxDelay {
				return 0, false
			}
			return e.RetryAfter, true
		}
		return c.backoff(retries), true
	}
	var te *TransportError
	if errors.As(err, &te) && te.retryable() {
		return c.backoff(retries), true
	}
	return 0, false
}

// rateLimitBackoff is the first back-off after a 429 without Retry-After
// (doubled for each further one): a throttled client must slow down for
// about a second, not retry within milliseconds.
const rateLimitBackoff = time.Second

// backoff is full jitter over min(MaxDelay, BaseDelay*2^retries).
func (c *Client) backoff(retries int) time.Duration {
	d := c.retry.MaxDelay
	if retries < 30 {
		d = min(d, c.retry.BaseDelay<<retries)
	}
	return c.jitter(d)
}

// attempt sends one request, holding an in-flight slot for its duration. It
// returns the answer (nil if none) and, for a 2xx, the body; non-2xx answers
// are *ErrorResponse.
func (c *Client) attempt(ctx context.Context, rc call, target string, payload []byte, creds who) (*http.Response, []byte, error) {
	id := creds.id
	if err := c.slots.acquire(ctx, id); err != nil {
		return nil, nil, err
	}
	defer c.slots.release(id)
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	// wrote turns true once the whole request is on the wire: from then on
	// the upstream may have acted on it, whatever happens to the answer.
	// Only a write's failure needs to know (TransportError.OutcomeUnknown),
	// so reads go without the trace.
	var wrote atomic.Bool
	isWrite := rc.method != http.MethodGet && rc.method != http.MethodHead
	if isWrite {
		actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				wrote.Store(true)
			}
		}})
	}
	req, err := http.NewRequestWithContext(actx, rc.method, target, body)
	if err != nil {
		return nil, nil, fmt.Errorf("restclient: %s %s: invalid request", rc.method, rc.route)
	}
	c.setHeader(req.Header, payload != nil, creds)
	injectTrace(actx, req)

	hr, err := c.roundTrip(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		te := newTransportError(rc.method, rc.route, err)
		te.Sent = isWrite && wrote.Load()
		return nil, nil, te
	}
	if c.rt != nil {
		ungzip(hr, rc.method) // asked for in setHeader
	}
	readAll := false // the body was read to its end
	defer func() {
		if !readAll { // drain a little so the connection can be reused
			_, _ = io.Copy(io.Discard, io.LimitReader(hr.Body, maxErrorBody))
		}
		hr.Body.Close()
	}()
	if err := checkResponse(rc.method, rc.route, c.pathOf(target), hr); err != nil {
		if e, ok := asErrorResponse(err); ok {
			e.redact(creds.secrets())
		}
		return hr, nil, err
	}
	data, err := readBody(hr.Body, hr.ContentLength, c.bodySizes.hint(rc.route))
	readAll = err == nil && len(data) <= maxResponseBody
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		te := newTransportError(rc.method, rc.route, err)
		te.Sent, te.Answered = true, true
		return nil, nil, te
	}
	if len(data) > maxResponseBody {
		return hr, nil, &DecodeError{Method: rc.method, Route: rc.route, Err: errBodyTooLarge}
	}
	return hr, data, nil
}

// roundTrip sends one request. The client's own *http.Client follows no
// redirects and has no cookie jar, and every attempt carries its own
// deadline (shorter than that client's backstop Timeout), so its transport
// is called directly: the same exchange without http.Client's per-request
// redirect bookkeeping (a copy of the request, of its URL and its header).
// A client given with WithHTTPClient is used as is.
func (c *Client) roundTrip(req *http.Request) (*http.Response, error) {
	if c.rt != nil {
		return c.rt.RoundTrip(req)
	}
	return c.hc.Do(req)
}

// pathOf returns the path of target, a call's URL, below the base URL
// (escaped ids hold no '?').
func (c *Client) pathOf(target string) string {
	path, _, _ := strings.Cut(target[len(c.base):], "?")
	return path
}

// setHeader fills h, a new request's empty header: Accept, User-Agent,
// Content-Type when it has a body, and creds' Authorization and
// service-network-id when set, Accept-Encoding with the own transport
// (gzip.go). The value slices are the client's and the credentials' own,
// made once: a RoundTripper does not modify its request, and each has room
// for its one value only (an append copies).
func (c *Client) setHeader(h http.Header, hasBody bool, creds who) {
	h["Accept"] = c.headerVals[0:1:1]
	h["User-Agent"] = c.headerVals[1:2:2]
	if hasBody {
		h["Content-Type"] = c.headerVals[0:1:1]
	}
	if creds.Authorization != "" {
		h["Authorization"] = creds.headerVals[0:1:1]
	}
	if creds.NetworkID != "" {
		h["Service-Network-Id"] = creds.headerVals[1:2:2]
	}
	if c.rt != nil {
		h["Accept-Encoding"] = c.headerVals[2:3:3]
	}
}

// ---- request helpers ----

// escapeID returns id as one escaped path segment of a call of op. Empty,
// "." and ".." ids are refused: they would address another route.
func escapeID(op *Operation, id string) (string, error) {
	if id == "" || id == "." || id == ".." {
		return "", fmt.Errorf("restclient: %s: invalid id %q", op.Pattern(), id)
	}
	return url.PathEscape(id), nil
}

// ListOptions are the paging parameters of list operations.
type ListOptions struct {
	Limit         int    // 0 = upstream default (25); sent as limit
	NextPageToken string // sent as nextPageToken
}

func (o ListOptions) encode(q url.Values) {
	if o.Limit != 0 {
		q.Set("limit", fmt.Sprint(o.Limit))
	}
	if o.NextPageToken != "" {
		q.Set("nextPageToken", o.NextPageToken)
	}
}

// DateRange filters on a timestamp, both ends inclusive; a zero end is
// absent. It is sent as createDate[gte] and createDate[lte] in RFC 3339 UTC.
// Ranges whose ends are in UTC without a monotonic clock reading
// (t.UTC().Round(0)) compare equal with == when they are the same range, so
// list options holding one can be map keys.
type DateRange struct {
	GTE, LTE time.Time
}

func (d DateRange) encode(q url.Values, field string) {
	if !d.GTE.IsZero() {
		q.Set(field+"[gte]", d.GTE.UTC().Format(time.RFC3339Nano))
	}
	if !d.LTE.IsZero() {
		q.Set(field+"[lte]", d.LTE.UTC().Format(time.RFC3339Nano))
	}
}

// valuesOf returns the query of list options o (Values); a nil o filters
// nothing.
func valuesOf[O any, P interface {
	*O
	Values() url.Values
}](o P) url.Values {
	if o == nil {
		return nil
	}
	return o.Values()
}

func setIf(q url.Values, key, v string) {
	if v != "" {
		q.Set(key, v)
	}
}

// paginate follows page tokens from first, yielding every item; it stops at
// the first error (yielded with a nil item) or when the consumer stops.
func paginate[T any](first string, fetch func(token string) ([]*T, *Response, error)) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		token := first
		seen := map[string]bool{token: true}
		for {
			items, resp, err := fetch(token)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			next := resp.NextPageToken
			if next == "" {
				return
			}
			if seen[next] {
				yield(nil, errors.New("restclient: upstream repeated a page token; stopping"))
				return
			}
			seen[next] = true
			token = next
		}
	}
}

// get makes the call of op with id (unescaped) in its path parameter, if
// it has one, and decodes the answer with op's decoder.
func get[T any](ctx context.Context, c *Client, op *Op[T], id string) (T, *Response, error) {
	return invoke(ctx, c, op, id, nil, nil, op.parse)
}

// query makes the GET op with query q.
func query[T any](ctx context.Context, c *Client, op *Op[T], q url.Values) (T, *Response, error) {
	return invoke(ctx, c, op, "", q, nil, op.parse)
}

// write makes the write op with id (unescaped) in its path parameter, if it
// has one, and body req under op's Key ({"booking": req}).
func write[T, R any](ctx context.Context, c *Client, op *Op[T], id string, req *R) (T, *Response, error) {
	if req == nil {
		var zero T
		return zero, nil, fmt.Errorf("restclient: %s: nil request", op.Pattern())
	}
	return invoke(ctx, c, op, id, nil, map[string]any{op.Key: req}, op.parse)
}

// Get makes the GET op (a row of the table) with id in its path parameter
// (when its route has one) and query q (nil: none), and decodes the answer
// as op's client method does: the call the facade's live sources make.
func Get[T any](ctx context.Context, c *Client, op *Op[T], id string, q url.Values) (T, *Response, error) {
	if op.Method != http.MethodGet {
		var zero T
		return zero, nil, fmt.Errorf("restclient: Get: %s is not a GET", op.Pattern())
	}
	return invoke(ctx, c, op, id, q, nil, op.parse)
}

// GetLazily is Get with op's lazily decoding variant where the row has one
// (lazy.go: read the value's objects through its Complete): the call the
// facade's loaders make.
func GetLazily[T any](ctx context.Context, c *Client, op *Op[T], id string, q url.Values) (T, *Response, error) {
	parse := op.parse
	if op.lazy != nil {
		parse = op.lazy
	}
	if op.Method != http.MethodGet {
		var zero T
		return zero, nil, fmt.Errorf("restclient: GetLazily: %s is not a GET", op.Pattern())
	}
	return invoke(ctx, c, op, id, q, nil, parse)
}

// invoke makes one call of op: id (unescaped) in its path parameter, query
// q, request body body; a 2xx answer is decoded by parse into a T.
func invoke[T any](ctx context.Context, c *Client, op *Op[T], id string, q url.Values, body any, parse parseFunc) (T, *Response, error) {
	var zero T
	seg := ""
	if op.hasParam {
		var err error
		if seg, err = escapeID(&op.Operation, id); err != nil {
			return zero, nil, err
		}
	}
	resp, v, err := c.do(ctx, call{method: op.Method, route: op.Route, id: seg, query: q, body: body, parse: parse})
	if err != nil {
		return zero, resp, err
	}
	return v.(T), resp, nil
}

// CloseIdleConnections closes the client's idle keep-alive connections and ends its idle
// goroutines (on shutdown, so nothing lingers).
func (c *Client) CloseIdleConnections() {
	c.flights.pool.StopIdle()
	c.hc.CloseIdleConnections()
}
