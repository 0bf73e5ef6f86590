package hooks

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// fakeNow is a clock the test moves by hand.
type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeNow) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeNow) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func rateLimited(t *testing.T, l RateLimit) (*Hooks, *fakeNow, http.Handler) {
	h := New()
	clock := &fakeNow{t: time.Unix(1_700_000_000, 0)}
	h.rates.now = clock.now
	h.SetRateLimit(l)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	return h, clock, h.Wrap(route, next)
}

func send(handler http.Handler, auth string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/resources/v1/r1", nil)
	req.Header.Set("Authorization", auth)
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	return rec
}

func TestRateLimitPerClient(t *testing.T) {
	h, clock, handler := rateLimited(t, RateLimit{PerSecond: 3})
	for i := range 3 {
		if rec := send(handler, "Bearer a"); rec.Code != 200 {
			t.Fatalf("request %d: %d", i, rec.Code)
		}
		clock.add(100 * time.Millisecond)
	}
	// The fourth within the second: 429, until the first leaves the window.
	rec := send(handler, "Bearer a")
	var body struct{ Message, Type string }
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	if rec.Code != http.StatusTooManyRequests || body.Type != "rate_limited" || body.Message == "" || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("fourth: %d %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	// Another client is not affected.
	if rec := send(handler, "Bearer b"); rec.Code != 200 {
		t.Fatalf("another client: %d", rec.Code)
	}
	clock.add(700 * time.Millisecond) // the first request is now a second old
	if rec := send(handler, "Bearer a"); rec.Code != 200 {
		t.Fatalf("after the window moved: %d", rec.Code)
	}
	if h.RateLimited() != 1 {
		t.Errorf("refused %d, want 1", h.RateLimited())
	}
	// Received in one second: a sent 4 (one refused) by 300ms; then at
	// 1000ms the window (0, 1000] holds 100..300 and 1000: 4.
	perSecond := h.MaxPerSecond()
	if perSecond[clientKey("Bearer a")] != 4 || perSecond[clientKey("Bearer b")] != 1 || len(perSecond) != 2 {
		t.Errorf("MaxPerSecond = %v", perSecond)
	}
	h.Reset()
	if len(h.MaxPerSecond()) != 0 || h.RateLimited() != 0 {
		t.Error("Reset kept the rate counters")
	}
}

func TestRateLimitWithoutRetryAfter(t *testing.T) {
	_, _, handler := rateLimited(t, RateLimit{PerSecond: 1, OmitRetryAfter: true})
	send(handler, "Bearer a")
	rec := send(handler, "Bearer a")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "" {
		t.Fatalf("%d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
}

func TestNoRateLimitStillCountsPerSecond(t *testing.T) {
	h, _, handler := rateLimited(t, RateLimit{})
	for range 25 {
		if rec := send(handler, "Bearer a"); rec.Code != 200 {
			t.Fatalf("%d", rec.Code)
		}
	}
	if got := h.MaxPerSecond()[clientKey("Bearer a")]; got != 25 {
		t.Errorf("MaxPerSecond %d, want 25", got)
	}
}

// TestRateLimitOneClientHowEverSpelled: the spellings of one Authorization
// the service authenticates as one client (scheme case, blanks) share its
// limit; another token has its own.
func TestRateLimitOneClientHowEverSpelled(t *testing.T) {
	h, _, handler := rateLimited(t, RateLimit{PerSecond: 3})
	spellings := []string{"Bearer tok", "bearer tok", "BEARER  tok", "Bearer\ttok "}
	for i, auth := range spellings[:3] {
		if rec := send(handler, auth); rec.Code != 200 {
			t.Fatalf("request %d (%q): %d", i, auth, rec.Code)
		}
	}
	if rec := send(handler, spellings[3]); rec.Code != http.StatusTooManyRequests {
		t.Errorf("the fourth request of one client, spelled %q: %d, want 429", spellings[3], rec.Code)
	}
	if rec := send(handler, "Bearer TOK"); rec.Code != 200 {
		t.Errorf("another token: %d", rec.Code)
	}
	if got := h.MaxPerSecond(); got[clientKey("Bearer tok")] != 4 || len(got) != 2 {
		t.Errorf("MaxPerSecond = %v, want 4 for one client and 1 for the other", got)
	}
}
