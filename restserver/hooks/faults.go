package hooks

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"time"
)

// truncatedBody is the whole document of a "truncated" fault; only its first
// half is sent.
const truncatedBody = `{"message":"this response was cut short by an injected fault","type":"truncated",` +
	`"padding":"0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz"}` + "\n"

// malformedBody is the body of a "malformed" fault: JSON-looking, not JSON.
const malformedBody = `{"message": "injected malformed body", "type": internal, 'id': [1, 2,}` + "\n"

// injectFault answers r with fault f.
func injectFault(w http.ResponseWriter, r *http.Request, f Fault) {
	switch f.Kind {
	case Fault500:
		w.Header().Set(FaultHeader, string(f.Kind))
		writeError(w, http.StatusInternalServerError, "internal", "injected fault: internal error")
	case Fault503:
		w.Header().Set(FaultHeader, string(f.Kind))
		writeError(w, http.StatusServiceUnavailable, "unavailable", "injected fault: service unavailable")
	case Fault429:
		w.Header().Set(FaultHeader, string(f.Kind))
		if f.RetryAfter > 0 {
			secs := (f.RetryAfter + time.Second - 1) / time.Second
			w.Header().Set("Retry-After", strconv.FormatInt(int64(secs), 10))
		}
		writeError(w, http.StatusTooManyRequests, "rate_limited", "injected fault: too many requests")
	case FaultHang:
		<-r.Context().Done()
	case FaultTruncated:
		w.Header().Set(FaultHeader, string(f.Kind))
		w.Header().Set("Content-Type", "application/json")
		// Declaring the full length and sending half makes the server close
		// the connection after the handler: the client sees an unexpected EOF.
		w.Header().Set("Content-Length", strconv.Itoa(len(truncatedBody)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(truncatedBody[:len(truncatedBody)/2]))
	case FaultMalformed:
		w.Header().Set(FaultHeader, string(f.Kind))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(malformedBody)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(malformedBody))
	case FaultReset:
		resetConn(w)
	default:
		writeError(w, http.StatusInternalServerError, "internal", "unknown injected fault "+strconv.Quote(string(f.Kind)))
	}
}

// resetConn closes the client connection with a TCP reset. Where the
// connection cannot be hijacked (HTTP/2), the handler aborts, which resets
// the stream.
func resetConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	for {
		nc, ok := conn.(interface{ NetConn() net.Conn }) // *tls.Conn
		if !ok {
			break
		}
		conn = nc.NetConn()
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // close sends RST instead of FIN
	}
	_ = conn.Close()
}

// writeError writes the service's error body {"message", "type"}.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	b, _ := json.Marshal(struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	}{msg, typ})
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
