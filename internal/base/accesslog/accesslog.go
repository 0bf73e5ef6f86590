// Package accesslog is the facade's HTTP middleware for every route: it gives
// each request an id (X-Request-Id, echoed or made) and writes one JSON log
// line when the request ends. Handlers add what they know to the request's
// Entry (From); records logged with the request's context carry its id
// (Handler). The line names no header value: credentials, tokens and cookies
// never reach the log.
package accesslog

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/workspacenet/facade/internal/base/ctxval"
	"github.com/workspacenet/facade/internal/base/httpx"
)

// RequestIDHeader carries the request id, in and out.
const RequestIDHeader = "X-Request-Id"

// Message is the message of the access log line.
const Message = "http request"

// Entry is what one request's log line says beyond method, path, status and
// duration. Safe for concurrent use.
type Entry struct {
	RequestID string

	mu            sync.Mutex
	operation     string
	codes         []string
	upstreamCalls int
	cacheHits     int
	budgetWait    time.Duration
	cost, depth   int
	measured      bool
}

// SetOperation records the GraphQL operation name.
func (e *Entry) SetOperation(name string) { e.mu.Lock(); e.operation = name; e.mu.Unlock() }

// AddCodes records error codes (extensions.code) the response carried.
func (e *Entry) AddCodes(codes ...string) {
	e.mu.Lock()
	e.codes = append(e.codes, codes...)
	e.mu.Unlock()
}

// Codes returns the error codes recorded so far, in order.
func (e *Entry) Codes() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.codes)
}

// SetUpstreamCalls records how many upstream calls the request made, how
// many the response cache answered instead, and how long the calls waited in
// all for the upstream rate budget.
func (e *Entry) SetUpstreamCalls(n, cacheHits int, budgetWait time.Duration) {
	e.mu.Lock()
	e.upstreamCalls, e.cacheHits, e.budgetWait = n, cacheHits, budgetWait
	e.mu.Unlock()
}

// SetCost records the operation's measured cost and depth.
func (e *Entry) SetCost(cost, depth int) {
	e.mu.Lock()
	e.cost, e.depth, e.measured = cost, depth, true
	e.mu.Unlock()
}

type ctxKey struct{}

// From returns the request's entry; a context the middleware did not make
// gets a throwaway one, so handlers need no nil checks.
func From(ctx context.Context) *Entry {
	if e, ok := ctx.Value(ctxKey{}).(*Entry); ok {
		return e
	}
	return &Entry{}
}

// Middleware wraps next: request id in and out, and one line on log per
// request.
func Middleware(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		// The entry, the status writer and the context carrying the entry
		// in one allocation.
		rec := &struct {
			e   Entry
			sw  httpx.StatusWriter
			ctx ctxval.Context[ctxKey, *Entry]
		}{e: Entry{RequestID: requestID(r)}, sw: httpx.StatusWriter{ResponseWriter: w}}
		e, sw := &rec.e, &rec.sw
		w.Header().Set(RequestIDHeader, e.RequestID)
		rec.ctx = ctxval.Context[ctxKey, *Entry]{Context: r.Context(), V: e}
		ctx := context.Context(&rec.ctx)
		defer func() {
			e.write(ctx, log, r, status(sw), time.Since(start))
			// The context may outlive the request (a hijacked connection
			// served on after the handler returned): it lets go of the
			// response writer, and with it the HTTP connection's buffers.
			sw.ResponseWriter = nil
		}()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}

func (e *Entry) write(ctx context.Context, log *slog.Logger, r *http.Request, status int, d time.Duration) {
	if !log.Enabled(ctx, slog.LevelInfo) {
		return // nothing to build the line for
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	attrs := []slog.Attr{
		slog.String("request_id", e.RequestID),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
	}
	if e.operation != "" {
		attrs = append(attrs, slog.String("operation", e.operation))
	}
	if e.upstreamCalls > 0 || e.cacheHits > 0 {
		attrs = append(attrs, slog.Int("upstream_calls", e.upstreamCalls), slog.Int("cache_hits", e.cacheHits),
			slog.Float64("budget_wait_ms", float64(e.budgetWait.Microseconds())/1000))
	}
	if len(e.codes) > 0 {
		codes := slices.Clone(e.codes)
		slices.Sort(codes)
		attrs = append(attrs, slog.Any("error_codes", slices.Compact(codes)))
	}
	if e.measured {
		attrs = append(attrs, slog.Int("cost", e.cost), slog.Int("depth", e.depth))
	}
	log.LogAttrs(ctx, slog.LevelInfo, Message, attrs...)
}

// requestID returns the incoming X-Request-Id when it is sane (1 to 128
// characters of letters, digits and -_.:), else a new random id.
func requestID(r *http.Request) string {
	if id := r.Header.Get(RequestIDHeader); saneID(id) {
		return id
	}
	// 128 random bits in hex. An id needs to be unique, not secret:
	// math/rand/v2's generator (ChaCha8, seeded from the OS) draws them
	// without a system call, and the string is the only allocation.
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	var out [32]byte
	hex.Encode(out[:], b[:])
	return string(out[:])
}

func saneID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range []byte(id) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// status is the status sw's handler answered (200 when it wrote nothing).
func status(sw *httpx.StatusWriter) int {
	if sw.Code == 0 {
		return http.StatusOK
	}
	return sw.Code
}

// Handler wraps h so that every record logged with a request's context,
// except the access line itself, carries the request id (resolver errors and
// panics name the request they belong to).
func Handler(h slog.Handler) slog.Handler { return idHandler{h} }

type idHandler struct{ slog.Handler }

func (h idHandler) Handle(ctx context.Context, rec slog.Record) error {
	if e, ok := ctx.Value(ctxKey{}).(*Entry); ok && rec.Message != Message {
		rec.AddAttrs(slog.String("request_id", e.RequestID))
	}
	return h.Handler.Handle(ctx, rec)
}

func (h idHandler) WithAttrs(as []slog.Attr) slog.Handler { return idHandler{h.Handler.WithAttrs(as)} }

func (h idHandler) WithGroup(name string) slog.Handler { return idHandler{h.Handler.WithGroup(name)} }
