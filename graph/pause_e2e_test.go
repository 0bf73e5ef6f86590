package graph_test

import (
	"github.com/workspacenet/facade/restclient"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// TestLearnedPausesAreCapped: an upstream that answers 429 asking for a
// pause of centuries (Retry-After or RateLimit-Reset of 99999999999999999999,
// an HTTP date in the year 9999, a day in seconds) pauses the credentials
// for -max-upstream-pause at most: the field's RATE_LIMITED carries a
// retryAfter within it, and once it has passed the next request is sent
// upstream and answered.
func TestLearnedPausesAreCapped(t *testing.T) {
	const maxPause = time.Second
	huge := "99999999999999999999"
	for name, h := range map[string]http.Header{
		"Retry-After seconds":        {"Retry-After": {huge}},
		"Retry-After negative":       {"Retry-After": {"-" + huge}},
		"Retry-After a day":          {"Retry-After": {"86400"}},
		"Retry-After HTTP date":      {"Retry-After": {"Fri, 31 Dec 9999 23:59:59 GMT"}},
		"RateLimit-Reset seconds":    {"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {huge}},
		"RateLimit-Reset Unix time":  {"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"9999999999"}},
		"RateLimit-Reset infinity":   {"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"+Inf"}},
		"X-RateLimit-Reset seconds":  {"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {huge}},
		"RateLimit combined seconds": {"Ratelimit": {"limit=10, remaining=0, reset=" + huge}},
		"both":                       {"Retry-After": {huge}, "Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {huge}},
	} {
		t.Run(name, func(t *testing.T) {
			var refusing atomic.Bool
			var refused atomic.Int64
			refusing.Store(true)
			env := testenv.New(t, testenv.Options{
				Config: func(c *stack.Config) {
					c.Budget = budget.Config{RPS: budget.DefaultRPS, Burst: budget.DefaultBurst, MaxPause: maxPause}
					c.Graph.RequestTimeout = 1500 * time.Millisecond
					c.UpstreamMiddleware = func(next http.Handler) http.Handler {
						return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
							if refusing.Load() && strings.HasPrefix(r.URL.Path, "/resources/v1/") {
								refused.Add(1)
								for k, v := range h {
									w.Header()[k] = v
								}
								w.Header().Set("Content-Type", "application/json")
								w.WriteHeader(http.StatusTooManyRequests)
								_, _ = w.Write([]byte(`{"message":"slow down","type":"rate_limited"}`))
								return
							}
							next.ServeHTTP(w, r)
						})
					}
				},
			})
			q := `query($id: ID!) { resource(id: $id) { id } }`
			vars := map[string]any{"id": env.ID(t, "resource", 0)}
			r := env.Do(t, env.Bearer(), q, vars, map[string]string{graph.TraceHeader: "1"})
			learned := time.Now()
			e := expectErr(t, r, "RATE_LIMITED")
			if refused.Load() == 0 {
				t.Fatal("the upstream refused nothing")
			}
			if s, ok := e.Extensions["retryAfter"].(float64); ok && (s < 1 || s > maxPause.Seconds()) {
				t.Errorf("retryAfter %v s, want at most the %v cap", s, maxPause)
			}
			if _, ok := e.Extensions["retryAfter"]; !ok && h.Get("Retry-After") != "" && !strings.HasPrefix(h.Get("Retry-After"), "-") {
				t.Errorf("a 429 asking for a pause gave no retryAfter: %+v", e)
			}

			// Past the cap the credentials are no longer paused: the
			// next request reaches the upstream and is answered.
			refusing.Store(false)
			env.Hooks().Reset()
			time.Sleep(time.Until(learned.Add(maxPause)))
			r = env.Do(t, env.Bearer(), q, vars, nil)
			if len(r.Errors) > 0 {
				t.Fatalf("%v after the 429: %+v", time.Since(learned).Round(time.Millisecond), r.Errors)
			}
			expectCalls(t, env, calls{restclient.OpGetResource: 1})
		})
	}
}
