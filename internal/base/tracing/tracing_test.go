package tracing_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/workspacenet/facade/internal/base/tracing"
	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

func TestEnabled(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_SERVICE_NAME": "x", "OTEL_TRACES_SAMPLER": "always_on"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}, false},
	} {
		if got := tracing.Enabled(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("Enabled(%v) = %v, want %v", c.env, got, c.want)
		}
	}
}

func TestFromEnvRefusesUnknownSettings(t *testing.T) {
	for _, env := range []map[string]string{
		{"OTEL_TRACES_EXPORTER": "zipkin"},
		{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
	} {
		p, err := tracing.FromEnv(t.Context(), func(k string) string { return env[k] })
		if err == nil || p != nil {
			t.Errorf("FromEnv(%v) = %v, %v; want an error", env, p, err)
		} else if !strings.Contains(err.Error(), "OTEL_") {
			t.Errorf("FromEnv(%v): %v does not name the variable", env, err)
		}
	}
	if p, err := tracing.FromEnv(t.Context(), func(string) string { return "" }); p != nil || err != nil {
		t.Errorf("FromEnv(nothing set) = %v, %v; want tracing off", p, err)
	}
}

// With tracing off (no tracer provider) nothing is traced, extracted or
// propagated: the service receives no traceparent, even when the caller
// sent one, and log lines carry no trace ids (README, Traces).
func TestTracingOff(t *testing.T) {
	logs := &testenv.LogBuffer{}
	env := testenv.New(t, testenv.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	resp := env.Do(t, env.Bearer(), queries.Dashboard, map[string]any{"locationId": env.ID(t, "location", 0)},
		map[string]string{"traceparent": callerParent})
	var data struct{ Location struct{ ID string } }
	testenv.MustData(t, resp, &data)
	seen := env.Hooks().Seen()
	if len(seen) == 0 {
		t.Fatal("the service saw no request")
	}
	for _, s := range seen {
		if s.Traceparent != "" {
			t.Errorf("%s received traceparent %q with tracing off", s.Route, s.Traceparent)
		}
	}
	testenv.WaitFor(t, "the access line", func() bool { return strings.Contains(logs.String(), `"msg":"http request"`) })
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if _, ok := m[tracing.TraceIDKey]; ok {
			t.Errorf("log line with a trace_id while tracing is off: %s", line)
		}
	}
}

// A trace the sampler drops still has ids: log lines carry them and the
// service receives traceparent (flagged not sampled), but nothing is
// exported.
func TestUnsampledRequestKeepsIDs(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.NeverSample()))
	logs := &testenv.LogBuffer{}
	env := testenv.New(t, testenv.Options{
		Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		Config: func(c *stack.Config) { c.TracerProvider = tp },
	})
	resp := env.Do(t, env.Bearer(), `query FirstQuery($id: ID!) { resource(id: $id) { id parent { id } } }`,
		map[string]any{"id": env.ID(t, "resource", 0)}, map[string]string{"traceparent": callerParent})
	var data struct{ Resource struct{ ID string } }
	testenv.MustData(t, resp, &data)
	seen := env.Hooks().Seen()
	if len(seen) == 0 {
		t.Fatal("the service saw no request")
	}
	for _, s := range seen {
		if !strings.HasPrefix(s.Traceparent, "00-"+callerTrace+"-") || !strings.HasSuffix(s.Traceparent, "-00") {
			t.Errorf("%s received traceparent %q, want the caller's trace, not sampled", s.Route, s.Traceparent)
		}
	}
	testenv.WaitFor(t, "the access line", func() bool { return strings.Contains(logs.String(), `"msg":"http request"`) })
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["msg"] == "http request" && (m[tracing.TraceIDKey] != callerTrace || m[tracing.SpanIDKey] == nil) {
			t.Errorf("access line without the trace ids: %s", line)
		}
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Errorf("%d spans exported for a dropped trace", n)
	}
}
