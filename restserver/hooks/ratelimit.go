package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/workspacenet/facade/internal/base/credkey"
)

// # Rate limit
//
// The real API allows 10 requests per second per client and answers 429
// above it. SetRateLimit gives the local service that constraint: per client
// (the Authorization header's value in its normalised spelling,
// internal/base/credkey: "bearer  tok" and "Bearer tok" are one client, as they
// are to the authentication), a request arriving when the client
// already had PerSecond requests accepted in the last second is answered
// 429 {"message", "type": "rate_limited"} with Retry-After in whole seconds
// (rounded up; omitted with OmitRetryAfter, as the real API may), and never
// reaches its handler. Off (PerSecond 0) by default.
//
// Whatever the limit, the hooks record for each client the most requests it
// sent in any one second (accepted or not): MaxPerSecond, and "perSecond"
// in GET /_stats, keyed by a short hash of the normalised Authorization
// value, never the value itself.

// RateLimit configures the local service's per-client rate limit.
type RateLimit struct {
	PerSecond      int  // requests accepted per client in any one second; 0 = off
	OmitRetryAfter bool // answer 429 without Retry-After
}

// window is the one second the limit and the counter look at.
const window = time.Second

// clientLog is what the hooks remember of one client's recent requests.
type clientLog struct {
	received []time.Time // in the last second, accepted or not
	accepted []time.Time // in the last second
	max      int         // most received in any one second
}

// rates holds the per-client logs. Guarded by its own mutex: the counters
// of every request pass through it.
type rates struct {
	mu      sync.Mutex
	limit   RateLimit
	clients map[string]*clientLog
	refused int64
	now     func() time.Time
}

// SetRateLimit sets (or, with PerSecond 0, removes) the per-client limit.
func (h *Hooks) SetRateLimit(l RateLimit) {
	h.rates.mu.Lock()
	defer h.rates.mu.Unlock()
	h.rates.limit = l
}

// MaxPerSecond returns, per client (a short hash of its Authorization), the
// most requests it sent in any one second since the last Reset.
func (h *Hooks) MaxPerSecond() map[string]int {
	h.rates.mu.Lock()
	defer h.rates.mu.Unlock()
	return h.rates.maxLocked()
}

// RateLimited returns the requests refused with 429 by the rate limit since
// the last Reset.
func (h *Hooks) RateLimited() int64 {
	h.rates.mu.Lock()
	defer h.rates.mu.Unlock()
	return h.rates.refused
}

func (r *rates) maxLocked() map[string]int {
	out := make(map[string]int, len(r.clients))
	for id, c := range r.clients {
		out[id] = c.max
	}
	return out
}

func (r *rates) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.clients)
	r.refused = 0
}

// clientKey names a client without revealing its credentials: every
// spelling of one Authorization value has one key.
func clientKey(authorization string) string {
	sum := sha256.Sum256([]byte(credkey.Authorization(authorization)))
	return hex.EncodeToString(sum[:6])
}

// admit records a request of the client of r and reports how long it must
// wait when the limit refuses it (0: accepted).
func (r *rates) admit(req *http.Request) (retryAfter time.Duration, refused bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if r.clients == nil {
		r.clients = map[string]*clientLog{}
	}
	key := clientKey(req.Header.Get("Authorization"))
	c := r.clients[key]
	if c == nil {
		c = &clientLog{}
		r.clients[key] = c
	}
	since := now.Add(-window)
	c.received = append(dropBefore(c.received, since), now)
	c.max = max(c.max, len(c.received))
	c.accepted = dropBefore(c.accepted, since)
	if n := r.limit.PerSecond; n > 0 && len(c.accepted) >= n {
		r.refused++
		// The oldest accepted request leaves the window at oldest+1s.
		return c.accepted[len(c.accepted)-n].Add(window).Sub(now), true
	}
	c.accepted = append(c.accepted, now)
	return 0, false
}

// dropBefore removes the times not after since (the log is in order).
func dropBefore(ts []time.Time, since time.Time) []time.Time {
	i := 0
	for i < len(ts) && !ts[i].After(since) {
		i++
	}
	return append(ts[:0], ts[i:]...)
}

// refuse answers a rate-limited request.
func (r *rates) refuse(w http.ResponseWriter, retryAfter time.Duration) {
	r.mu.Lock()
	l := r.limit
	r.mu.Unlock()
	if !l.OmitRetryAfter {
		secs := int64((retryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
	}
	writeError(w, http.StatusTooManyRequests, "rate_limited", "rate limit exceeded: at most "+strconv.Itoa(l.PerSecond)+" requests per second per client")
}
