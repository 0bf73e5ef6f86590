package tracing_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/workspacenet/facade/internal/base/accesslog"
	"github.com/workspacenet/facade/internal/base/tracing"
	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// panicOn is a field interceptor that panics in the resolver of
// object.field: the facade recovers and logs it with the request's context.
type panicOn [2]string

func (p panicOn) ExtensionName() string                   { return "panicOn" }
func (p panicOn) Validate(graphql.ExecutableSchema) error { return nil }
func (p panicOn) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	if fc := graphql.GetFieldContext(ctx); fc != nil && fc.Object == p[0] && fc.Field.Name == p[1] {
		panic("test panic in " + p[0] + "." + p[1])
	}
	return next(ctx)
}

const (
	accessMessage   = accesslog.Message
	restclientScope = "github.com/workspacenet/facade/restclient"
)

// The caller's trace: the facade must continue it.
const (
	callerTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan   = "00f067aa0ba902b7"
	callerParent = "00-" + callerTrace + "-" + callerSpan + "-01"
)

// tracedEnv starts the stack with one synchronous in-memory exporter for
// the facade and the local service, and logs captured as JSON lines.
func tracedEnv(t *testing.T, exts ...graphql.HandlerExtension) (*testenv.Env, *tracetest.InMemoryExporter, *testenv.LogBuffer) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	logs := &testenv.LogBuffer{}
	env := testenv.New(t, testenv.Options{
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Config: func(c *stack.Config) {
			c.TracerProvider = tp
			c.Graph.Extensions = append(c.Graph.Extensions, exts...)
		},
	})
	return env, exp, logs
}

// spanIndex is the exported spans by span id.
type spanIndex map[trace.SpanID]tracetest.SpanStub

func index(spans tracetest.SpanStubs) spanIndex {
	m := spanIndex{}
	for _, s := range spans {
		m[s.SpanContext.SpanID()] = s
	}
	return m
}

// descends reports whether s has ancestor among the exported spans.
func (m spanIndex) descends(s tracetest.SpanStub, ancestor trace.SpanID) bool {
	for i := 0; i < 64; i++ {
		p := s.Parent.SpanID()
		if p == ancestor {
			return true
		}
		next, ok := m[p]
		if !ok {
			return false
		}
		s = next
	}
	return false
}

func scope(s tracetest.SpanStub) string { return s.InstrumentationScope.Name }

func attr(s tracetest.SpanStub, key string) (string, bool) {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value.Emit(), true
		}
	}
	return "", false
}

