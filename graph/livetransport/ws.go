package livetransport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	gqlerrcode "github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/guard"
	"github.com/workspacenet/facade/graph/livequery"
)

// An idle WebSocket subscriber costs what its connection holds for as long
// as it is open: this file keeps that small. The connection's buffers are
// liveBufferBytes each instead of net/http's 4 KB, and its keep-alive
// messages come from one goroutine and one ticker for every connection
// (sharedKeepAlive) instead of gqlgen's goroutine and ticker per
// connection.

// liveBufferBytes is the size of a WebSocket's read and write buffers: a
// larger message is read or written in several system calls.
const liveBufferBytes = 1024

// liveSendBuffer is a WebSocket's kernel send buffer (SO_SNDBUF; Linux
// doubles it for its own bookkeeping).
const liveSendBuffer = 32 << 10

// liveWebsocket is gqlgen's coder/websocket implementation with small
// buffers, whose connections are kept alive by ka and read through wsConn.
type liveWebsocket struct {
	inner transport.CoderWebsocketImplementation
	ka    *sharedKeepAlive
	o     *Options
}

func (l liveWebsocket) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	inner, err := l.inner.Accept(smallBuffers{w}, r, opts)
	if err != nil {
		return inner, err
	}
	if accepted, ok := r.Context().Value(acceptedKey{}).(chan struct{}); ok {
		close(accepted) // w is not used again
	}
	conn := &wsConn{WebsocketConn: inner, o: l.o, live: connFrom(r.Context())}
	if c, ok := r.Context().Value(wsEndKey{}).(*wsEnd); ok {
		c.set(conn)
	}
	if l.ka != nil {
		// Kept alive from the server's first message (connection_ack) for as
		// long as the request's handler runs: never a keep-alive before the
		// ack, nor to a connection still proving its credentials.
		ctx := r.Context()
		conn.startKeepAlive = func() { l.ka.add(ctx, conn) }
	}
	return conn, nil
}

// initReadLimit bounds the messages of a WebSocket until its first one
// (connection_init, whose payload gqlgen keeps for the connection's life):
// two credentials of guard.MaxCredentialHeaderBytes and room for the rest.
const initReadLimit = 16 << 10

// wsConn is a live WebSocket as gqlgen reads it: its first message within
// initReadLimit, the others within the read limit gqlgen sets
// (-max-body-bytes: larger, the connection is closed 1009), and each
// operation (subscribe, or start in graphql-ws) checked before gqlgen
// decodes it as an HTTP request's body is: one JSON object of the right
// members (guard.DecodeBody), a query within -max-query-bytes
// (Endpoint.CheckQuery). A refused operation reaches gqlgen as an empty one,
// which liveParams refuses with the refusal's error first thing, so that
// gqlgen answers it in the subprotocol's terms and nothing parses it. A
// documentId (trusted documents) is handed to liveParams the same way.
type wsConn struct {
	transport.WebsocketConn
	o    *Options
	live *liveConn

	limit  int64 // the read limit gqlgen set; 0: none yet
	inited bool  // the first message was read

	startKeepAlive func()    // nil: no keep-alive
	keepAlive      sync.Once // startKeepAlive after the first message written
}

func (c *wsConn) SetReadLimit(n int64) {
	c.limit = n
	if l, ok := c.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		if !c.inited && (n <= 0 || n > initReadLimit) {
			n = initReadLimit
		}
		l.SetReadLimit(n)
	}
}

// WriteJSON writes v, a live query's result in the graphql-live-query
// convention's shape (livequery.LiftFrame).
func (c *wsConn) WriteJSON(v any) error {
	b, err := livequery.LiftFrame(v)
	if err != nil {
		return err
	}
	err = c.WebsocketConn.WriteJSON(b)
	if c.startKeepAlive != nil {
		c.keepAlive.Do(c.startKeepAlive)
	}
	return err
}

