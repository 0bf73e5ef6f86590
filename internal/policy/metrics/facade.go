package metrics

import (
	"context"
	"net/http"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/restclient"
)

// Options configure a Facade's operation-name labels (Names).
type Options struct {
	// Operations are names always used as labels (the trusted documents'
	// operations).
	Operations []string
	// OnlyOperations: names not in Operations are "other" (trusted documents
	// are on). Otherwise the first MaxOperations other names seen are kept.
	OnlyOperations bool
	// MaxOperations bounds the names kept besides Operations (0:
	// DefaultMaxOperations).
	MaxOperations int
	// Refusal names why a call that got no answer was never sent (the
	// reason label of facade_upstream_calls_refused_total), "" when it may
	// have been sent; the endpoint's classifier (graph.RefusalReason). Nil:
	// no call is counted as refused.
	Refusal func(error) string
}

// DefaultMaxOperations is Options.MaxOperations' default.
const DefaultMaxOperations = 50

// Facade holds the facade's metrics. A nil *Facade records nothing.
type Facade struct {
	names *Names

	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	errs     *prometheus.CounterVec
	inFlight prometheus.Gauge

	calls       *prometheus.CounterVec
	callTime    *prometheus.HistogramVec
	retries     *prometheus.CounterVec
	rateLimited *prometheus.CounterVec
	refused     *prometheus.CounterVec
	shared      *prometheus.CounterVec
	budgetWait  prometheus.Histogram

	cache   *prometheus.CounterVec
	batch   *prometheus.HistogramVec
	hooks   restclient.CallHooks
	refusal func(error) string
	mu      sync.Mutex
	source  sources
}

// sources are the parts read at scrape time, attached after New.
type sources struct {
	admission Admission
	budget    *budget.Budget
	client    *restclient.Client
}

// Admission is what graph/admission's controller tells: cost units held by
// the operations executing, the bound, and the operations waiting for room.
type Admission interface {
	InFlight() int64
	Limit() int64
	Waiting() int64
}

// NewFacade registers the facade's metrics on reg.
func NewFacade(reg prometheus.Registerer, o Options) *Facade {
	opLabels := []string{"operation_type", "operation_name", "code"}
	callLabels := []string{"method", "route"}
	f := &Facade{
		names: NewNames(o), refusal: o.Refusal,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "facade_graphql_requests_total",
			Help: "GraphQL requests answered, by operation type, operation name (bounded; others \"other\") and outcome code (\"ok\" or the first error's extensions.code)."}, opLabels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "facade_graphql_request_duration_seconds",
			Help: "Time to answer a GraphQL request, by operation type, operation name and outcome code.", Buckets: durationBuckets}, opLabels),
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "facade_graphql_errors_total",
			Help: "GraphQL errors sent, by extensions.code (every error of every response)."}, []string{"code"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "facade_graphql_requests_in_flight",
			Help: "GraphQL requests being served."}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "facade_upstream_calls_total",
			Help: "Upstream calls made (retries included in one call; cache hits, refused and joined calls excluded), by method, route template and status class of the last answer (2xx, 3xx, 4xx, 5xx, or error: no answer or an unreadable one)."},
			append(callLabels, "status_class")),
		callTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "facade_upstream_call_duration_seconds",
			Help: "Time of an upstream call, its retries and back-off included, its rate-budget wait excluded, by method, route template and status class.", Buckets: durationBuckets},
			append(callLabels, "status_class")),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "facade_upstream_retries_total",
			Help: "Upstream requests sent again after a failed attempt (429s included), by method and route template."}, callLabels),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "facade_upstream_rate_limited_total",
			Help: "429 answers of the upstream, by method and route template."}, callLabels),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "facade_upstream_calls_refused_total",
			Help: "Upstream calls refused before anything was sent, by reason: call_cap (-max-upstream-calls), rate_budget (no slot before the deadline), circuit_open, credentials_refused (an earlier 401 of the request, or a credential refused within -credential-refused-ttl), bearer_only."},
			[]string{"reason"}),
		shared: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "facade_upstream_calls_shared_total",
			Help: "Upstream GETs answered by an identical GET another request had in flight (no request of their own), by method and route template."}, callLabels),
		budgetWait: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "facade_upstream_budget_wait_seconds",
			Help: "Time an upstream call waited for its client's rate budget (0 for most).", Buckets: waitBuckets}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "facade_cache_lookups_total",
			Help: "Response cache lookups, by route family and result (hit or miss)."}, []string{"family", "result"}),
		batch: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "facade_loader_batch_size",
			Help: "Distinct keys per loader batch, by loader.", Buckets: []float64{1, 2, 5, 10, 20, 50, 100}}, []string{"loader"}),
	}
	reg.MustRegister(f.requests, f.duration, f.errs, f.inFlight, f.calls, f.callTime, f.retries, f.rateLimited,
		f.refused, f.shared, f.budgetWait, f.cache, f.batch)
	gauge := func(name, help string, v func(s sources) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return v(f.sources()) })
	}
	reg.MustRegister(
		gauge("facade_admission_cost_in_flight", "Cost units held by the operations executing (-max-cost-in-flight).", func(s sources) float64 {
			if s.admission == nil {
				return 0
			}
			return float64(s.admission.InFlight())
		}),
		gauge("facade_admission_cost_limit", "The bound of facade_admission_cost_in_flight (-max-cost-in-flight; 0 = none).", func(s sources) float64 {
			if s.admission == nil {
				return 0
			}
			return float64(s.admission.Limit())
		}),
		gauge("facade_admission_waiting_operations", "Operations waiting for room under -max-cost-in-flight.", func(s sources) float64 {
			if s.admission == nil {
				return 0
			}
			return float64(s.admission.Waiting())
		}),
		gauge("facade_upstream_budget_waiting_calls", "Upstream calls waiting for a slot of their client's rate budget.", func(s sources) float64 {
			return float64(s.budget.Stats().Waiting)
		}),
		gauge("facade_upstream_budget_paused_clients", "Upstream clients whose rate budget is paused by a 429 or RateLimit headers saying nothing is left.", func(s sources) float64 {
			return float64(s.budget.Stats().Paused)
		}),
		gauge("facade_upstream_budget_clients", "Upstream clients the rate budget tracks.", func(s sources) float64 {
			return float64(s.budget.Stats().Clients)
		}),
		breakerCollector{f},
	)
	f.hooks = restclient.CallHooks{After: f.afterCall, Answered: f.answered}
	return f
}

