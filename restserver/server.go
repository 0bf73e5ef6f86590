// Package restserver is a local implementation of the Workspace Network
// Service REST API (../shared/spec/workspace-network-api.md) on SQLite: every
// operation of restclient's table, Basic and Bearer authentication with scopes, tenancy per
// network, encrypted page tokens, deterministic demo data and test hooks.
package restserver

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/workspacenet/facade/internal/base/sealbox"
	"github.com/workspacenet/facade/internal/base/tracing"
	"github.com/workspacenet/facade/restclient"

	"github.com/workspacenet/facade/restserver/hooks"
	"github.com/workspacenet/facade/restserver/openapi"
	"github.com/workspacenet/facade/restserver/wire"
)

// Config configures a Server.
type Config struct {
	DBPath    string           // SQLite file path; ":memory:" for a private in-memory database
	DemoScale int              // >0: if the database holds no network, generate demo data at this scale
	Now       func() time.Time // clock; nil = time.Now
	Logger    *slog.Logger     // nil = discard
	Hooks     *hooks.Hooks     // nil = a fresh one
	// RateLimit, when PerSecond > 0, answers 429 above that many requests
	// per second per client, as the real API does (hooks.RateLimit).
	RateLimit hooks.RateLimit
	// TestEndpoints serves the test-only endpoints: GET /_stats (the
	// counters), DELETE /_stats and POST /_stats/reset (reset them). Off,
	// they answer 404 like any unknown path; Server.Hooks is there either way.
	// With them, POST /_test/{table}/{id}/set and .../copy change records
	// as the real system does outside the API (testchanges.go).
	TestEndpoints bool
	// TracerProvider, when set, traces the service: a server span per
	// request continuing the caller's trace (traceparent), named by its
	// route ("GET /resources/v1/{id}"), and a child span per SQL statement.
	// nil: no tracing.
	TracerProvider trace.TracerProvider
	// Instrument, when set, wraps the service's handler (metrics); pattern
	// returns the route a request matches as registered ("GET
	// /resources/v1/{id}"; "/" for an unknown path).
	Instrument func(next http.Handler, pattern func(*http.Request) string) http.Handler
}

// Server is the REST service. It is safe for concurrent use.
type Server struct {
	db      *store
	hooks   *hooks.Hooks
	now     func() time.Time
	log     *slog.Logger
	pageKey []byte
	// pageBox seals nextPageTokens (paging.go), keyed from pageKey.
	pageBox *sealbox.Box
	handler http.Handler
	// testEndpoints is Config.TestEndpoints.
	testEndpoints bool
	instrument    func(http.Handler, func(*http.Request) string) http.Handler

	stop     context.CancelFunc
	wg       sync.WaitGroup
	closeErr error
	once     sync.Once
}

// New opens the database (WAL), applies the embedded migrations, generates
// demo data when cfg.DemoScale > 0 and the database holds no network yet, and
// renews the demo bearer tokens now and every 30 minutes until Close.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.DBPath == "" {
		return nil, errors.New("restserver: Config.DBPath is required (use \":memory:\" for tests)")
	}
	s := &Server{now: cfg.Now, log: cfg.Logger, hooks: cfg.Hooks, testEndpoints: cfg.TestEndpoints, instrument: cfg.Instrument}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.hooks == nil {
		s.hooks = hooks.New()
	}
	if cfg.RateLimit.PerSecond < 0 {
		return nil, fmt.Errorf("restserver: RateLimit.PerSecond %d is negative", cfg.RateLimit.PerSecond)
	}
	if cfg.RateLimit.PerSecond > 0 {
		s.hooks.SetRateLimit(cfg.RateLimit)
	}
	handler, err := s.routes()
	if err != nil {
		return nil, err
	}
	if cfg.TracerProvider != nil {
		tracing.SetPropagator()
		handler = tracing.Handler(handler, cfg.TracerProvider)
	}
	s.handler = handler
	db, err := openStore(ctx, cfg.DBPath, cfg.TracerProvider)
	if err != nil {
		return nil, err
	}
	s.db = db
	s.pageKey, err = db.setting(ctx, "page_token_key", func() []byte {
		b := make([]byte, 32)
		rand.Read(b)
		return b
	})
	if err == nil {
		s.pageBox = sealbox.New(s.pageKey, pageTokenInfo)
	}
	if err != nil {
		db.close()
		return nil, err
	}
	if cfg.DemoScale > 0 {
		if err := s.seedDemo(ctx, cfg.DemoScale); err != nil {
			db.close()
			return nil, err
		}
	}
	if err := s.renewDemoTokens(ctx); err != nil {
		db.close()
		return nil, err
	}
	bg, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.wg.Go(func() {
		t := time.NewTicker(30 * time.Minute)
		defer t.Stop()
		for {
			select {
			case <-bg.Done():
				return
			case <-t.C:
				if err := s.renewDemoTokens(bg); err != nil && bg.Err() == nil {
					s.log.Error("renew demo tokens", "err", err)
				}
			}
		}
	})
	return s, nil
}

