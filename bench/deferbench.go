package main

import (
	"bufio"
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
	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/queries"
)

// The "deferred dashboard" measurement (-defer N): the documented dashboard
// against the upstream of the "real upstream" scenario (10 requests per
// second per client, 20 ms per request), through the facade with its default
// rate budget, one dashboard at a time, back to back, alternating N times:
// the dashboard without @defer (the whole answer), queries.DeferredDashboard
// (its transactions and credit notes deferred) over multipart/mixed in the
// 2022 format, and queries.DeferredLinks (each transaction's links deferred
// inside the list, and the credit notes) in each format: multipart/mixed
// 2022 and incrementalSpec=v0.2, Server-Sent Events 2022; each deferred one
// timed to its first payload and to its last. Prints a table; writes nothing.

// deferCase is one deferred query in one format.
type deferCase struct {
	name, query, accept string
}

var deferCases = []deferCase{
	{"transactions and credit notes deferred, multipart 2022", queries.DeferredDashboard, "multipart/mixed; deferSpec=20220824"},
	{"links and credit notes deferred, multipart 2022", queries.DeferredLinks, "multipart/mixed; deferSpec=20220824"},
	{"links and credit notes deferred, multipart v0.2", queries.DeferredLinks, "multipart/mixed; incrementalSpec=v0.2"},
	{"links and credit notes deferred, SSE 2022", queries.DeferredLinks, "text/event-stream"},
}

// DeferRun is what the measurement found.
type DeferRun struct {
	Rounds      int
	Whole       []time.Duration // per round
	WholeCalls  int64           // upstream calls of one dashboard
	WholeErrors int
	Cases       []DeferCaseRun // per deferCases
}

// DeferCaseRun is what the measurement found of one deferred case.
type DeferCaseRun struct {
	Name        string
	First, Last []time.Duration // per round
	Calls       int64
	Fails       int
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
	dc := &deferClient{ctx: ctx, hc: &http.Client{Timeout: time.Minute}, url: f.url, who: who, vars: map[string]any{"locationId": fx.Location}}
	r := &DeferRun{Rounds: rounds}
	if r.WholeCalls, err = dc.callsOfOne(up, queries.Dashboard, "application/json"); err != nil {
		return nil, err
	}
	for _, c := range deferCases {
		cr := DeferCaseRun{Name: c.name}
		if cr.Calls, err = dc.callsOfOne(up, c.query, c.accept); err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		r.Cases = append(r.Cases, cr)
	}
	for i := range rounds {
		d, _, _, err := dc.send(queries.Dashboard, "application/json")
		if err != nil {
			r.WholeErrors++
			cfg.logf("defer round %d, whole: %v", i, err)
		} else {
			r.Whole = append(r.Whole, d)
		}
		for j, c := range deferCases {
			cr := &r.Cases[j]
			first, last, n, err := dc.send(c.query, c.accept)
			if err != nil || n < 2 {
				cr.Fails++
				cfg.logf("defer round %d, %s: %d payloads, %v", i, c.name, n, err)
				continue
			}
			cr.First, cr.Last = append(cr.First, first), append(cr.Last, last)
		}
	}
	return r, nil
}

// deferClient sends the dashboard's queries, with vars, to the facade at
// url as who.
type deferClient struct {
	ctx  context.Context
	hc   *http.Client
	url  string
	who  http.Header
	vars map[string]any
}

// callsOfOne is the upstream calls of one query, sent alone.
func (dc *deferClient) callsOfOne(up *upstream, query, accept string) (int64, error) {
	if err := up.ResetStats(); err != nil {
		return 0, err
	}
	if _, _, _, err := dc.send(query, accept); err != nil {
		return 0, err
	}
	st, err := up.Stats()
	if err != nil {
		return 0, err
	}
	return st.Total, nil
}

// send posts query accepting accept and reads the answer: the time to its
// first payload and to its last, and how many it had. A payload with
// errors is an error.
func (dc *deferClient) send(query, accept string) (first, last time.Duration, payloads int, err error) {
	body, _ := json.Marshal(gqlclient.Request{Query: query, Variables: dc.vars})
	req, err := http.NewRequestWithContext(dc.ctx, http.MethodPost, dc.url, bytes.NewReader(body))
	if err != nil {
		return 0, 0, 0, err
	}
	req.Header = dc.who.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	pt := &payloadTimer{start: time.Now()}
	resp, err := dc.hc.Do(req)
	if err != nil {
		return 0, 0, 0, err
	}
	defer resp.Body.Close()
	mt, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "multipart/mixed":
		err = pt.readMultipart(resp.Body, params["boundary"])
	case "text/event-stream":
		err = pt.readEventStream(resp.Body)
	default:
		b, err := io.ReadAll(resp.Body)
		d := time.Since(pt.start)
		if err == nil && bytes.Contains(b, []byte(`"errors"`)) {
			err = fmt.Errorf("errors: %.200s", b)
		}
		return d, d, 1, err
	}
	if err != nil {
		return 0, 0, 0, err
	}
	return pt.first, pt.last, pt.n, nil
}

// payloadTimer times the payloads of one answer from start: the first,
// the end of the last, and counts them.
type payloadTimer struct {
	start       time.Time
	first, last time.Duration
	n           int
}

// take counts payload b (an error when it holds errors).
func (pt *payloadTimer) take(b []byte) error {
	if pt.n == 0 {
		pt.first = time.Since(pt.start)
	}
	pt.n++
	if bytes.Contains(b, []byte(`"errors"`)) {
		return fmt.Errorf("errors: %.200s", b)
	}
	return nil
}

// readMultipart reads a multipart/mixed answer's parts to its end.
func (pt *payloadTimer) readMultipart(body io.Reader, boundary string) error {
	mr := multipart.NewReader(body, boundary)
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			pt.last = time.Since(pt.start)
			return nil
		}
		if err != nil {
			return err
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return err
		}
		if err := pt.take(b); err != nil {
			return err
		}
	}
}

// readEventStream reads an event stream's data up to its complete event.
func (pt *payloadTimer) readEventStream(body io.Reader) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok && len(bytes.TrimSpace(data)) > 0 {
			if err := pt.take(data); err != nil {
				return err
			}
		}
		if bytes.Equal(line, []byte("event: complete")) {
			pt.last = time.Since(pt.start)
			return nil
		}
	}
	return fmt.Errorf("the event stream ended without complete: %v", sc.Err())
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
	for _, c := range r.Cases {
		fmt.Fprintf(w, "| %s: first payload | %d | %s | %s | %d |\n", c.Name, c.Calls, q(c.First, 0.5), q(c.First, 0.95), c.Fails)
		fmt.Fprintf(w, "| %s: last payload | | %s | %s | |\n", c.Name, q(c.Last, 0.5), q(c.Last, 0.95))
	}
	if len(r.Whole) > 0 {
		w50 := slices.Clone(r.Whole)
		slices.Sort(w50)
		fmt.Fprintln(w)
		for _, c := range r.Cases {
			if len(c.Last) == 0 {
				continue
			}
			l50 := slices.Clone(c.Last)
			slices.Sort(l50)
			fmt.Fprintf(w, "Last payload p50 / whole answer p50, %s: %+.1f %%\n", c.Name, 100*(percentile(l50, 0.5).Seconds()/percentile(w50, 0.5).Seconds()-1))
		}
	}
}
