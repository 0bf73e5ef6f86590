package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"time"

	"github.com/workspacenet/facade/graph/loaders"
	"github.com/workspacenet/facade/internal/budget"
	"github.com/workspacenet/facade/internal/gqlclient"
	"github.com/workspacenet/facade/internal/queries"
)

// The "deferred dashboard" measurement (-defer N): the documented dashboard
// against the upstream of the "real upstream" scenario (10 requests per
// second per client, 20 ms per request), through the facade with its default
// rate budget, one dashboard at a time, back to back, alternating N times:
// the dashboard without @defer (the whole answer), and
// queries.DeferredDashboard (its transactions and credit notes deferred)
// over multipart/mixed, timed to its first payload and to its last.
// Prints a table; writes nothing.

// DeferRun is what the measurement found.
type DeferRun struct {
	Rounds                  int
	Whole, First, Last      []time.Duration // per round
	WholeCalls, DeferCalls  int64           // upstream calls of one dashboard
	WholeErrors, DeferFails int
}

func deferredDashboards(ctx context.Context, cfg Config, rounds int) (*DeferRun, error) {
	up, who, fx, err := startUpstreamFor(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer up.Close()
	if err := up.SetLatency(realLatency); err != nil {
		return nil, err
	}
	if err := up.SetRateLimit(realRPS); err != nil {
		return nil, err
	}
	f, err := startFacadeWith(up.url, modeBatched, loaders.DefaultConfig(), budget.Config{RPS: budget.DefaultRPS, Burst: budget.DefaultBurst}, "")
	if err != nil {
		return nil, err
	}
	defer f.close()
	hc := &http.Client{Timeout: time.Minute}
	vars := map[string]any{"locationId": fx.Location}
	send := func(query, accept string) (first, last time.Duration, payloads int, err error) {
		body, _ := json.Marshal(gqlclient.Request{Query: query, Variables: vars})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(body))
		if err != nil {
			return 0, 0, 0, err
		}
		req.Header = who.Clone()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			return 0, 0, 0, err
		}
		defer resp.Body.Close()
		mt, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if mt != "multipart/mixed" {
			b, err := io.ReadAll(resp.Body)
			d := time.Since(start)
			if err == nil && bytes.Contains(b, []byte(`"errors"`)) {
				err = fmt.Errorf("errors: %.200s", b)
			}
			return d, d, 1, err
		}
		mr := multipart.NewReader(resp.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				return first, time.Since(start), payloads, nil
			}
			if err != nil {
				return 0, 0, 0, err
			}
			b, err := io.ReadAll(p)
			if err != nil {
				return 0, 0, 0, err
			}
			if payloads == 0 {
				first = time.Since(start)
			}
			payloads++
			if bytes.Contains(b, []byte(`"errors"`)) {
				return 0, 0, 0, fmt.Errorf("errors: %.200s", b)
			}
		}
	}
	callsOfOne := func(query, accept string) (int64, error) {
		if err := up.ResetStats(); err != nil {
			return 0, err
		}
		if _, _, _, err := send(query, accept); err != nil {
			return 0, err
		}
		st, err := up.Stats()
		if err != nil {
			return 0, err
		}
		return st.Total, nil
	}
	r := &DeferRun{Rounds: rounds}
	if r.WholeCalls, err = callsOfOne(queries.Dashboard, "application/json"); err != nil {
		return nil, err
	}
	const accept = "multipart/mixed; deferSpec=20220824"
	if r.DeferCalls, err = callsOfOne(queries.DeferredDashboard, accept); err != nil {
		return nil, err
	}
	for i := range rounds {
		d, _, _, err := send(queries.Dashboard, "application/json")
		if err != nil {
			r.WholeErrors++
			cfg.logf("defer round %d, whole: %v", i, err)
		} else {
			r.Whole = append(r.Whole, d)
		}
		first, last, n, err := send(queries.DeferredDashboard, accept)
		if err != nil || n < 2 {
			r.DeferFails++
			cfg.logf("defer round %d, deferred: %d payloads, %v", i, n, err)
			continue
		}
		r.First, r.Last = append(r.First, first), append(r.Last, last)
	}
	return r, nil
}

// Print writes the table of r.
func (r *DeferRun) Print(w io.Writer) {
	q := func(ds []time.Duration, p float64) string {
		if len(ds) == 0 {
			return "-"
		}
		s := slices.Clone(ds)
		slices.Sort(s)
		return fmt.Sprintf("%.2f s", percentile(s, p).Seconds())
	}
	fmt.Fprintf(w, "The dashboard at %d requests/s per client and %v upstream latency, one at a time, %d rounds alternating:\n\n", realRPS, realLatency, r.Rounds)
	fmt.Fprintln(w, "| | calls | p50 | p95 | failed |")
	fmt.Fprintln(w, "| --- | --: | --: | --: | --: |")
	fmt.Fprintf(w, "| without @defer: the whole answer | %d | %s | %s | %d |\n", r.WholeCalls, q(r.Whole, 0.5), q(r.Whole, 0.95), r.WholeErrors)
	fmt.Fprintf(w, "| transactions and credit notes deferred: first payload | %d | %s | %s | %d |\n", r.DeferCalls, q(r.First, 0.5), q(r.First, 0.95), r.DeferFails)
	fmt.Fprintf(w, "| transactions and credit notes deferred: last payload | | %s | %s | |\n", q(r.Last, 0.5), q(r.Last, 0.95))
	if len(r.Whole) > 0 && len(r.Last) > 0 {
		w50, l50 := slices.Clone(r.Whole), slices.Clone(r.Last)
		slices.Sort(w50)
		slices.Sort(l50)
		fmt.Fprintf(w, "\nLast payload p50 / whole answer p50: %+.1f %%\n", 100*(percentile(l50, 0.5).Seconds()/percentile(w50, 0.5).Seconds()-1))
	}
}
