package metrics

import (
	"net/http"
	"strings"
	"time"

	"github.com/workspacenet/facade/internal/base/httpx"

	"github.com/prometheus/client_golang/prometheus"
)

// RESTServer holds the local REST service's metrics (restserver). A nil
// *RESTServer records nothing.
type RESTServer struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
}

// NewRESTServer registers the local REST service's metrics on reg.
func NewRESTServer(reg prometheus.Registerer) *RESTServer {
	labels := []string{"method", "route", "status_class"}
	m := &RESTServer{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "restserver_http_requests_total",
			Help: "Requests the local REST service answered, by method, route template (\"unmatched\" for unknown paths) and status class (2xx, 3xx, 4xx, 5xx; error: no status written, a reset connection)."}, labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "restserver_http_request_duration_seconds",
			Help: "Time the local REST service took to answer, injected latency included, by method, route template and status class.", Buckets: durationBuckets}, labels),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "restserver_http_requests_in_flight",
			Help: "Requests the local REST service is serving."}),
	}
	reg.MustRegister(m.requests, m.duration, m.inFlight)
	return m
}

// Instrument wraps the local service's handler with the request metrics;
// pattern returns the route a request matches as registered ("GET
// /resources/v1/{id}", "/_stats"; "/" or "" for none). It returns next itself
// on a nil *RESTServer. restserver.Config.Instrument takes it.
func (m *RESTServer) Instrument(next http.Handler, pattern func(*http.Request) string) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.inFlight.Inc()
		defer m.inFlight.Dec()
		start := time.Now()
		me, route, ok := strings.Cut(pattern(r), " ")
		if !ok {
			me, route = method(r.Method), me
		}
		if route == "/" || route == "" {
			route = "unmatched"
		}
		sw := &httpx.StatusWriter{ResponseWriter: w}
		defer func() {
			class := statusClass(sw.Code)
			m.requests.WithLabelValues(me, route, class).Inc()
			m.duration.WithLabelValues(me, route, class).Observe(time.Since(start).Seconds())
		}()
		next.ServeHTTP(sw, r)
	})
}
