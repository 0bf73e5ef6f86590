// Package metrics is the Prometheus instrumentation of the facade and of the
// local REST service: the collectors, one non-global registry per stack
// (tests start several stacks in one process), the recording entry points the
// other packages call, and the /metrics listener.
//
// Every recording method is a no-op on a nil *Facade or *RESTServer (metrics
// off), so callers need no checks. Label values are bounded by construction:
// HTTP methods and route templates of restclient's operation table, status
// classes, error codes of graph/errcode, cache families, loader names and
// operation names from a bounded set (Names). Never a credential, a network
// id, a record id or query text. docs/operating.md, "Metrics", lists every
// metric.
package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultAddr is the metrics listener of `go run .` in demo mode.
const DefaultAddr = "127.0.0.1:9464"

// Duration buckets, in seconds: a GraphQL request or an upstream call (up to
// the 30 s request deadline), and a wait for the rate budget.
var (
	durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
	waitBuckets     = []float64{0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
)

// NewRegistry returns a registry holding the Go runtime and process
// collectors.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves reg's metrics in the Prometheus exposition formats.
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg, ErrorHandling: promhttp.ContinueOnError})
}

// Server is a listener serving GET /metrics, and the routes added with
// Handle (operators' details that the public port does not show).
type Server struct {
	addr string
	hs   *http.Server
	mux  *http.ServeMux
}

// Listen starts serving reg on addr ("host:port"; port 0 picks one).
func Listen(addr string, reg *prometheus.Registry, logger *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", Handler(reg))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
	if logger != nil {
		hs.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
	}
	go func() { _ = hs.Serve(ln) }()
	return &Server{addr: ln.Addr().String(), hs: hs, mux: mux}, nil
}

// Handle serves h at pattern (an http.ServeMux pattern) beside /metrics.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Addr is the address actually listened on (host:port).
func (s *Server) Addr() string { return s.addr }

// URL is the metrics endpoint, http://host:port/metrics.
func (s *Server) URL() string { return "http://" + s.addr + "/metrics" }

// Shutdown stops serving, giving a scrape in flight until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	if err := s.hs.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// statusClass is "2xx", "3xx", "4xx" or "5xx" for an HTTP status, "error"
// for none (0) or anything else.
func statusClass(status int) string {
	switch {
	case status >= 200 && status < 300:
		return "2xx"
	case status >= 300 && status < 400:
		return "3xx"
	case status >= 400 && status < 500:
		return "4xx"
	case status >= 500 && status < 600:
		return "5xx"
	}
	return "error"
}

// method bounds an HTTP method to the ones the API and the facade use.
func method(m string) string {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions:
		return m
	}
	return "other"
}
