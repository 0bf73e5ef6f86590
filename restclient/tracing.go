package restclient

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// Tracing
//
// When the context of a call carries a valid span (a traced GraphQL
// request's), each upstream exchange — one logical call with its retries and
// its waits for the rate budget, made once for a shared GET — gets a client
// span, a child of that span, named by the operation's route template
// ("GET /resources/v1/{id}", the Operations table), with the HTTP client
// semantic conventions (http.request.method, url.template, url.full,
// server.address, server.port, http.response.status_code,
// http.request.resend_count, error.type) and the attributes
// facade.upstream.budget_wait_ms and facade.upstream.rate_limited. Every
// attempt carries the span through the global propagator
// (otel.SetTextMapPropagator; the facade's is W3C Trace Context: a
// traceparent, and a tracestate only when the span has one). Cached answers and
// joined shared GETs send nothing and make no span. Without a span in the
// context nothing of this runs: no tracer, no attributes, no headers.

// tracerName is the instrumentation scope of the upstream call spans.
const tracerName = "github.com/workspacenet/facade/restclient"

// Attributes of the upstream call spans beyond the semantic conventions.
const (
	BudgetWaitAttr  = attribute.Key("facade.upstream.budget_wait_ms")
	RateLimitedAttr = attribute.Key("facade.upstream.rate_limited")
)

// startCallSpan starts the client span of rc's exchange with target as a
// child of ctx's span; nil when ctx carries no valid span.
func startCallSpan(ctx context.Context, rc call, target string) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return ctx, nil
	}
	ctx, span := parent.TracerProvider().Tracer(tracerName).Start(ctx, rc.method+" "+rc.route, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		attrs := []attribute.KeyValue{
			semconv.HTTPRequestMethodKey.String(rc.method),
			semconv.URLTemplate(rc.route),
			semconv.URLFull(target),
		}
		if u, err := url.Parse(target); err == nil {
			host, port, err := net.SplitHostPort(u.Host)
			if err != nil {
				host, port = u.Host, map[string]string{"https": "443"}[u.Scheme]
				if port == "" {
					port = "80"
				}
			}
			p, _ := strconv.Atoi(port)
			attrs = append(attrs, semconv.ServerAddress(host), semconv.ServerPort(p))
		}
		span.SetAttributes(attrs...)
	}
	return ctx, span
}

// endCallSpan records f's outcome on span and ends it; a nil span is no-op.
func endCallSpan(span trace.Span, f fetched, err error) {
	if span == nil {
		return
	}
	if span.IsRecording() {
		attrs := []attribute.KeyValue{
			semconv.HTTPRequestResendCount(f.retries),
			BudgetWaitAttr.Float64(float64(f.waited.Microseconds()) / 1000),
		}
		if f.rateLimited > 0 {
			attrs = append(attrs, RateLimitedAttr.Int(f.rateLimited))
		}
		if f.hr != nil {
			attrs = append(attrs, semconv.HTTPResponseStatusCode(f.hr.StatusCode))
		}
		if err != nil {
			typ := fmt.Sprintf("%T", err)
			if s := StatusCode(err); s != 0 {
				typ = strconv.Itoa(s)
			}
			attrs = append(attrs, semconv.ErrorTypeKey.String(typ))
			span.SetStatus(codes.Error, typ)
		}
		span.SetAttributes(attrs...)
	}
	span.End()
}

// injectTrace puts ctx's span context in req's headers, as the global
// propagator writes it; nothing when ctx carries no valid span.
func injectTrace(ctx context.Context, req *http.Request) {
	if trace.SpanContextFromContext(ctx).IsValid() {
		otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
	}
}
