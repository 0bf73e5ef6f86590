package tracing_test

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/workspacenet/facade/internal/base/tracing"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// receiver collects what an OTLP exporter sends, over HTTP or gRPC.
type receiver struct {
	coltracepb.UnimplementedTraceServiceServer
	mu  sync.Mutex
	got []*tracepb.ResourceSpans
}

func (r *receiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, req.ResourceSpans...)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// ServeHTTP is OTLP/HTTP with protobuf bodies: POST /v1/traces.
func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want POST /v1/traces application/x-protobuf", http.StatusBadRequest)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	var in coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &in)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out, _ := r.Export(req.Context(), &in)
	b, _ = proto.Marshal(out)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// exported is a received span with its resource's service.name.
type exported struct {
	service string
	span    *tracepb.Span
}

func (r *receiver) spans() []exported {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []exported
	for _, rs := range r.got {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				out = append(out, exported{service, s})
			}
		}
	}
	return out
}

func stringAttr(attrs []*commonpb.KeyValue, key string) string {
	for _, a := range attrs {
		if a.Key == key {
			return a.GetValue().GetStringValue()
		}
	}
	return ""
}

// The program's exporter set up the way it reads it (tracing.FromEnv over
// the process environment) exports the trace of a query through OTLP, over
// HTTP (protobuf) and over gRPC, to a receiver that decodes the
// ExportTraceServiceRequest: the facade's spans under OTEL_SERVICE_NAME,
// the local service's under its own name, all in the caller's trace.
func TestOTLPExportFromEnv(t *testing.T) {
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			recv := &receiver{}
			var endpoint string
			if protocol == "grpc" {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				gs := grpc.NewServer()
				coltracepb.RegisterTraceServiceServer(gs, recv)
				go func() { _ = gs.Serve(ln) }()
				t.Cleanup(gs.Stop)
				endpoint = "http://" + ln.Addr().String()
			} else {
				hs := httptest.NewServer(recv)
				t.Cleanup(hs.Close)
				endpoint = hs.URL
			}
			t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			t.Setenv("OTEL_SERVICE_NAME", "facade-under-test")
			t.Setenv("OTEL_TRACES_SAMPLER", "parentbased_always_on")
			p, err := tracing.FromEnv(t.Context(), os.Getenv)
			if err != nil || p == nil {
				t.Fatalf("FromEnv: %v, %v", p, err)
			}
			t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
			env := testenv.New(t, testenv.Options{Config: func(c *stack.Config) {
				c.TracerProvider, c.UpstreamTracerProvider = p.Facade, p.Upstream
			}})
			resp := env.Do(t, env.Bearer(), `query FirstQuery($id: ID!) { resource(id: $id) { id title parent { id } } }`,
				map[string]any{"id": env.ID(t, "resource", 0)}, map[string]string{"traceparent": callerParent})
			var data struct{ Resource struct{ ID string } }
			testenv.MustData(t, resp, &data)
			_, total := env.Calls()
			if total == 0 {
				t.Fatal("no upstream call")
			}

			// Flush until the receiver holds the facade's server span and
			// one server span of the service per call.
			var facadeServer, serviceServer, clients int
			testenv.WaitFor(t, "the exported spans", func() bool {
				_ = p.Facade.ForceFlush(t.Context())
				_ = p.Upstream.ForceFlush(t.Context())
				facadeServer, serviceServer, clients = 0, 0, 0
				for _, e := range recv.spans() {
					switch {
					case e.span.Kind == tracepb.Span_SPAN_KIND_SERVER && e.service == "facade-under-test" && e.span.Name == "query FirstQuery":
						facadeServer++
					case e.span.Kind == tracepb.Span_SPAN_KIND_SERVER && e.service == tracing.UpstreamService:
						serviceServer++
					case e.span.Kind == tracepb.Span_SPAN_KIND_CLIENT && e.service == "facade-under-test":
						clients++
					}
				}
				return facadeServer == 1 && int64(serviceServer) == total && int64(clients) == total
			})
			for _, e := range recv.spans() {
				if got := hex.EncodeToString(e.span.TraceId); got != callerTrace {
					t.Errorf("%s span %q in trace %s, want %s", e.service, e.span.Name, got, callerTrace)
				}
				if e.span.Kind == tracepb.Span_SPAN_KIND_SERVER && e.service == tracing.UpstreamService &&
					!strings.HasPrefix(e.span.Name, "GET /resources/v1/") {
					t.Errorf("service span %q, want its route", e.span.Name)
				}
				if e.span.Kind == tracepb.Span_SPAN_KIND_CLIENT && e.service == "facade-under-test" &&
					stringAttr(e.span.Attributes, "url.template") != restclient.OpGetResource.Route {
					t.Errorf("client span %q: url.template %q", e.span.Name, stringAttr(e.span.Attributes, "url.template"))
				}
			}
		})
	}
}
