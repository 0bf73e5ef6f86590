package livetransport

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/guard"
	"github.com/workspacenet/facade/graph/livequery"
	"github.com/workspacenet/facade/graph/overhttp"
	"github.com/workspacenet/facade/internal/base/accesslog"
	"github.com/workspacenet/facade/restclient"
)

// Live transports
//
// Subscriptions (and any other operation) are served on /graphql over
// WebSocket, subprotocols graphql-transport-ws and the legacy graphql-ws
// (gqlgen's transport.Websocket, read through wsConn), and over SSE,
// graphql-sse's distinct connections mode: a POST (or GET) of one operation
// with Accept: text/event-stream. Such a request is decoded, checked and
// parsed once, as any GraphQL-over-HTTP request (the handler, then one
// CreateOperationContext: eventStreams), and routed by what it is: a
// subscription is answered with `next` events and one `complete`, any
// other operation is incremental delivery, written by the GraphQL-over-HTTP
// transport from the same operation context.
//
// A connection holds nothing beyond its opening slot (conns.go) until
// its credentials are proven: a WebSocket's connection_init payload's
// Authorization and service-network-id, else the upgrade request's
// headers; an SSE request's headers. None (and no ServerCredentials): the
// WebSocket is closed 4401, the SSE request refused 401. The upstream
// refuses them: 4403, 401 or 403. The upstream cannot tell (5xx, a
// timeout): 1013 (try again later), 503. Then the connection is open and
// counts against LiveMaxConnections and LiveMaxConnectionsPerCredential
// (beyond them: 1013, 503 TOO_MANY_CONNECTIONS). A WebSocket upgrade must
// come from the server's own origin or one CheckOrigin allows (no
// cross-site WebSocket hijacking: a browser sends its cookies and its
// origin, never the page's choice of either).

// Defaults of the live options.
const (
	DefaultLiveMaxConnections   = 10000
	DefaultLiveMaxPerConnection = 50
	DefaultLiveKeepAlive        = 25 * time.Second
	DefaultLiveInitTimeout      = 10 * time.Second
)

// liveKey marks the context of an operation received over a live transport.
type liveKey struct{}

