package main

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/policy/cache"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/queries"
)

// The "refresh" scenario: the documented dashboard (docs/querying.md) on screen in 20 browsers of
// one credential, each refreshing it every 5 s, against the real API's limit
// (10 requests/s per client, 20 ms): what each refresh round costs upstream
// and how long it takes, the first round on a cold cache, the next warm.

// RefreshRound is one round of refreshes.
type RefreshRound struct {
	Round  int     `json:"round"`
	Warm   bool    `json:"warm"`
	Calls  int64   `json:"calls"` // upstream calls of the whole round
	P50Ms  float64 `json:"p50Ms"`
	MaxMs  float64 `json:"maxMs"`
	Errors int     `json:"errors"`
}

// Refresh is what the scenario measured.
type Refresh struct {
	Clients  int            `json:"clients"`
	EverySec float64        `json:"everySec"`
	CacheTTL string         `json:"cacheTTL"`
	Rounds   []RefreshRound `json:"rounds"`
}

const (
	refreshClients = 20
	refreshEvery   = 5 * time.Second
)

func runRefresh(ctx context.Context, cfg Config, up *upstream, fx *fixtures) (*Refresh, error) {
	if err := up.SetLatency(realLatency); err != nil {
		return nil, err
	}
	if err := up.SetRateLimit(realRPS); err != nil {
		return nil, err
	}
	defer up.SetRateLimit(0)
	f, err := startFacadeWith(up.url, modeBatched, loaders.DefaultConfig(), budget.Config{RPS: budget.DefaultRPS, Burst: budget.DefaultBurst}, cache.DefaultTTLSpec)
	if err != nil {
		return nil, err
	}
	defer f.close()
	who := gqlclient.Credentials("Bearer "+up.manifest.BearerToken, up.manifest.NetworkID)
	c := newGQLClient(f.url, who)
	dash := &benchQuery{Text: queries.Dashboard, Vars: func() map[string]any { return map[string]any{"locationId": fx.Location} }}
	res := &Refresh{Clients: refreshClients, EverySec: refreshEvery.Seconds(), CacheTTL: cache.DefaultTTLSpec}
	for round := range cfg.RefreshRounds {
		if err := up.ResetStats(); err != nil {
			return nil, err
		}
		start := time.Now()
		var (
			mu   sync.Mutex
			took []time.Duration
			errs int
			wg   sync.WaitGroup
		)
		for range refreshClients {
			wg.Go(func() {
				t0 := time.Now()
				_, err := post(ctx, c, requestBody(dash))
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs++
					return
				}
				took = append(took, time.Since(t0))
			})
		}
		wg.Wait()
		st, err := up.Stats()
		if err != nil {
			return nil, err
		}
		slices.Sort(took)
		r := RefreshRound{Round: round + 1, Warm: round > 0, Calls: st.Total, Errors: errs}
		if len(took) > 0 {
			r.P50Ms, r.MaxMs = ms(took[(len(took)-1)/2]), ms(took[len(took)-1])
		}
		res.Rounds = append(res.Rounds, r)
		cfg.logf("refresh   round %d (%s): %d clients, %d upstream calls, p50 %.0f ms, max %.0f ms, errors %d",
			r.Round, map[bool]string{false: "cold", true: "warm"}[r.Warm], refreshClients, r.Calls, r.P50Ms, r.MaxMs, r.Errors)
		if wait := refreshEvery - time.Since(start); wait > 0 && round+1 < cfg.RefreshRounds {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return res, nil
}