// Handler returns the HTTP handler of every route.
func (s *Server) Handler() http.Handler { return s.handler }

// Hooks returns the latency, fault and counter hooks.
func (s *Server) Hooks() *hooks.Hooks { return s.hooks }

// Close stops background work and closes the database. It is idempotent.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.stop()
		s.wg.Wait()
		s.closeErr = s.db.close()
	})
	return s.closeErr
}

// handlerFunc handles an authenticated request: it returns the status and the
// body to write, or an error written by writeError.
type handlerFunc func(r *http.Request, c *caller) (int, any, error)

// route is one operation of restclient's table with its handler.
type route struct {
	op     restclient.Operation
	handle handlerFunc
}

// handlers returns the handler of each operation, keyed by its row in
// restclient's table (whose pattern, "METHOD /path/template", is also its
// hooks key).
func (s *Server) handlers() map[restclient.Row]handlerFunc {
	return map[restclient.Row]handlerFunc{
		restclient.OpCreateCreditNote:   s.createCreditNote,
		restclient.OpListCreditNotes:    s.listCreditNotes,
		restclient.OpListInvoiceItems:   s.getInvoiceItems,
		restclient.OpCreateBooking:      s.createBooking,
		restclient.OpGetResource:        byID[wire.Resource](s, restclient.OpGetResource, "resources"),
		restclient.OpCreateVisit:        s.createVisit,
		restclient.OpGetVisit:           byID[wire.Visit](s, restclient.OpGetVisit, "visits"),
		restclient.OpUpdateVisit:        s.updateVisit,
		restclient.OpCreateVisitRequest: s.createVisitRequest,
		restclient.OpCreatePost:         s.createPost,
		restclient.OpUpdatePost:         s.updatePost,
		restclient.OpListComments:       s.listComments,
		restclient.OpListTransactions:   s.listTransactions,
		restclient.OpListProducts:       s.listProducts,
		restclient.OpGetProduct:         byID[wire.Product](s, restclient.OpGetProduct, "products"),
		restclient.OpListOrders:         s.listOrders,
		restclient.OpListRedemptions:    s.listRedemptions,
		restclient.OpGetEvent:           byID[wire.Event](s, restclient.OpGetEvent, "events"),
	}
}

// byID is the handler of op, a GET of one record by the id in its path:
// the record of table in the caller's network, decoded as a W and answered
// under op's Key ({"event": {...}}); 404 when there is none (a record of
// another network included).
func byID[W any](s *Server, op restclient.Row, table string) handlerFunc {
	o := op.Row()
	param, notFoundMsg := o.TagParams()[0], o.Key+" not found"
	return func(r *http.Request, c *caller) (int, any, error) {
		id, err := pathID(r, param)
		if err != nil {
			return 0, nil, err
		}
		var v W
		if err := getDoc(r.Context(), s.db.read, table, c.network, id, &v); err != nil {
			return 0, nil, notFound(err, notFoundMsg)
		}
		return http.StatusOK, map[string]any{o.Key: &v}, nil
	}
}

