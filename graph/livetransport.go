package graph

import (
	"bytes"
	"context"
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
	"github.com/workspacenet/facade/internal/accesslog"
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
	// liveInitTimeout bounds the wait for connection_init.
	liveInitTimeout = 10 * time.Second
)

// liveKey marks the context of an operation received over a live transport.
type liveKey struct{}

// isUpgrade reports whether r asks for a WebSocket.
func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// isEventStream reports whether r is a graphql-sse request (distinct
// connections mode): a POST that accepts text/event-stream.
func isEventStream(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// isSubscriptionStream reports whether r is a graphql-sse request of a
// subscription: a query or mutation asking for text/event-stream is
// incremental delivery (@defer, @stream) over SSE, served by the
// GraphQL-over-HTTP transport. It reads at most maxBody+1 bytes of the body
// (0: no bound) and gives r's body back whole; a body it cannot read as one
// operation whose query parses within maxQuery bytes is not a subscription
// (the GraphQL-over-HTTP transport then answers it with its error).
func isSubscriptionStream(r *http.Request, maxBody int64, maxQuery int) bool {
	if !isEventStream(r) {
		return false
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
		return false
	}
	p, ref := guard.DecodeBody(body)
	if ref != nil || p.Query == "" || (maxQuery > 0 && len(p.Query) > maxQuery) {
		return false
	}
	doc, gerr := parser.ParseQuery(&ast.Source{Input: p.Query})
	if gerr != nil {
		return false
	}
	if op := doc.Operations.ForName(p.OperationName); op != nil {
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
		Implementation:        transport.CoderWebsocketImplementation{AcceptOptions: coderws.AcceptOptions{InsecureSkipVerify: true}},
		KeepAlivePingInterval: o.LiveKeepAlive,
		PingPongInterval:      o.LiveKeepAlive,
		MissingPongOk:         true,
		InitTimeout:           liveInitTimeout,
		InitFunc: func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			creds := credentialsOfInit(p)
			if creds == nil {
				creds = upgradeCredentials(ctx)
			}
			if creds != nil {
				if len(creds.Authorization) > guard.MaxCredentialHeaderBytes || len(creds.NetworkID) > guard.MaxCredentialHeaderBytes {
					return transport.WithWebsocketCloseCode(ctx, 4400), nil, &gqlerror.Error{Message: "the connection_init credentials are longer than 4 KiB; no credentials are that long", Extensions: map[string]any{"code": errcode.BadRequest}}
				}
				if err := creds.Check(); err != nil {
					return transport.WithWebsocketCloseCode(ctx, 4400), nil, &gqlerror.Error{Message: "the connection_init credentials cannot be right: " + err.Error(), Extensions: map[string]any{"code": errcode.BadRequest}}
				}
			}
			ctx, _ = o.newRequest(ctx, creds, false, false, paceHooks)
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

// credentialsOfInit returns the credentials of a connection_init payload:
// its Authorization and service-network-id, whatever their case, at the top
// level or in "headers" (nil without Authorization).
func credentialsOfInit(p transport.InitPayload) *restclient.Credentials {
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
	return credentialsOf(h)
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
	defer conns.Add(-1)
	// A live connection outlives the server's read and write timeouts.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	ctx = context.WithValue(ctx, liveKey{}, true)
	ctx = context.WithValue(ctx, liveConnKey{}, &liveConn{max: o.LiveMaxPerConnection})
	if isUpgrade(r) {
		ctx = context.WithValue(ctx, upgradeCredentialsKey{}, credentialsOf(r.Header))
	} else {
		ctx, _ = o.newRequest(ctx, credentialsOf(r.Header), false, false, paceHooks)
		w = flusher{w, rc}
	}
	srv.ServeHTTP(w, r.WithContext(ctx))
}

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
		prev := requestFrom(ctx)
		req := &request{Context: ctx, hasCredentials: prev.hasCredentials}
		req.collector = calls.Collector{Max: o.MaxUpstreamCalls}
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
		resp := next(req)
		if req.release != nil {
			req.release()
		}
		return resp
	}
}

// refuseSubscriptionOverHTTP answers a subscription that did not come over
// a live transport with BAD_REQUEST.
func refuseSubscriptionOverHTTP(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation != nil && oc.Operation.Operation == ast.Subscription && ctx.Value(liveKey{}) == nil {
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{{
			Message:    "a subscription is served over WebSocket (graphql-transport-ws) or SSE (POST with Accept: text/event-stream), not in a plain HTTP response",
			Extensions: map[string]any{"code": errcode.BadRequest},
		}}})
	}
	return next(ctx)
}
