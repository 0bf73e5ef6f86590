package graph

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/workspacenet/facade/graph/admission"
	"github.com/workspacenet/facade/graph/calls"
	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/guard"
	"github.com/workspacenet/facade/graph/limits"
	"github.com/workspacenet/facade/graph/overhttp"
	"github.com/workspacenet/facade/internal/base/accesslog"
	"github.com/workspacenet/facade/restclient"
)

// Live transports
//
// Subscriptions (and any other operation) are served on /graphql over
// WebSocket, subprotocols graphql-transport-ws and the legacy graphql-ws
// (gqlgen's transport.Websocket), and over SSE, graphql-sse's distinct
// connections mode: a POST of one subscription with Accept:
// text/event-stream, answered with `next` events and one `complete`
// (gqlgen's transport.SSE; other operations asking for text/event-stream
// are incremental delivery, served by the GraphQL-over-HTTP transport).
// Both connections count against LiveMaxConnections. A WebSocket upgrade
// must come from the server's own origin or one CheckOrigin allows (no
// cross-site WebSocket hijacking: a browser sends its cookies and its
// origin, never the page's choice of either). Its credentials are the
// connection_init payload's Authorization and service-network-id, else the
// upgrade request's headers; an SSE request's are its headers, as for any
// request.

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

// eventSourceKey marks an operation received by a GET graphql-sse request:
// no mutation.
type eventSourceKey struct{}

// eventSourceAsPost turns a GET graphql-sse request (EventSource: query,
// variables, operationName and extensions in the query string, variables
// and extensions as JSON) into the POST the SSE transport reads.
func eventSourceAsPost(r *http.Request) (*http.Request, *guard.Refusal) {
	q := r.URL.Query()
	params := map[string]any{"query": q.Get("query")}
	if v := q.Get("operationName"); v != "" {
		params["operationName"] = v
	}
	for _, k := range []string{"variables", "extensions"} {
		if v := q.Get(k); v != "" {
			var m map[string]any
			if err := json.Unmarshal([]byte(v), &m); err != nil {
				return nil, &guard.Refusal{Status: http.StatusBadRequest, Code: errcode.BadRequest,
					Message: "the query string's " + k + " must be a JSON object"}
			}
			params[k] = m
		}
	}
	body, _ := json.Marshal(params)
	p := r.Clone(context.WithValue(r.Context(), eventSourceKey{}, true))
	p.Method = http.MethodPost
	p.Header.Set("Content-Type", "application/json")
	p.Body, p.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return p, nil
}

// isSubscriptionStream reports whether r is a graphql-sse request of a
// subscription: a query or mutation asking for text/event-stream is
// incremental delivery (@defer, @stream) over SSE, served by the
// GraphQL-over-HTTP transport. The operation's text is document's answer
// for the request's parameters (its query, else the persisted query its
// hash names). It reads at most maxBody+1 bytes of the body (0: no bound)
// and gives r's body back whole; a body it cannot read as one operation
// whose query parses within maxQuery bytes is not a subscription (the
// GraphQL-over-HTTP transport then answers it with its error, an unknown
// hash with PERSISTED_QUERY_NOT_FOUND). It returns the request's
// parameters when it is one. maxBody, maxQuery and maxTokens are o's
// MaxBodyBytes, MaxQueryBytes and Limits.MaxTokens.
func (o *Options) isSubscriptionStream(r *http.Request) (*guard.Params, bool) {
	maxBody, maxQuery, maxTokens := o.MaxBodyBytes, o.MaxQueryBytes, o.Limits.MaxTokens
	if !isEventStream(r) {
		return nil, false
	}
	if r.Method == http.MethodGet {
		p, ref := guard.DecodeQuery(r)
		return p, ref == nil && isSubscription(o.document(r.Context(), p), p.OperationName, maxQuery, maxTokens)
	}
	var src io.Reader = r.Body
	if maxBody > 0 {
		src = io.LimitReader(r.Body, maxBody+1)
	}
	body, err := io.ReadAll(src)
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil || (maxBody > 0 && int64(len(body)) > maxBody) {
		return nil, false
	}
	p, ref := guard.DecodeBody(body)
	return p, ref == nil && isSubscription(o.document(r.Context(), p), p.OperationName, maxQuery, maxTokens)
}

// document returns the text of the operation p names: its query, else the
// trusted document of its documentId, else the trusted document or
// automatic persisted query of its extensions.persistedQuery.sha256Hash
// ("" when none is known).
func (o *Options) document(ctx context.Context, p *guard.Params) string {
	if p.Query != "" {
		return p.Query
	}
	pq, _ := p.Extensions["persistedQuery"].(map[string]any)
	hash, _ := pq["sha256Hash"].(string)
	if len(o.TrustedDocuments) > 0 && p.DocumentID != "" {
		hash = p.DocumentID
	}
	switch {
	case hash == "":
		return ""
	case len(o.TrustedDocuments) > 0:
		return o.TrustedDocuments[strings.ToLower(strings.TrimPrefix(hash, "sha256:"))]
	case o.APQCache != nil:
		q, _ := o.APQCache.Get(ctx, hash)
		return q
	}
	return ""
}