// bindRoutes pairs every operation of ops with its handler by pattern. An
// operation without a handler, or a handler of no operation, is an error.
func bindRoutes(ops []restclient.Operation, handlers map[restclient.Row]handlerFunc) ([]route, error) {
	byPattern := make(map[string]handlerFunc, len(handlers))
	for op, h := range handlers {
		byPattern[op.Row().Pattern()] = h
	}
	var routes []route
	var missing []string
	seen := make(map[string]bool, len(ops))
	for _, op := range ops {
		p := op.Pattern()
		seen[p] = true
		h, ok := byPattern[p]
		if !ok || h == nil {
			missing = append(missing, p)
			continue
		}
		routes = append(routes, route{op: op, handle: h})
	}
	var extra []string
	for p := range byPattern {
		if !seen[p] {
			extra = append(extra, p)
		}
	}
	slices.Sort(extra)
	var errs []error
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("restserver: operations without a handler: %s", strings.Join(missing, ", ")))
	}
	if len(extra) > 0 {
		errs = append(errs, fmt.Errorf("restserver: handlers of no operation: %s", strings.Join(extra, ", ")))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return routes, nil
}

// routes registers every route in one place: the operations of restclient's
// table, the token endpoint, the stats (with Config.TestEndpoints only), the
// OpenAPI document and /healthz.
func (s *Server) routes() (http.Handler, error) {
	ops, err := bindRoutes(restclient.Operations(), s.handlers())
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	for _, rt := range ops {
		mux.Handle(rt.op.Pattern(), s.hooks.Wrap(rt.op.Pattern(), s.operation(rt)))
	}
	mux.Handle("POST /oauth2/token", s.hooks.Wrap("POST /oauth2/token", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.handleToken(w, r); err != nil {
			writeError(w, r, s.log, err)
		}
	})))
	if s.testEndpoints {
		stats := s.hooks.StatsHandler()
		mux.Handle("/_stats", stats)
		mux.Handle("/_stats/reset", stats)
		s.testChanges(mux)
	}
	mux.Handle("GET /openapi.json", openapi.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if err := s.db.ping(r.Context()); err != nil {
			writeError(w, r, s.log, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// A known path with another method: 405 with the path's methods.
		if allow := allowedMethods(mux, r); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, r, s.log, &apiError{kindMethod, fmt.Sprintf("method %s is not allowed on %s; allowed: %s",
				r.Method, r.URL.Path, strings.Join(allow, ", "))})
			return
		}
		writeError(w, r, s.log, notFoundf("no operation %s %s", r.Method, r.URL.Path))
	})
	if s.instrument != nil {
		return s.instrument(mux, func(r *http.Request) string { _, p := mux.Handler(r); return p }), nil
	}
	return mux, nil
}

// routeMethods are the methods the routes use, in the order Allow lists
// them.
var routeMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// allowedMethods returns the methods of routeMethods that mux routes r's
// path to a pattern other than the catch-all "/": none for an unknown path.
func allowedMethods(mux *http.ServeMux, r *http.Request) []string {
	var allow []string
	for _, m := range routeMethods {
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
		if _, pattern := mux.Handler(probe); pattern != "" && pattern != "/" {
			allow = append(allow, m)
		}
	}
	return allow
}

// operation authenticates, checks the scope and runs rt's handler.
func (s *Server) operation(rt route) http.Handler {
	scopes := rt.op.Scopes()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, body, err := func() (int, any, error) {
			c, err := s.authenticate(r, rt.op.RequireNetwork)
			if err != nil {
				return 0, nil, err
			}
			if rt.op.BearerOnly && !c.bearer {
				return 0, nil, unauthorizedf("this operation accepts Bearer authentication only")
			}
			ok := false
			for _, sc := range scopes {
				ok = ok || c.has(sc)
			}
			if !ok {
				return 0, nil, forbiddenf("missing scope: %s", strings.Join(scopes, " or "))
			}
			return rt.handle(r, c)
		}()
		if err != nil {
			writeError(w, r, s.log, err)
			return
		}
		writeJSON(w, status, body)
	})
}