func (f *Facade) sources() sources {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.source
}

// SetAdmission attaches the admission controller read by the
// facade_admission_* gauges.
func (f *Facade) SetAdmission(a Admission) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.source.admission = a
	f.mu.Unlock()
}

// SetBudget attaches the rate budget read by the facade_upstream_budget_*
// gauges (nil: pacing off, the gauges are 0).
func (f *Facade) SetBudget(b *budget.Budget) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.source.budget = b
	f.mu.Unlock()
}

// SetClient attaches the upstream client whose route breakers
// facade_upstream_breaker_state reports.
func (f *Facade) SetClient(c *restclient.Client) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.source.client = c
	f.mu.Unlock()
}

// CallHooks returns the hooks that record every upstream call of a request;
// install them outermost (first), so they also see the calls that inner
// hooks refuse.
func (f *Facade) CallHooks() restclient.CallHooks {
	if f == nil {
		return restclient.CallHooks{}
	}
	return f.hooks
}

// afterCall records one logical upstream call.
func (f *Facade) afterCall(ctx context.Context, info restclient.CallInfo) {
	if info.Status >= 200 && info.Status < 300 {
		if r := RequestFrom(ctx); r != nil {
			r.accepted.Store(true)
		}
	}
	if info.Cached {
		return // counted by the cache (CacheLookup)
	}
	if info.Status == 0 && info.Err != nil && f.refusal != nil {
		if reason := f.refusal(info.Err); reason != "" {
			f.refused.WithLabelValues(reason).Inc()
			return
		}
	}
	if info.Shared {
		f.shared.WithLabelValues(info.Method, info.Route).Inc()
		return
	}
	class := statusClass(info.Status)
	if info.Err != nil && info.Status < 300 {
		class = "error" // no answer, or a 2xx that did not decode
	}
	f.calls.WithLabelValues(info.Method, info.Route, class).Inc()
	f.callTime.WithLabelValues(info.Method, info.Route, class).Observe((info.Duration - info.Waited).Seconds())
	if info.Retries > 0 {
		f.retries.WithLabelValues(info.Method, info.Route).Add(float64(info.Retries))
	}
	f.budgetWait.Observe(info.Waited.Seconds())
}

// answered counts the 429 answers.
func (f *Facade) answered(_ context.Context, cs restclient.CallStart, resp *http.Response) {
	if resp.StatusCode == http.StatusTooManyRequests {
		f.rateLimited.WithLabelValues(cs.Method, cs.Route).Inc()
	}
}