// The README's dashboard query makes one trace, continuing the caller's:
// one server span named after the operation, as many upstream client spans
// as the local service counted requests (by route), each under the server
// span; the service saw traceparent on every request, and its server spans
// and their SQL spans are in the same trace under those client spans.
func TestDashboardTrace(t *testing.T) {
	env, exp, _ := tracedEnv(t)
	exp.Reset()
	resp := env.Do(t, env.Bearer(), queries.Dashboard, map[string]any{"locationId": env.ID(t, "location", 0)},
		map[string]string{"traceparent": callerParent})
	var data struct{ Location struct{ ID string } }
	testenv.MustData(t, resp, &data)
	counts, total := env.Calls()
	if total < 4 {
		t.Fatalf("the dashboard made %d upstream calls, want at least its 4 lists", total)
	}

	// The service's server spans and the facade's end after their answers
	// are written: wait for them (an event, not a duration).
	isServer := func(s tracetest.SpanStub) bool { return s.SpanKind == trace.SpanKindServer }
	testenv.WaitFor(t, "every server span", func() bool {
		n := 0
		for _, s := range exp.GetSpans() {
			if isServer(s) {
				n++
			}
		}
		return int64(n) == total+1
	})
	spans := exp.GetSpans()
	byID := index(spans)

	var server []tracetest.SpanStub
	for _, s := range spans {
		if got := s.SpanContext.TraceID().String(); got != callerTrace {
			t.Errorf("span %q is in trace %s, want the caller's %s", s.Name, got, callerTrace)
		}
		if isServer(s) && s.Parent.SpanID().String() == callerSpan {
			server = append(server, s)
		}
	}
	if len(server) != 1 {
		t.Fatalf("%d server spans under the caller's span, want 1", len(server))
	}
	root := server[0]
	if root.Name != "query Dashboard" || !root.Parent.IsRemote() {
		t.Errorf("server span %q (remote parent %v), want \"query Dashboard\" continuing the caller's span", root.Name, root.Parent.IsRemote())
	}
	if v, _ := attr(root, "graphql.operation.name"); v != "Dashboard" {
		t.Errorf("graphql.operation.name = %q", v)
	}

	clients := map[string]int64{}
	clientIDs := map[trace.SpanID]bool{}
	loaders := 0
	for _, s := range spans {
		switch {
		case s.SpanKind == trace.SpanKindClient && scope(s) == restclientScope:
			clients[s.Name]++
			clientIDs[s.SpanContext.SpanID()] = true
			if !byID.descends(s, root.SpanContext.SpanID()) {
				t.Errorf("client span %q is not under the request's server span", s.Name)
			}
			if v, _ := attr(s, "http.response.status_code"); v != "200" {
				t.Errorf("client span %q: http.response.status_code %q, want 200", s.Name, v)
			}
			if v, ok := attr(s, "http.request.resend_count"); !ok || v != "0" {
				t.Errorf("client span %q: http.request.resend_count %q, want 0", s.Name, v)
			}
			if v, _ := attr(s, "url.template"); s.Name != "GET "+v {
				t.Errorf("client span %q: url.template %q", s.Name, v)
			}
			if _, ok := attr(s, "facade.upstream.budget_wait_ms"); !ok {
				t.Errorf("client span %q has no facade.upstream.budget_wait_ms", s.Name)
			}
		case strings.HasPrefix(s.Name, "loader "):
			loaders++
			if !byID.descends(s, root.SpanContext.SpanID()) {
				t.Errorf("loader span %q is not under the request's server span", s.Name)
			}
		}
	}
	if !maps.Equal(clients, counts) {
		t.Errorf("upstream client spans by name:\n%s\nthe service counted:\n%s", testenv.FormatCalls(clients), testenv.FormatCalls(counts))
	}
	if loaders == 0 {
		t.Error("no loader dispatch span")
	}

	// The local service: traceparent on every request, one server span per
	// request under a facade client span, named by its route, with SQL spans
	// below it.
	if got := env.Hooks().Traceparents(); !maps.Equal(got, counts) {
		t.Errorf("requests with traceparent by route:\n%s\nrequests:\n%s", testenv.FormatCalls(got), testenv.FormatCalls(counts))
	}
	for _, seen := range env.Hooks().Seen() {
		if !strings.HasPrefix(seen.Traceparent, "00-"+callerTrace+"-") {
			t.Errorf("%s received traceparent %q, want the caller's trace", seen.Route, seen.Traceparent)
		}
	}
	upstream := map[string]int64{}
	for _, s := range spans {
		if !isServer(s) || s.SpanContext.SpanID() == root.SpanContext.SpanID() {
			continue
		}
		upstream[s.Name]++
		if !clientIDs[s.Parent.SpanID()] {
			t.Errorf("service span %q: parent is not a facade client span", s.Name)
		}
		sql := 0
		for _, c := range spans {
			if strings.Contains(scope(c), "otelsql") && byID.descends(c, s.SpanContext.SpanID()) {
				sql++
			}
		}
		if sql == 0 {
			t.Errorf("service span %q has no SQL span", s.Name)
		}
	}
	if !maps.Equal(upstream, counts) {
		t.Errorf("service server spans by name:\n%s\nrequests:\n%s", testenv.FormatCalls(upstream), testenv.FormatCalls(counts))
	}
}

// Every log line written for a traced request carries the request's trace
// id and the id of a span of that request (the access line: the server
// span's).
func TestLogLinesCarryTraceIDs(t *testing.T) {
	// A resolver panic is logged by the facade (gqlerr.Recover) besides the
	// access line, once per product title.
	env, exp, logs := tracedEnv(t, panicOn{"Product", "title"})
	exp.Reset()
	before := strings.Count(logs.String(), "\n")
	env.Do(t, env.Bearer(), queries.Dashboard, map[string]any{"locationId": env.ID(t, "location", 0)},
		map[string]string{"traceparent": callerParent})
	testenv.WaitFor(t, "the access line", func() bool { return strings.Contains(logs.String(), `"msg":"`+accessMessage+`"`) })
	testenv.WaitFor(t, "the server span", func() bool {
		for _, s := range exp.GetSpans() {
			if s.Name == "query Dashboard" {
				return true
			}
		}
		return false
	})
	spans := exp.GetSpans()
	ids := map[string]bool{}
	var root string
	for _, s := range spans {
		ids[s.SpanContext.SpanID().String()] = true
		if s.Name == "query Dashboard" {
			root = s.SpanContext.SpanID().String()
		}
	}
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	sc.Buffer(nil, 1<<20)
	lines, other := 0, 0
	for i := 0; sc.Scan(); i++ {
		if i < before {
			continue
		}
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		lines++
		tid, _ := line[tracing.TraceIDKey].(string)
		sid, _ := line[tracing.SpanIDKey].(string)
		if tid != callerTrace || !ids[sid] {
			t.Errorf("log line without the request's trace_id/span_id (%q, %q): %s", tid, sid, sc.Text())
		}
		if line["msg"] == accessMessage {
			if sid != root {
				t.Errorf("access line span_id %s, want the server span's %s", sid, root)
			}
		} else {
			other++
		}
	}
	if lines == 0 || other == 0 {
		t.Fatalf("%d log lines of the request, %d besides the access line; want both: %s", lines, other, logs.String())
	}
}
