// Package livetransport serves GraphQL on /graphql over WebSocket
// (graphql-transport-ws and graphql-ws) and SSE (graphql-sse's distinct
// connections mode) for the endpoint of package graph, with the bounds of
// live connections (conns.go) and their keep-alive (ws.go). What it needs
// from the endpoint is one interface, Endpoint; the endpoint mounts it
// with New, Transports.Register and Transports.ServeUpgrade.
package livetransport

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"

	"github.com/workspacenet/facade/graph/guard"
	"github.com/workspacenet/facade/graph/overhttp"
	"github.com/workspacenet/facade/internal/base/accesslog"
	"github.com/workspacenet/facade/restclient"
)

// Endpoint is what the live transports need from the GraphQL endpoint that
// mounts them.
type Endpoint interface {
	// NewRequest returns ctx carrying a new request of the endpoint, made
	// with creds (nil: the server's credentials, if any), asking for the
	// upstream call report when trace: a live connection's, whose
	// operations run under it.
	NewRequest(ctx context.Context, creds *restclient.Credentials, trace bool) context.Context
	// HasCredentials reports whether the request of ctx has credentials.
	HasCredentials(ctx context.Context) bool
	// CheckQuery refuses an operation's parameters before they are parsed,
	// as over HTTP (the query's size).
	CheckQuery(p *guard.Params) *guard.Refusal
	// NewOperation tells the request of ctx (a WebSocket's) that the next
	// operation of its connection begins: nothing of the previous one (the
	// persisted query it registered) carries over.
	NewOperation(ctx context.Context)
}

// Options configure the live transports of one endpoint; 0 turns a bound
// off (graph.Options documents each, under the same name).
type Options struct {
	// Endpoint is the endpoint that mounts the transports. Required.
	Endpoint Endpoint
	// Client proves a connection's credentials (Client.Authenticate).
	Client *restclient.Client
	// Logger receives a WebSocket's panic.
	Logger *slog.Logger
	// ServerCredentials, when set, serve a connection that carries none.
	ServerCredentials *restclient.Credentials
	// Restart, when set, ends the connections when it is closed.
	Restart *Restart

	UpstreamTrace         bool
	DisableCSRFPrevention bool
	MaxBodyBytes          int64
	RequestTimeout        time.Duration
	ResponseWriteTimeout  time.Duration

	LiveMaxConnections              int
	LiveMaxConnectionsPerCredential int
	LiveMaxInitPerAddress           int
	LiveMaxPerConnection            int
	LiveIdleTimeout                 time.Duration
	LiveKeepAlive                   time.Duration
	LiveInitTimeout                 time.Duration
	TrustedProxies                  []netip.Prefix
	CheckOrigin                     func(origin string) bool
}

// Transports are the live transports of one endpoint and their
// connections.
type Transports struct {
	o     *Options
	conns *liveConns
}

// New returns the live transports o configures.
func New(o Options) *Transports {
	conns := newLiveConns(&o)
	o.Restart.add(conns)
	return &Transports{o: &o, conns: conns}
}

// Register adds the WebSocket and SSE transports to srv, before the
// GraphQL-over-HTTP transport (which takes every request), and their
// operation parameter mutator, which must come first (trusted: only
// trusted documents are executed).
func (t *Transports) Register(srv *handler.Server, trusted bool) {
	t.o.liveTransports(srv, t.conns)
	srv.Use(liveParams{trusted: trusted, endpoint: t.o.Endpoint})
}

// ServeUpgrade serves r, a WebSocket upgrade (IsUpgrade), with srv.
func (t *Transports) ServeUpgrade(w http.ResponseWriter, r *http.Request, srv *handler.Server) {
	t.o.serveUpgrade(w, r, srv, t.conns)
}

// IsUpgrade reports whether r asks for a WebSocket.
func IsUpgrade(r *http.Request) bool { return isUpgrade(r) }

// IsEventStream reports whether r asks for text/event-stream (graphql-sse,
// or incremental delivery over SSE).
func IsEventStream(r *http.Request) bool { return isEventStream(r) }

// WithEventStream returns ctx marking its request, which asks for
// text/event-stream, for the SSE transport, with its decoded and checked
// parameters p.
func WithEventStream(ctx context.Context, p *guard.Params) context.Context {
	return context.WithValue(ctx, eventStreamKey{}, p)
}

// IsLive reports whether ctx is the context of an operation received over
// a live transport.
func IsLive(ctx context.Context) bool { return ctx.Value(liveKey{}) != nil }

// Operations counts the operations of a live connection: its idle timer
// runs while it has none (graphql.OperationMiddleware).
func Operations(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if c := connFrom(ctx); c.reg != nil {
		c.reg.begin(c)
		context.AfterFunc(ctx, func() { c.reg.finish(c) })
	}
	return next(ctx)
}

// Conn is the live connection of an operation: its bound of subscriptions.
type Conn struct{ c *liveConn }

// ConnOf returns the live connection of ctx (one of no bound outside any).
func ConnOf(ctx context.Context) Conn { return Conn{connFrom(ctx)} }

// Take takes a subscription slot of the connection; false when it is at
// its bound (Max).
func (c Conn) Take() bool { return c.c.take() }

// Give gives back a slot Take took.
func (c Conn) Give() { c.c.give() }

// Max is the connection's bound of subscriptions; 0: none.
func (c Conn) Max() int { return c.c.max }

// refuse answers a request refused before GraphQL in media type mt.
func refuse(w http.ResponseWriter, entry *accesslog.Entry, mt string, ref *guard.Refusal) {
	ref.Answer(w, entry, overhttp.ContentType(mt))
}