// isUpgrade reports whether r asks for a WebSocket.
func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// isEventStream reports whether r is a graphql-sse request (distinct
// connections mode): a POST or a GET (EventSource) that accepts
// text/event-stream.
func isEventStream(r *http.Request) bool {
	return (r.Method == http.MethodPost || r.Method == http.MethodGet) && strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// liveOnly is a transport that takes only the requests serveLive passes on
// (their context is marked with liveKey): a query asking for
// text/event-stream goes to the GraphQL-over-HTTP transport instead, and so
// does a request whose Upgrade header is not exactly websocket.
type liveOnly struct{ graphql.Transport }

func (t liveOnly) Supports(r *http.Request) bool {
	return r.Context().Value(liveKey{}) != nil && t.Transport.Supports(r)
}

// sameOrigin reports whether the Origin header names r's own host.
func sameOrigin(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// liveTransports adds the WebSocket and SSE transports to srv; they must
// go before the GraphQL-over-HTTP transport, which takes every request.
func (o *Options) liveTransports(srv *handler.Server, conns *liveConns) {
	var readLimit *int64
	if o.MaxBodyBytes > 0 {
		readLimit = &o.MaxBodyBytes
	}
	// Only the upgrades serveUpgrade passes on: gqlgen's transport takes any
	// Upgrade header, the WebSocket library any that lists websocket.
	srv.AddTransport(liveOnly{transport.Websocket{
		// The origin is checked before the upgrade (serveUpgrade).
		Implementation: liveWebsocket{
			inner: transport.CoderWebsocketImplementation{AcceptOptions: coderws.AcceptOptions{InsecureSkipVerify: true}},
			ka:    newSharedKeepAlive(o.LiveKeepAlive),
			o:     o,
		},
		// Keep-alive messages: liveWebsocket's, one goroutine for all.
		MissingPongOk:    true,
		InitTimeout:      cmp.Or(max(o.LiveInitTimeout, 0), DefaultLiveInitTimeout),
		PayloadReadLimit: readLimit,
		InitFunc: func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			h := initHeaders(p)
			creds := guard.Credentials(h)
			if creds == nil {
				creds = upgradeCredentials(ctx)
			}
			trace := o.UpstreamTrace && (h.Get(guard.TraceHeader) == "1" || ctx.Value(upgradeTraceKey{}) != nil)
			if creds != nil {
				if len(creds.Authorization) > guard.MaxCredentialHeaderBytes || len(creds.NetworkID) > guard.MaxCredentialHeaderBytes {
					return closeWith(ctx, closeBadRequest, "Bad request: credentials longer than 4 KiB"), nil, gqlerr.New(errcode.BadRequest, "the connection_init credentials are longer than 4 KiB; no credentials are that long", nil)
				}
				if err := creds.Check(); err != nil {
					return closeWith(ctx, closeBadRequest, "Bad request: credentials that cannot be right"), nil, gqlerr.New(errcode.BadRequest, "the connection_init credentials cannot be right: "+err.Error(), nil)
				}
			} else if o.ServerCredentials == nil {
				return closeWith(ctx, closeUnauthorized, "Unauthorized: connection_init carries no Authorization"), nil, refusalError(noCredentials)
			}
			ctx = o.Endpoint.NewRequest(ctx, creds, trace)
			if ref, code, reason := o.prove(ctx); ref != nil {
				return closeWith(ctx, code, reason), nil, refusalError(ref)
			}
			if reason, ok := conns.establish(connFrom(ctx), restclient.IdentityFromContext(ctx)); !ok {
				return closeWith(ctx, closeTryLater, "Try again later: "+reason), nil, gqlerr.New(errcode.TooManyConnections, reason, nil)
			}
			return ctx, nil, nil
		},
	}})
	srv.AddTransport(eventStreams{o: o, conns: conns, http: overhttp.Transport{WriteTimeout: o.ResponseWriteTimeout}})
}

// closeWith returns ctx carrying the close code and reason gqlgen closes a
// WebSocket with when its InitFunc refuses it (a reason fits in 123 bytes).
func closeWith(ctx context.Context, code int, reason string) context.Context {
	return transport.AppendCloseReason(transport.WithWebsocketCloseCode(ctx, code), reason)
}

// prove asks the upstream whether the credentials of ctx (a live
// connection's request) are valid, within LiveInitTimeout
// (restclient.Client.Authenticate): nil when they are; else the refusal
// of an SSE request, and the WebSocket close code and reason to end the
// connection with: 401 UNAUTHENTICATED (403 FORBIDDEN for a token of
// another network) and 4403 when the upstream refuses them, 503
// UPSTREAM_UNAVAILABLE and 1013 when it could not tell.
func (o *Options) prove(ctx context.Context) (*guard.Refusal, int, string) {
	pctx, cancel := context.WithTimeout(ctx, cmp.Or(max(o.LiveInitTimeout, 0), DefaultLiveInitTimeout))
	defer cancel()
	err := o.Client.Authenticate(pctx)
	_, known := errors.AsType[*restclient.RefusedCredentialsError](err)
	switch {
	case err == nil:
		return nil, 0, ""
	case restclient.IsNetworkMismatch(err):
		return &guard.Refusal{Status: http.StatusForbidden, Code: errcode.Forbidden,
			Message: "the upstream refused these credentials: the token is not of the network service-network-id names"}, closeForbidden, "Forbidden: the upstream refused these credentials"
	case known || restclient.IsUnauthorized(err):
		return &guard.Refusal{Status: http.StatusUnauthorized, Code: errcode.Unauthenticated,
			Message: "the upstream refused these credentials"}, closeForbidden, "Forbidden: the upstream refused these credentials"
	}
	return &guard.Refusal{Status: http.StatusServiceUnavailable, Code: errcode.UpstreamUnavailable,
		Message: "the upstream could not confirm these credentials; retry later"}, closeTryLater, "Try again later: the upstream could not confirm these credentials"
}

// refusalError is ref as a GraphQL error (a WebSocket's connection_error).
func refusalError(ref *guard.Refusal) *gqlerror.Error {
	return gqlerr.New(ref.Code, ref.Message, nil)
}

// upgradeCredentialsKey holds the credentials of the upgrade request's
// headers (a *restclient.Credentials, nil without them): the connection
// keeps them, not the headers.
type upgradeCredentialsKey struct{}

func upgradeCredentials(ctx context.Context) *restclient.Credentials {
	c, _ := ctx.Value(upgradeCredentialsKey{}).(*restclient.Credentials)
	return c
}

// upgradeTraceKey marks a WebSocket whose upgrade request asked for the
// upstream call report (guard.TraceHeader).
type upgradeTraceKey struct{}

// initHeaders returns the headers of a connection_init payload: its string
// values, whatever their case, at the top level or in "headers" (for
// credentials: Authorization and service-network-id; guard.TraceHeader).
func initHeaders(p transport.InitPayload) http.Header {
	h := http.Header{}
	add := func(m map[string]any) {
		for k, v := range m {
			if s, ok := v.(string); ok {
				h.Set(k, s)
			}
		}
	}
	add(p)
	if inner, ok := p["headers"].(map[string]any); ok {
		add(inner)
	}
	return h
}

// noCredentials refuses a live connection without credentials (and a
// server without ServerCredentials).
var noCredentials = &guard.Refusal{Status: http.StatusUnauthorized, Code: errcode.Unauthenticated, Message: gqlerr.ErrNoCredentials.Error()}

// serveUpgrade serves a WebSocket upgrade with srv, after the origin check,
// the credential headers' check and an opening slot (conns).
func (o *Options) serveUpgrade(w http.ResponseWriter, r *http.Request, srv *handler.Server, conns *liveConns) {
	ctx := r.Context()
	entry := accesslog.From(ctx)
	if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(r, origin) && (o.CheckOrigin == nil || !o.CheckOrigin(origin)) {
		refuse(w, entry, overhttp.JSON, &guard.Refusal{Status: http.StatusForbidden, Code: errcode.OriginNotAllowed,
			Message: "this origin may not open a WebSocket to this server"})
		return
	}
	if ref := guard.CredentialHeaders(r); ref != nil {
		refuse(w, entry, overhttp.JSON, ref)
		return
	}
	end := &wsEnd{}
	c, ref := conns.opening(guard.ClientAddress(r, o.TrustedProxies), true, o.LiveMaxPerConnection, end.end)
	if ref != nil {
		refuse(w, entry, overhttp.JSON, ref)
		return
	}
	// A live connection outlives the server's read and write timeouts.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	ctx = context.WithValue(ctx, liveKey{}, true)
	ctx = context.WithValue(ctx, liveConnKey{}, c)
	ctx = context.WithValue(ctx, wsEndKey{}, end)
	ctx = context.WithValue(ctx, upgradeCredentialsKey{}, guard.Credentials(r.Header))
	if r.Header.Get(guard.TraceHeader) == "1" {
		ctx = context.WithValue(ctx, upgradeTraceKey{}, true)
	}
	o.serveWebsocket(w, r.WithContext(ctx), srv, end, func() { conns.release(c) })
}

// serveWebsocket serves the WebSocket of r on a goroutine of its own and
// returns once the connection is hijacked (or refused): net/http then lets
// go of the HTTP connection, its goroutine and its buffers, which an open
// WebSocket would otherwise hold for its whole life. The WebSocket's
// context is r's without its cancellation (the handler's return cancels
// r's), cancelled when the WebSocket ends or by end; done runs then.
func (o *Options) serveWebsocket(w http.ResponseWriter, r *http.Request, srv *handler.Server, end *wsEnd, done func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	end.mu.Lock()
	end.cancel = cancel
	end.mu.Unlock()
	accepted := make(chan struct{})
	ended := make(chan struct{})
	ctx = context.WithValue(ctx, acceptedKey{}, accepted)
	go func() {
		defer close(ended)
		defer done()
		defer cancel()
		defer func() {
			if v := recover(); v != nil {
				o.Logger.ErrorContext(ctx, "panic serving a WebSocket", "panic", fmt.Sprint(v))
			}
		}()
		srv.ServeHTTP(w, r.WithContext(ctx))
	}()
	select {
	case <-accepted:
	case <-ended:
	}
}

// acceptedKey holds the channel closed once the WebSocket of the request
// is accepted (liveWebsocket.Accept): the handler may return.
type acceptedKey struct{}

// eventStreamKey holds the decoded parameters of a request asking for
// text/event-stream, which eventStreams serves.
type eventStreamKey struct{}

// eventStreams serves the requests the handler marks with eventStreamKey
// (decoded and checked as every GraphQL-over-HTTP request): it creates
// their operation context, once, and serves a subscription as graphql-sse's
// distinct connections mode (serveEventStream); any other operation goes
// on to the GraphQL-over-HTTP transport with that operation context
// (incremental delivery over SSE), within RequestTimeout.
type eventStreams struct {
	o     *Options
	conns *liveConns
	http  overhttp.Transport
}

func (t eventStreams) Supports(r *http.Request) bool {
	_, ok := r.Context().Value(eventStreamKey{}).(*guard.Params)
	return ok
}

func (t eventStreams) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	p := ctx.Value(eventStreamKey{}).(*guard.Params)
	params := &p.RawParams
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: graphql.GetStartTime(ctx), End: graphql.Now()}
	oc, errs := exec.CreateOperationContext(ctx, params)
	if oc.Operation != nil && (oc.Operation.Operation == ast.Subscription || livequery.Is(oc)) {
		t.o.serveEventStream(w, r, exec, oc, errs, t.conns)
		return
	}
	// A GET asking for a stream skipped CSRF prevention, which an
	// EventSource cannot satisfy, in case it was a subscription.
	if r.Method == http.MethodGet && !t.o.DisableCSRFPrevention {
		if ref := guard.CSRF(r); ref != nil {
			refuse(w, accesslog.From(ctx), overhttp.JSON, ref)
			return
		}
	}
	if t.o.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.o.RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
	}
	t.http.Do(w, r, created{exec, oc, errs})
}

