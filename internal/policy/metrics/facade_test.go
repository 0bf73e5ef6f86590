package metrics

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/workspacenet/facade/restclient"
)

// recordOne records one request of one upstream call, as the handler does.
func recordOne(f *Facade) {
	r := f.StartRequest()
	f.CallHooks().After(WithRequest(context.Background(), r), restclient.CallInfo{Method: "GET", Route: restclient.OpGetResource.Route, Status: 200, Duration: time.Millisecond})
	r.SetOperation("query", "Resource")
	r.Responded()
	r.End()
}

// The observers kept per label set count into the vectors' children: the
// series read back as many as were recorded.
func TestObserversCount(t *testing.T) {
	f := NewFacade(prometheus.NewRegistry(), Options{})
	for range 3 {
		recordOne(f)
	}
	if n := testutil.ToFloat64(f.calls.WithLabelValues("GET", restclient.OpGetResource.Route, "2xx")); n != 3 {
		t.Errorf("calls 2xx: %v, want 3", n)
	}
	if n := testutil.ToFloat64(f.requests.WithLabelValues("query", "Resource", "ok")); n != 3 {
		t.Errorf("requests ok: %v, want 3", n)
	}
	if n := testutil.CollectAndCount(f.duration); n != 1 {
		t.Errorf("duration series: %d, want 1", n)
	}
}

// BenchmarkRecord is the metrics' work for one request of one upstream call.
func BenchmarkRecord(b *testing.B) {
	f := NewFacade(prometheus.NewRegistry(), Options{})
	b.ReportAllocs()
	for b.Loop() {
		recordOne(f)
	}
}
