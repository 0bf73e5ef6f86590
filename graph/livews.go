package graph

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
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

// liveWebsocket is gqlgen's coder/websocket implementation with small
// buffers, whose connections are kept alive by ka.
type liveWebsocket struct {
	inner transport.CoderWebsocketImplementation
	ka    *sharedKeepAlive
}

func (l liveWebsocket) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	conn, err := l.inner.Accept(smallBuffers{w}, r, opts)
	if err != nil {
		return conn, err
	}
	if accepted, ok := r.Context().Value(acceptedKey{}).(chan struct{}); ok {
		close(accepted) // w is not used again
	}
	if l.ka == nil {
		return conn, nil
	}
	// The connection is served for as long as the request's handler runs.
	l.ka.add(r.Context(), conn)
	return conn, nil
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
