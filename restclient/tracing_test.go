package restclient

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// A traced call is one client span with its retries, named by the route
// template, under the caller's span; every attempt carries it in
// traceparent. An untraced call sends no traceparent and makes no span.
func TestCallSpans(t *testing.T) {
	otel.SetTextMapPropagator(propagation.TraceContext{})
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	u := newUpstream(t)
	var mu sync.Mutex
	var parents []string
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		parents = append(parents, r.Header.Get("traceparent"))
		n := len(parents)
		mu.Unlock()
		switch {
		case r.PathValue("id") == "missing":
			http.Error(w, `{"message":"no event","type":"not_found"}`, http.StatusNotFound)
		case n == 1: // the first attempt of the first call
			http.Error(w, `{"message":"down","type":"unavailable"}`, http.StatusServiceUnavailable)
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"event":{"id":"e1"}}`))
		}
	})
	c := u.client()

	ctx, parent := tp.Tracer("test").Start(ctxT(t), "request")
	if _, _, err := c.Events.GetEvent(ctx, "e1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Events.GetEvent(ctx, "missing"); !IsNotFound(err) {
		t.Fatalf("missing event: %v", err)
	}
	parent.End()
	if _, _, err := c.Events.GetEvent(ctxT(t), "e1"); err != nil { // untraced
		t.Fatal(err)
	}

	var calls []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.SpanKind == trace.SpanKindClient {
			calls = append(calls, s)
		}
	}
	if len(calls) != 2 {
		t.Fatalf("%d client spans, want 2 (one per traced call)", len(calls))
	}
	attrs := func(s tracetest.SpanStub) map[string]string {
		m := map[string]string{}
		for _, a := range s.Attributes {
			m[string(a.Key)] = a.Value.Emit()
		}
		return m
	}
	for i, s := range calls {
		a := attrs(s)
		if s.Name != OpGetEvent.Pattern() || s.Parent.SpanID() != parent.SpanContext().SpanID() ||
			a["url.template"] != OpGetEvent.Route || a["http.request.method"] != "GET" || a["server.address"] != "127.0.0.1" ||
			a[string(BudgetWaitAttr)] == "" {
			t.Errorf("span %d: %s parent %s %v", i, s.Name, s.Parent.SpanID(), a)
		}
	}
	if a := attrs(calls[0]); a["http.request.resend_count"] != "1" || a["http.response.status_code"] != "200" || a["error.type"] != "" {
		t.Errorf("retried call: %v", a)
	}
	if a := attrs(calls[1]); a["http.response.status_code"] != "404" || a["error.type"] != "404" || calls[1].Status.Description != "404" {
		t.Errorf("failed call: %v, status %v", a, calls[1].Status)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(parents) != 4 {
		t.Fatalf("%d requests, want 4", len(parents))
	}
	for i, want := range []trace.SpanID{calls[0].SpanContext.SpanID(), calls[0].SpanContext.SpanID(), calls[1].SpanContext.SpanID()} {
		if !strings.Contains(parents[i], "-"+want.String()+"-") || !strings.HasPrefix(parents[i], "00-"+parent.SpanContext().TraceID().String()) {
			t.Errorf("request %d: traceparent %q, want span %s", i, parents[i], want)
		}
	}
	if parents[3] != "" {
		t.Errorf("untraced call sent traceparent %q", parents[3])
	}
}