// isSubscription reports whether the operation operationName of query
// (the only one when operationName is empty) is a subscription; a query
// longer than maxQuery bytes or maxTokens tokens (0: no bound), or that does
// not parse, is not.
func isSubscription(query, operationName string, maxQuery, maxTokens int) bool {
	if query == "" || (maxQuery > 0 && len(query) > maxQuery) {
		return false
	}
	doc, gerr := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, maxTokens)
	if gerr != nil {
		return false
	}
	if op := doc.Operations.ForName(operationName); op != nil {
		return op.Operation == ast.Subscription
	}
	return len(doc.Operations) == 1 && doc.Operations[0].Operation == ast.Subscription
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
func (o *Options) liveTransports(srv *handler.Server, paceHooks restclient.CallHooks) {
	// Only the upgrades serveLive passes on: gqlgen's transport takes any
	// Upgrade header, the WebSocket library any that lists websocket.
	srv.AddTransport(liveOnly{transport.Websocket{
		// The origin is checked before the upgrade (serveLive).
		Implementation: liveWebsocket{
			inner: transport.CoderWebsocketImplementation{AcceptOptions: coderws.AcceptOptions{InsecureSkipVerify: true}},
			ka:    newSharedKeepAlive(o.LiveKeepAlive),
		},
		// Keep-alive messages: liveWebsocket's, one goroutine for all.
		MissingPongOk: true,
		InitTimeout:   cmp.Or(max(o.LiveInitTimeout, 0), DefaultLiveInitTimeout),
		InitFunc: func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			h := initHeaders(p)
			creds := credentialsOf(h)
			if creds == nil {
				creds = upgradeCredentials(ctx)
			}
			trace := o.UpstreamTrace && (h.Get(TraceHeader) == "1" || ctx.Value(upgradeTraceKey{}) != nil)
			if creds != nil {
				if len(creds.Authorization) > guard.MaxCredentialHeaderBytes || len(creds.NetworkID) > guard.MaxCredentialHeaderBytes {
					return transport.WithWebsocketCloseCode(ctx, 4400), nil, &gqlerror.Error{Message: "the connection_init credentials are longer than 4 KiB; no credentials are that long", Extensions: map[string]any{"code": errcode.BadRequest}}
				}
				if err := creds.Check(); err != nil {
					return transport.WithWebsocketCloseCode(ctx, 4400), nil, &gqlerror.Error{Message: "the connection_init credentials cannot be right: " + err.Error(), Extensions: map[string]any{"code": errcode.BadRequest}}
				}
			}
			ctx, _ = o.newRequest(ctx, creds, trace, false, paceHooks)
			return ctx, nil, nil
		},
	}})
	srv.AddTransport(liveOnly{transport.SSE{KeepAlivePingInterval: o.LiveKeepAlive}})
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
// upstream call report (TraceHeader).
type upgradeTraceKey struct{}

// initHeaders returns the headers of a connection_init payload: its string
// values, whatever their case, at the top level or in "headers" (for
// credentials: Authorization and service-network-id; TraceHeader).
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

// serveLive serves a WebSocket or SSE request with srv, after the origin
// check and the bound of connections.
func (o *Options) serveLive(w http.ResponseWriter, r *http.Request, srv *handler.Server, conns *atomic.Int64, paceHooks restclient.CallHooks) {
	ctx := r.Context()
	entry := accesslog.From(ctx)
	if isUpgrade(r) {
		if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(r, origin) && (o.CheckOrigin == nil || !o.CheckOrigin(origin)) {
			refuse(w, entry, overhttp.JSON, &guard.Refusal{Status: http.StatusForbidden, Code: errcode.OriginNotAllowed,
				Message: "this origin may not open a WebSocket to this server"})
			return
		}
		if ref := guard.CredentialHeaders(r); ref != nil {
			refuse(w, entry, overhttp.JSON, ref)
			return
		}
	} else if r.Method == http.MethodGet {
		// A GET carries no body and runs no mutation (refuseSubscriptionOverHTTP).
		if ref := guard.CredentialHeaders(r); ref != nil {
			refuse(w, entry, overhttp.JSON, ref)
			return
		}
		p, ref := eventSourceAsPost(r)
		if ref != nil {
			refuse(w, entry, overhttp.JSON, ref)
			return
		}
		r, ctx = p, p.Context()
	} else {
		if !o.DisableCSRFPrevention {
			if ref := guard.CSRF(r); ref != nil {
				refuse(w, entry, overhttp.JSON, ref)
				return
			}
		}
		if ref := guard.CredentialHeaders(r); ref != nil {
			refuse(w, entry, overhttp.JSON, ref)
			return
		}
		if o.MaxBodyBytes > 0 {
			r.Body = http.MaxBytesReader(w, r.Body, o.MaxBodyBytes)
		}
	}
	if n := conns.Add(1); o.LiveMaxConnections > 0 && n > int64(o.LiveMaxConnections) {
		conns.Add(-1)
		refuse(w, entry, overhttp.JSON, &guard.Refusal{Status: http.StatusServiceUnavailable, Code: errcode.TooManyConnections,
			Message: "too many live connections on this server; retry later"})
		return
	}
	// A live connection outlives the server's read and write timeouts.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	ctx = context.WithValue(ctx, liveKey{}, true)
	ctx = context.WithValue(ctx, liveConnKey{}, &liveConn{max: o.LiveMaxPerConnection})
	if isUpgrade(r) {
		ctx = context.WithValue(ctx, upgradeCredentialsKey{}, credentialsOf(r.Header))
		if r.Header.Get(TraceHeader) == "1" {
			ctx = context.WithValue(ctx, upgradeTraceKey{}, true)
		}
		o.serveWebsocket(w, r.WithContext(ctx), srv, func() { conns.Add(-1) })
		return
	}
	defer conns.Add(-1)
	ctx, _ = o.newRequest(ctx, credentialsOf(r.Header), o.UpstreamTrace && r.Header.Get(TraceHeader) == "1", false, paceHooks)
	srv.ServeHTTP(flusher{w, rc}, r.WithContext(ctx))
}