// CacheLookup records a response cache lookup of family (internal/policy/cache).
func (f *Facade) CacheLookup(family string, hit bool) {
	if f == nil {
		return
	}
	result := "miss"
	if hit {
		result = "hit"
	}
	f.cache.WithLabelValues(family, result).Inc()
}

// LoaderBatch records a loader batch of n distinct keys (graph/loaders).
func (f *Facade) LoaderBatch(loader string, n int) {
	if f == nil {
		return
	}
	f.batch.WithLabelValues(loader).Observe(float64(n))
}

// breakerCollector reports the route breakers' states at scrape time.
type breakerCollector struct{ f *Facade }

var breakerDesc = prometheus.NewDesc("facade_upstream_breaker_state",
	"State of the circuit breaker of an upstream operation for every client: 0 closed, 1 half-open, 2 open.", []string{"method", "route"}, nil)

func (breakerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- breakerDesc }

func (c breakerCollector) Collect(ch chan<- prometheus.Metric) {
	client := c.f.sources().client
	if client == nil {
		return
	}
	for _, op := range restclient.Operations() {
		var v float64
		switch client.BreakerState(op.Method, op.Route) {
		case restclient.BreakerHalfOpen:
			v = 1
		case restclient.BreakerOpen:
			v = 2
		}
		ch <- prometheus.MustNewConstMetric(breakerDesc, prometheus.GaugeValue, v, op.Method, op.Route)
	}
}

// Request observes one GraphQL HTTP request; a nil *Request records nothing.
type Request struct {
	f     *Facade
	start time.Time

	mu         sync.Mutex
	opType     string
	opName     string
	codes      []string
	responded  bool
	ended      atomic.Bool
	skipRecord bool
	// accepted: an upstream call made for the request was answered 2xx
	// (from the upstream or the response cache), so its credentials are
	// good; only then may its operation name take a label slot.
	accepted atomic.Bool
}

type requestKey struct{}

// WithRequest returns ctx carrying r, for the call hooks (CallHooks) of the
// upstream calls made in it.
func WithRequest(ctx context.Context, r *Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// RequestFrom returns the *Request ctx carries (WithRequest), nil if none.
func RequestFrom(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	return r
}

// StartRequest counts a GraphQL request in flight until its End.
func (f *Facade) StartRequest() *Request {
	if f == nil {
		return nil
	}
	f.inFlight.Inc()
	return &Request{f: f, start: time.Now(), opType: "unknown", opName: "unknown"}
}

// SetOperation records the operation executed: its type ("query",
// "mutation", "subscription") and name ("" for an anonymous one).
func (r *Request) SetOperation(typ, name string) {
	if r == nil {
		return
	}
	if name == "" {
		name = "anonymous"
	}
	r.mu.Lock()
	r.opType, r.opName = typ, name
	r.mu.Unlock()
}

// Responded records the codes of a GraphQL response's errors, in order.
func (r *Request) Responded(codes ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.responded = true
	r.codes = append(r.codes, codes...)
	r.mu.Unlock()
}

// Skip makes End record nothing but the end of the request in flight (a
// CORS preflight is not a GraphQL request).
func (r *Request) Skip() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.skipRecord = true
	r.mu.Unlock()
}

// End records the request. refusals are the codes of a refusal made before
// any GraphQL response (graph/guard): used when Responded was never called;
// with neither, the request was refused by the GraphQL transport and counts
// as BAD_REQUEST.
func (r *Request) End(refusals ...string) {
	if r == nil || r.ended.Swap(true) {
		return
	}
	f := r.f
	f.inFlight.Dec()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.skipRecord {
		return
	}
	codes := r.codes
	if !r.responded {
		codes = refusals
		if len(codes) == 0 {
			codes = []string{"BAD_REQUEST"}
		}
	}
	outcome := "ok"
	for i, c := range codes {
		c = code(c)
		if i == 0 {
			outcome = c
		}
		f.errs.WithLabelValues(c).Inc()
	}
	name := f.names.Label(r.opName, r.accepted.Load())
	typ := r.opType
	switch typ {
	case "query", "mutation", "subscription", "unknown":
	default:
		typ = "unknown"
	}
	f.requests.WithLabelValues(typ, name, outcome).Inc()
	f.duration.WithLabelValues(typ, name, outcome).Observe(time.Since(r.start).Seconds())
}

var codeShape = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

// code bounds an extensions.code label: the facade's codes (graph/errcode)
// and gqlgen's have this shape; anything else is "other".
func code(c string) string {
	if codeShape.MatchString(c) {
		return c
	}
	return "other"
}