// created is an executor whose operation context is already created.
type created struct {
	graphql.GraphExecutor
	oc   *graphql.OperationContext
	errs gqlerror.List
}

func (c created) CreateOperationContext(context.Context, *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	return c.oc, c.errs
}

// serveEventStream serves the subscription oc (errs: its request errors)
// as graphql-sse's distinct connections mode, once the request has
// credentials, an opening slot, their proof and an open slot (conns):
// text/event-stream, a `next` event per response, each written within
// ResponseWriteTimeout, and `complete` when the subscription ends. A
// stream the client or a restart ends has no `complete` (graphql-sse's
// client then connects again).
func (o *Options) serveEventStream(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, oc *graphql.OperationContext, errs gqlerror.List, conns *liveConns) {
	ctx := r.Context()
	entry := accesslog.From(ctx)
	if !o.Endpoint.HasCredentials(ctx) {
		refuse(w, entry, overhttp.JSON, noCredentials)
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c, ref := conns.opening(guard.ClientAddress(r, o.TrustedProxies), false, o.LiveMaxPerConnection, func(int, string) { cancel() })
	if ref != nil {
		refuse(w, entry, overhttp.JSON, ref)
		return
	}
	defer conns.release(c)
	if ref, _, _ := o.prove(ctx); ref != nil {
		refuse(w, entry, overhttp.JSON, ref)
		return
	}
	if reason, ok := conns.establish(c, restclient.IdentityFromContext(ctx)); !ok {
		refuse(w, entry, overhttp.JSON, &guard.Refusal{Status: http.StatusServiceUnavailable, Code: errcode.TooManyConnections, Message: reason + "; retry later"})
		return
	}
	ctx = context.WithValue(ctx, liveKey{}, true)
	ctx = context.WithValue(ctx, liveConnKey{}, c)
	ctx = graphql.WithOperationContext(ctx, oc)

	// A live stream outlives the server's read and write timeouts; each
	// write has ResponseWriteTimeout.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: rc, timeout: o.ResponseWriteTimeout}
	if !s.write(":\n\n") {
		return
	}
	var pings sync.WaitGroup
	defer func() { cancel(); pings.Wait() }() // nothing writes once the handler returns
	if every := o.LiveKeepAlive; every > 0 {
		pings.Go(func() {
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					if !s.write(": ping\n\n") {
						cancel()
						return
					}
				}
			}
		})
	}
	if errs != nil {
		if s.next(exec.DispatchError(ctx, errs)) {
			s.write("event: complete\n\n")
		}
		return
	}
	responses, dctx := exec.DispatchOperation(ctx, oc)
	for {
		resp := responses(dctx)
		if resp == nil {
			break
		}
		if !s.next(resp) {
			return
		}
	}
	if ctx.Err() == nil {
		s.write("event: complete\n\n")
	}
}

// sseWriter writes the events of one stream, one at a time, each flushed
// within timeout (0: no deadline of its own).
type sseWriter struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	failed  bool
}

// write writes text and flushes it; false once a write failed.
func (s *sseWriter) write(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeLocked([]byte(text))
}

func (s *sseWriter) writeLocked(b []byte) bool {
	if s.failed {
		return false
	}
	if s.timeout > 0 {
		_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	}
	if _, err := s.w.Write(b); err != nil || s.rc.Flush() != nil {
		s.failed = true
	}
	return !s.failed
}

// next writes resp as a `next` event.
func (s *sseWriter) next(resp *graphql.Response) bool {
	b, err := json.Marshal(resp)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeLocked(slices.Concat([]byte("event: next\ndata: "), livequery.Lift(b), []byte("\n\n")))
}