func (c *wsConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

func (c *wsConn) NextReader() (int, io.Reader, error) {
	t, r, err := c.WebsocketConn.NextReader()
	if err != nil {
		return t, r, err
	}
	if !c.inited {
		c.inited = true
		if c.limit != 0 {
			c.SetReadLimit(c.limit)
		}
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return t, nil, err
	}
	return t, bytes.NewReader(c.check(data)), nil
}

// wsMessage is a message of either subprotocol, its payload undecoded.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// check returns the message gqlgen reads in place of data: data itself,
// or, for an operation refused, the same operation with an empty payload
// (its refusal left for liveParams).
func (c *wsConn) check(data []byte) []byte {
	var m wsMessage
	if json.Unmarshal(data, &m) != nil || (m.Type != "subscribe" && m.Type != "start") {
		return data
	}
	p, ref := guard.DecodeBody(m.Payload)
	if ref == nil {
		ref = c.o.Endpoint.CheckQuery(p)
	}
	n := &c.live.next
	n.Lock()
	n.refusal, n.documentID = nil, ""
	if ref != nil {
		n.refusal = refusalError(ref)
	} else {
		n.documentID = p.DocumentID
	}
	n.Unlock()
	if ref == nil {
		return data
	}
	m.Payload = json.RawMessage(`{}`)
	out, _ := json.Marshal(m)
	return out
}

// liveParams is the first operation parameter mutator: an operation read
// from a WebSocket (wsConn) is refused with its refusal, or given its
// documentId (as extensions.persistedQuery.sha256Hash, which the trusted
// documents extension reads when the request carries no documentId of its
// own; with trusted documents only, as over HTTP), and the automatic
// persisted query the connection's previous operation registered is
// forgotten (each operation registers its own).
type liveParams struct {
	trusted  bool
	endpoint Endpoint
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = liveParams{}

func (liveParams) ExtensionName() string                   { return "LiveParams" }
func (liveParams) Validate(graphql.ExecutableSchema) error { return nil }

func (x liveParams) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	c, ok := ctx.Value(liveConnKey{}).(*liveConn)
	if !ok || !c.ws {
		return nil
	}
	c.next.Lock()
	refusal, doc := c.next.refusal, c.next.documentID
	c.next.refusal, c.next.documentID = nil, ""
	c.next.Unlock()
	if refusal != nil {
		return refusal
	}
	x.endpoint.NewOperation(ctx)
	if doc != "" && x.trusted {
		ext := make(map[string]any, len(p.Extensions)+1)
		maps.Copy(ext, p.Extensions)
		ext["persistedQuery"] = map[string]any{"version": 1, "sha256Hash": doc}
		p.Extensions = ext
	}
	return nil
}

func init() {
	// A request refused before parsing is an error message over a
	// WebSocket (as QUERY_TOO_COMPLEX and parse errors), not a result.
	for _, code := range []string{errcode.QueryTooLarge, errcode.BadRequest} {
		gqlerrcode.RegisterErrorType(code, gqlerrcode.KindProtocol)
	}
}

// wsEnd ends a WebSocket: its close frame (once the connection is
// accepted) and the cancellation of its context.
type wsEnd struct {
	mu     sync.Mutex
	conn   *wsConn
	cancel context.CancelFunc
}

type wsEndKey struct{}

func (e *wsEnd) set(c *wsConn) {
	e.mu.Lock()
	e.conn = c
	e.mu.Unlock()
}

func (e *wsEnd) end(code int, reason string) {
	e.mu.Lock()
	c := e.conn
	e.mu.Unlock()
	if c != nil {
		_ = c.WriteClose(code, reason)
	}
	e.cancel()
}

// smallBuffers hands the WebSocket library the hijacked connection with
// buffers of liveBufferBytes; what the server had already read is kept.
type smallBuffers struct{ http.ResponseWriter }

func (s smallBuffers) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Writer.Flush(); err != nil {
		conn.Close()
		return nil, nil, err
	}
	// The kernel's send buffer of the connection, fixed: a client that
	// does not read holds at most that much of the pod's memory in its
	// socket (autotuning would grow it to megabytes), and its events wait,
	// coalesced and bounded, in its subscriptions' queues.
	if tc, ok := conn.(interface{ SetWriteBuffer(int) error }); ok {
		_ = tc.SetWriteBuffer(liveSendBuffer)
	}
	// The WebSocket library reads on from conn after what the reader has
	// buffered: the bytes the server read ahead go into the new reader's
	// buffer.
	rd := bufio.NewReaderSize(conn, liveBufferBytes)
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		rd.Reset(io.MultiReader(bytes.NewReader(bytes.Clone(b)), conn))
		if _, err := rd.Peek(n); err != nil {
			conn.Close()
			return nil, nil, err
		}
	}
	return conn, bufio.NewReadWriter(rd, bufio.NewWriterSize(conn, liveBufferBytes)), nil
}

// sharedKeepAlive sends every open WebSocket its subprotocol's keep-alive
// message each interval (graphql-transport-ws "ping", graphql-ws "ka"),
// from one goroutine that runs while there are connections. A connection
// whose previous message is not written yet (a client that does not read)
// is skipped: it holds at most one writer.
type sharedKeepAlive struct {
	every time.Duration

	mu      sync.Mutex
	conns   map[*kaConn]struct{}
	running bool
}

type kaConn struct {
	conn transport.WebsocketConn
	busy atomic.Bool
}

func newSharedKeepAlive(every time.Duration) *sharedKeepAlive {
	if every <= 0 {
		return nil
	}
	return &sharedKeepAlive{every: every, conns: map[*kaConn]struct{}{}}
}

// add keeps conn alive until ctx ends.
func (k *sharedKeepAlive) add(ctx context.Context, conn transport.WebsocketConn) {
	c := &kaConn{conn: conn}
	k.mu.Lock()
	k.conns[c] = struct{}{}
	if !k.running {
		k.running = true
		go k.run()
	}
	k.mu.Unlock()
	context.AfterFunc(ctx, func() {
		k.mu.Lock()
		delete(k.conns, c)
		k.mu.Unlock()
	})
}

var (
	pingMessage = map[string]string{"type": "ping"}
	kaMessage   = map[string]string{"type": "ka"}
)

func (k *sharedKeepAlive) run() {
	t := time.NewTicker(k.every)
	defer t.Stop()
	var batch []*kaConn
	for range t.C {
		k.mu.Lock()
		if len(k.conns) == 0 {
			k.running = false
			k.mu.Unlock()
			return
		}
		batch = batch[:0]
		for c := range k.conns {
			batch = append(batch, c)
		}
		k.mu.Unlock()
		for _, c := range batch {
			if !c.busy.CompareAndSwap(false, true) {
				continue
			}
			go func() {
				defer c.busy.Store(false)
				msg := pingMessage
				if c.conn.Subprotocol() != "graphql-transport-ws" {
					msg = kaMessage
				}
				_ = c.conn.WriteJSON(msg)
			}()
		}
		clear(batch)
	}
}