// serveWebsocket serves the WebSocket of r on a goroutine of its own and
// returns once the connection is hijacked (or refused): net/http then lets
// go of the HTTP connection, its goroutine and its buffers, which an open
// WebSocket would otherwise hold for its whole life. The WebSocket's
// context is r's without its cancellation (the handler's return cancels
// r's), cancelled when the WebSocket ends; done runs then.
func (o *Options) serveWebsocket(w http.ResponseWriter, r *http.Request, srv *handler.Server, done func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
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

// flusher gives the SSE transport the http.Flusher of the writer below the
// middlewares' wrappers.
type flusher struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (f flusher) Flush()                      { _ = f.rc.Flush() }
func (f flusher) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// eventRequest gives each response of a live transport (each event of a
// subscription, each query or mutation sent over a WebSocket) a request of
// its own: its loaders and its collector of upstream calls, so what it
// links is fetched afresh, batched, and counted against MaxUpstreamCalls
// per response, never cached across the connection's operations. A query or
// mutation has the deadline RequestTimeout and holds its cost units in admit
// while it executes, as over HTTP (a subscription's events are admitted one
// by one: node).
func (o *Options) eventRequest(admit *admission.Controller) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		if ctx.Value(liveKey{}) == nil {
			return next(ctx)
		}
		if slot, ok := ctx.Value(liveSlotKey{}).(*liveSlot); ok && slot.sub != nil {
			slot.sub.Pump()
		}
		prev := requestFrom(ctx)
		req := &request{Context: ctx, hasCredentials: prev.hasCredentials, trace: prev.trace}
		req.collector = calls.Collector{Max: o.MaxUpstreamCalls, Keep: prev.trace, Part: callPart}
		req.calls = &req.collector
		req.loaders = o.requestLoaders(&req.batching)
		if oc := graphql.GetOperationContext(ctx); oc.Operation != nil && oc.Operation.Operation != ast.Subscription && o.RequestTimeout > 0 {
			var cancel context.CancelFunc
			req.Context, cancel = context.WithTimeout(req.Context, o.RequestTimeout)
			defer cancel()
		}
		if oc := graphql.GetOperationContext(ctx); admit != nil && oc.Operation != nil && oc.Operation.Operation != ast.Subscription {
			if st := limits.Of(oc); st != nil {
				release, err := admit.Hold(req, restclient.IdentityFromContext(ctx), st.Cost)
				if err != nil {
					return &graphql.Response{Errors: gqlerror.List{err}}
				}
				req.release = release
			}
		}
		resp := next(eventRootField(req))
		if req.release != nil {
			req.release()
		}
		return resp
	}
}

// refuseSubscriptionOverHTTP answers a subscription that did not come over
// a live transport with BAD_REQUEST; one that did gets its liveSlot.
func refuseSubscriptionOverHTTP(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation != nil && oc.Operation.Operation == ast.Mutation && ctx.Value(eventSourceKey{}) != nil {
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{{
			Message:    "a mutation is not sent by GET: POST it",
			Extensions: map[string]any{"code": errcode.BadRequest},
		}}})
	}
	if oc.Operation != nil && oc.Operation.Operation == ast.Subscription && ctx.Value(liveKey{}) != nil {
		return next(context.WithValue(ctx, liveSlotKey{}, &liveSlot{trace: requestFrom(ctx).trace}))
	}
	if oc.Operation != nil && oc.Operation.Operation == ast.Subscription && ctx.Value(liveKey{}) == nil {
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{{
			Message:    "a subscription is served over WebSocket (graphql-transport-ws) or SSE (POST with Accept: text/event-stream), not in a plain HTTP response",
			Extensions: map[string]any{"code": errcode.BadRequest},
		}}})
	}
	return next(ctx)
}
