package main

import (
	"context"
	"fmt"
	"time"

	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/queries"
)

// The "real upstream" scenario: the documented dashboard (docs/querying.md) against an upstream
// that behaves as the real API does, 10 requests per second per client (429
// above it) and RealLatency per request, through the facade with its default
// rate budget, batched and naive.

// RealUpstream is what the scenario measured.
type RealUpstream struct {
	RPS       int                  `json:"rps"`
	LatencyMs float64              `json:"latencyMs"`
	Modes     map[string]*RealMode `json:"modes"`
}

// RealMode is the dashboard in one facade mode.
type RealMode struct {
	Calls int64 `json:"calls"` // upstream calls of one dashboard
	// Latency: one client, one dashboard at a time.
	Latency LatRun `json:"latency"`
	// Sustained: one client refreshing with RealConc dashboards in flight.
	Sustained LatRun  `json:"sustained"`
	PerMinute float64 `json:"perMinute"` // dashboards answered without error per minute, sustained
	// What the upstream saw over both runs.
	MaxPerSecond int   `json:"maxPerSecond"` // the client's most requests in one second
	Refused      int64 `json:"refused"`      // 429s
}

// Scenario settings.
const (
	realRPS     = 10
	realLatency = 20 * time.Millisecond
	realConc    = 2
)

// runRealUpstream measures the scenario: a latency run of about RealDur/3,
// then a sustained run of RealDur.
func runRealUpstream(ctx context.Context, cfg Config, up *upstream, fx *fixtures) (*RealUpstream, error) {
	if err := up.SetLatency(realLatency); err != nil {
		return nil, err
	}
	if err := up.SetRateLimit(realRPS); err != nil {
		return nil, err
	}
	defer up.SetRateLimit(0)
	who := gqlclient.Credentials("Bearer "+up.manifest.BearerToken, up.manifest.NetworkID)
	dash := &benchQuery{Name: "readme-dashboard", Text: queries.Dashboard,
		Vars: func() map[string]any { return map[string]any{"locationId": fx.Location} }}
	res := &RealUpstream{RPS: realRPS, LatencyMs: ms(realLatency), Modes: map[string]*RealMode{}}
	for _, mode := range modes {
		f, err := startFacadeWith(up.url, mode, loaders.DefaultConfig(), budget.Config{RPS: budget.DefaultRPS, Burst: budget.DefaultBurst}, "")
		if err != nil {
			return nil, err
		}
		c := newGQLClient(f.url, who)
		_, calls, _, err := callsOf(ctx, up, c, dash)
		if err != nil {
			f.close()
			return nil, fmt.Errorf("real upstream, %s: %w", mode, err)
		}
		if err := up.ResetStats(); err != nil {
			f.close()
			return nil, err
		}
		m := &RealMode{Calls: calls}
		m.Latency = loadRun(ctx, c, dash, 1, cfg.RealDur/3, 3)
		m.Sustained = loadRun(ctx, c, dash, realConc, cfg.RealDur, 2)
		m.PerMinute = m.Sustained.QPS * 60
		st, err := up.Stats()
		f.close()
		if err != nil {
			return nil, err
		}
		for _, n := range st.PerSecond {
			m.MaxPerSecond = max(m.MaxPerSecond, n)
		}
		m.Refused = st.RateLimited
		res.Modes[mode] = m
		cfg.logf("real      %-7s rps=%d lat=%v calls=%d p50=%7.0fms p95=%7.0fms errors=%d | c=%d: %.1f dashboards/min, errors=%d | upstream: max %d/s, %d refused %s%s",
			mode, realRPS, realLatency, calls, m.Latency.P50Ms, m.Latency.P95Ms, m.Latency.Errors, realConc, m.PerMinute,
			m.Sustained.Errors, m.MaxPerSecond, m.Refused, m.Latency.FirstErr, m.Sustained.FirstErr)
	}
	return res, nil
}
