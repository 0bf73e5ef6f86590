// Package tracing is the facade's OpenTelemetry setup: tracer providers from
// the standard OTEL_* environment variables (FromEnv), the W3C Trace Context
// propagator, the HTTP server middleware (Handler), and the slog wrapper
// that puts trace_id and span_id on every log line of a traced request
// (LogHandler).
//
// Tracing is off unless the environment names an exporter: then no tracer
// provider exists, no middleware is installed, and the code paths that could
// make spans (restclient, the loaders, the local service) see no span in
// their context and do nothing.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// Service names of the two programs' resources; OTEL_SERVICE_NAME replaces
// the facade's.
const (
	FacadeService   = "workspace-facade"
	UpstreamService = "workspace-network-service"
)

// Providers are the tracer providers of one process: the facade's and the
// embedded REST service's (another service.name), exporting through one
// exporter.
type Providers struct {
	Facade   *sdktrace.TracerProvider
	Upstream *sdktrace.TracerProvider
	exporter sdktrace.SpanExporter
}

// Shutdown flushes the spans still queued and stops the exporter.
func (p *Providers) Shutdown(ctx context.Context) error {
	return errors.Join(p.Facade.Shutdown(ctx), p.Upstream.Shutdown(ctx), p.exporter.Shutdown(ctx))
}

// Enabled reports whether getenv turns tracing on: OTEL_TRACES_EXPORTER set
// to anything but "none", or, with it unset, an OTLP endpoint set
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
// OTEL_SDK_DISABLED=true turns it off whatever the rest says.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "":
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	default:
		return exp != "none"
	}
}

// FromEnv returns the process's tracer providers as the OTEL_* environment
// configures them, or nil when tracing is off (Enabled). getenv decides
// whether and which exporter; the SDK and the exporters read the rest
// (endpoint, headers, timeouts, OTEL_TRACES_SAMPLER, OTEL_BSP_*,
// OTEL_RESOURCE_ATTRIBUTES) from the process environment themselves.
//
// OTEL_TRACES_EXPORTER: "otlp" (default when an endpoint is set), "console"
// (JSON spans on stderr) or "none". The OTLP protocol is
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL:
// "http/protobuf" (default) or "grpc".
func FromEnv(ctx context.Context, getenv func(string) string) (*Providers, error) {
	if !Enabled(getenv) {
		return nil, nil
	}
	exp, err := exporter(ctx, getenv)
	if err != nil {
		return nil, err
	}
	return NewProviders(ctx, exp)
}

func exporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	name := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	switch name {
	case "", "otlp":
		proto := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
		if proto == "" {
			proto = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
		}
		switch proto {
		case "", "http/protobuf":
			return otlptracehttp.New(ctx)
		case "grpc":
			return otlptracegrpc.New(ctx)
		default:
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL: %q is not http/protobuf or grpc", proto)
		}
	case "console":
		return stdouttrace.New(stdouttrace.WithWriter(os.Stderr))
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER: %q is not otlp, console or none", name)
	}
}

// NewProviders returns tracer providers exporting to exp in batches, with
// the sampler of OTEL_TRACES_SAMPLER (default: parent-based, always on).
// Tests and the benchmark pass an in-memory or discarding exporter.
func NewProviders(ctx context.Context, exp sdktrace.SpanExporter) (*Providers, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(FacadeService)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	upRes, err := resource.Merge(res, resource.NewSchemaless(semconv.ServiceName(UpstreamService)))
	if err != nil {
		return nil, err
	}
	// Both providers share the exporter: it is shut down once, by Shutdown.
	shared := keepOpen{exp}
	SetPropagator()
	return &Providers{
		Facade:   sdktrace.NewTracerProvider(sdktrace.WithBatcher(shared), sdktrace.WithResource(res)),
		Upstream: sdktrace.NewTracerProvider(sdktrace.WithBatcher(shared), sdktrace.WithResource(upRes)),
		exporter: exp,
	}, nil
}

// keepOpen is an exporter whose Shutdown leaves the real one open.
type keepOpen struct{ sdktrace.SpanExporter }

func (keepOpen) Shutdown(context.Context) error { return nil }

var propagatorOnce sync.Once

// SetPropagator installs W3C Trace Context as the global propagator
// (otel.SetTextMapPropagator), once: restclient injects the traceparent of
// its call spans with it. Every stack with a tracer provider calls it.
// Baggage is not propagated: nothing the facade does sets any.
func SetPropagator() {
	propagatorOnce.Do(func() {
		otel.SetTextMapPropagator(propagation.TraceContext{})
	})
}

// parentOnly is the propagator Handler extracts a caller's trace with: its
// traceparent only (trace id, parent span id, sampled flag). The caller's
// tracestate is dropped and its baggage never read, so that nothing a
// caller writes in them is sent on to the upstream: what an upstream call
// carries is what the global propagator makes of the facade's own span.
type parentOnly struct{ propagation.TraceContext }

func (p parentOnly) Extract(ctx context.Context, carrier propagation.TextMapCarrier) context.Context {
	sc := trace.SpanContextFromContext(p.TraceContext.Extract(ctx, carrier))
	if !sc.IsValid() {
		return ctx
	}
	return trace.ContextWithRemoteSpanContext(ctx, sc.WithTraceState(trace.TraceState{}))
}

// Handler wraps h in a server span per request (otelhttp, HTTP semantic
// conventions) from tp, continuing the caller's trace when it sends
// traceparent (its tracestate and baggage are ignored: parentOnly). The span is named "METHOD /route" for the routes that
// ServeMux matched inside h, "METHOD path" for the paths in names, else
// "METHOD"; Operation renames GraphQL requests after their operation.
func Handler(h http.Handler, tp trace.TracerProvider, names ...string) http.Handler {
	return otelhttp.NewHandler(h, "http", otelhttp.WithTracerProvider(tp),
		otelhttp.WithPropagators(parentOnly{}),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			if p := r.Pattern; p != "" {
				if strings.HasPrefix(p, r.Method+" ") {
					return p
				}
				return r.Method + " " + p
			}
			for _, n := range names {
				if r.URL.Path == n {
					return r.Method + " " + n
				}
			}
			return r.Method
		}))
}

// Log attribute keys of LogHandler.
const (
	TraceIDKey = "trace_id"
	SpanIDKey  = "span_id"
)

// LogHandler wraps h so that every record logged with a context carrying a
// valid span (a traced request's) has trace_id and span_id attributes, the
// hex ids of that span. Records logged without such a context are as h
// writes them.
func LogHandler(h slog.Handler) slog.Handler { return logHandler{h} }

type logHandler struct{ slog.Handler }

func (h logHandler) Handle(ctx context.Context, rec slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		rec.AddAttrs(slog.String(TraceIDKey, sc.TraceID().String()), slog.String(SpanIDKey, sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, rec)
}

func (h logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return logHandler{h.Handler.WithAttrs(as)}
}

func (h logHandler) WithGroup(name string) slog.Handler { return logHandler{h.Handler.WithGroup(name)} }
