package calls

import (
	"context"
	"testing"
	"time"

	"github.com/workspacenet/facade/restclient"
)

// TestReportMarksBatchesAndOffsets: a call ended with a WithBatch context is
// reported with the batch's size, others with none; startMs is the call's
// start (its end minus its duration) counted from Collector.Start.
func TestReportMarksBatchesAndOffsets(t *testing.T) {
	c := &Collector{Start: time.Now().Add(-time.Hour), Keep: true}
	h := c.Hooks()
	ctx := context.Background()
	h.After(WithBatch(ctx, 3), restclient.CallInfo{Method: "GET", Route: restclient.OpGetResource.Route, Status: 200, Duration: time.Minute})
	h.After(ctx, restclient.CallInfo{Method: "GET", Route: restclient.OpListProducts.Route, Status: 200, Cached: true})
	rep := c.Report()
	if rep.Count != 1 || rep.CacheHits != 1 || len(rep.Calls) != 2 {
		t.Fatalf("report %+v", rep)
	}
	if rep.Calls[0].Batch != 3 || rep.Calls[1].Batch != 0 {
		t.Errorf("batch marks: %d, %d; want 3, 0", rep.Calls[0].Batch, rep.Calls[1].Batch)
	}
	// Started about 59 minutes after Start; the second call now, about 60.
	if s := rep.Calls[0].StartMs; s < 58*60e3 || s > 60*60e3 {
		t.Errorf("startMs of a call that took a minute and ended an hour after Start: %v", s)
	}
	if rep.Calls[1].StartMs < rep.Calls[0].StartMs+60e3-1 {
		t.Errorf("the second call started (%v) before the first ended (%v + 60000)", rep.Calls[1].StartMs, rep.Calls[0].StartMs)
	}
}

type collectorKey struct{}

// TestHooksFrom: hooks made once cap and record the calls of the Collector
// each context names, and leave a context without one alone.
func TestHooksFrom(t *testing.T) {
	h := HooksFrom(func(ctx context.Context) *Collector { c, _ := ctx.Value(collectorKey{}).(*Collector); return c })
	a, b := &Collector{Max: 1}, &Collector{Max: 2}
	ctxA, ctxB := context.WithValue(context.Background(), collectorKey{}, a), context.WithValue(context.Background(), collectorKey{}, b)
	cs := restclient.CallStart{Method: "GET", Route: restclient.OpGetResource.Route}
	info := restclient.CallInfo{Method: "GET", Route: restclient.OpGetResource.Route, Status: 200}
	for i, want := range []bool{true, false} {
		if err := h.Before(ctxA, cs); (err == nil) != want {
			t.Errorf("call %d of a: %v", i+1, err)
		}
	}
	for range 2 {
		if err := h.Before(ctxB, cs); err != nil {
			t.Fatal(err)
		}
		h.After(ctxB, info)
	}
	h.After(ctxA, info)
	if err := h.Before(context.Background(), cs); err != nil {
		t.Error(err)
	}
	h.After(context.Background(), info)
	if a.Count() != 1 || b.Count() != 2 {
		t.Errorf("counts %d and %d, want 1 and 2", a.Count(), b.Count())
	}
}
