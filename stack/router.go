package stack

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/rs/cors"
	"go.opentelemetry.io/otel/trace"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/guard"
	"github.com/workspacenet/facade/internal/base/accesslog"
	"github.com/workspacenet/facade/internal/base/tracing"
	"github.com/workspacenet/facade/internal/policy/redisx"
	"github.com/workspacenet/facade/playground"
	"github.com/workspacenet/facade/restclient"
)

// DefaultCORSHeaders are the request headers a browser may send to /graphql
// from an allowed origin: credentials, content negotiation, the preflight
// headers of CSRF prevention (graph/guard), the upstream call report, cache
// control, the request id, trace context (W3C, Sentry) and Apollo's client
// awareness. -cors-headers adds more.
var DefaultCORSHeaders = append([]string{
	"Authorization", "service-network-id", "Content-Type", "Accept",
	graph.TraceHeader, "Cache-Control", "Pragma", accesslog.RequestIDHeader,
	"traceparent", "tracestate", "baggage", "sentry-trace",
	"apollographql-client-name", "apollographql-client-version",
}, guard.PreflightHeaders...)

// routes are everything newRouter serves.
type routes struct {
	graphql     http.Handler
	playground  http.Handler // nil: no playground
	client      *restclient.Client
	redis       *redisx.Client // nil: no shared store
	cors        []string       // allowed origins; none: no CORS handler
	corsHeaders []string       // allowed request headers besides DefaultCORSHeaders
	logger      *slog.Logger
	tracer      trace.TracerProvider // nil: no tracing
	draining    *atomic.Bool         // set by Stack.Drain
}

// newRouter adds every route of the facade in one place, behind the access
// log (request id, one line per request) and, when origins are configured,
// CORS.
func newRouter(d routes) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/graphql", d.graphql)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.Handle("GET /readyz", readyHandler(d.client, d.redis, d.draining, false))
	if d.playground != nil {
		mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
		mux.Handle("GET /{$}", d.playground)
		mux.Handle("GET /playground/", d.playground)
	}
	var h http.Handler = mux
	if len(d.cors) > 0 {
		// rs/cors treats an empty allowlist as "*": with no origins
		// configured no CORS handler is installed (same-origin only).
		h = cors.New(cors.Options{
			AllowedOrigins:   d.cors,
			AllowedMethods:   []string{http.MethodGet, http.MethodPost},
			AllowedHeaders:   append(slices.Clone(DefaultCORSHeaders), d.corsHeaders...),
			ExposedHeaders:   []string{accesslog.RequestIDHeader},
			AllowCredentials: true,
			MaxAge:           600,
		}).Handler(h)
	}
	h = closeWhileDraining(d.draining, h)
	h = accesslog.Middleware(d.logger, h)
	if d.tracer != nil {
		// Outside the access log, so its line carries the request's span.
		h = tracing.Handler(h, d.tracer, "/graphql", "/healthz", "/readyz")
	}
	return h
}

// closeWhileDraining answers with "Connection: close" once draining is set,
// so keep-alive clients open their next connection through the load
// balancer (to another replica) instead of reusing this one.
func closeWhileDraining(draining *atomic.Bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if draining.Load() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// readyHandler answers 503 {"status": "draining"} once draining is set
// (Stack.Drain), else 200 {"status": "ready"}: readiness says whether this
// replica should receive requests, and it should unless it is stopping.
// Neither the upstream nor Redis is asked: an upstream that is down is down
// for every replica alike, and taking them all out of the Service would
// turn each client's coded GraphQL error (UPSTREAM_UNAVAILABLE, with the
// data the cache still answers) into a connection error; a Redis that is
// down leaves the replica serving on its own state. With detail (the
// metrics port's route, for operators) the body also says what is degraded:
// "degraded": ["upstream", "redis"] as they apply, "upstream":
// {"reachable", "error"} from one request without credentials
// (restclient's Ping, within 2 s) and "redis": {"healthy", "since",
// "lastError"}.
func readyHandler(client *restclient.Client, rc *redisx.Client, draining *atomic.Bool, detail bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if draining.Load() {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
			return
		}
		if !detail {
			writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		body := map[string]any{"status": "ready"}
		degraded := []string{}
		upstream := map[string]any{"reachable": true}
		if err := client.Ping(ctx); err != nil {
			upstream["reachable"], upstream["error"] = false, err.Error()
			degraded = append(degraded, "upstream")
		}
		body["upstream"] = upstream
		if rc != nil {
			st := rc.Status()
			body["redis"] = st
			if !st.Healthy {
				degraded = append(degraded, "redis")
			}
		}
		if len(degraded) > 0 {
			body["degraded"] = degraded
		}
		writeJSON(w, http.StatusOK, body)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// demoQuery is the query the playground opens with in demo mode, with the
// first demo location as $location.
const demoQuery = `# Welcome to the Workspace Network GraphQL facade.
# The demo credentials are already in the Headers tab below: press Run.
query Dashboard($location: ID!) {
  location(id: $location) {
    products {
      title
      options { title price { money { amount currencyCode } } }
    }
    orders(first: 5) {
      nodes {
        number
        status
        product { title }
        option { title }
      }
    }
    transactions(first: 5) {
      nodes {
        amount
        currencyCode
        type
        status
        booking { resource { title capacity } }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}
`

// demoSubscription is the playground's second tab in demo mode, on the
// demo activity's location (restserver.DemoManifest.ActivityLocation),
// where the activity (-demo-activity) makes an order or a payment every
// few seconds.
const demoSubscription = `# Live data: new orders and their status changes in the demo location.
# The demo makes a new order or payment there every few seconds: press Run,
# then wait for the next poll (docs/live-data.md). The Upstream calls panel
# shows, for each event, the poll that saw it and the loads of its links.
subscription LiveOrders($location: ID!) {
  orderEvents(locationId: $location) {
    kind
    at
    pollIntervalMs
    node {
      number
      status
      product { title refundPolicy }
      option { title }
    }
  }
}
`

// playgroundHandler is GraphiQL, prefilled with the demo credentials and
// query when the upstream is the embedded demo, with the upstream calls panel
// when c.Graph.UpstreamTrace; nil when c turns it off.
func playgroundHandler(c Config, demo *Upstream) http.Handler {
	if !c.Playground {
		return nil
	}
	// The page asks for the upstream call report, and shows it, wherever
	// the endpoint answers it (by default: with the embedded demo only).
	pc := playground.Config{Title: "Workspace Network GraphQL", Endpoint: "/graphql", UpstreamTrace: c.Graph.UpstreamTrace}
	if demo != nil {
		m := demo.Manifest
		pc.DefaultHeaders = map[string]string{
			"Authorization":      "Bearer " + m.BearerToken,
			"service-network-id": m.NetworkID,
		}
		pc.DefaultQuery = demoQuery
		if !c.LiveOff {
			pc.ExampleSubscription = demoSubscription
		}
		if locs := m.IDs["location"]; len(locs) > 0 {
			pc.DefaultVariables = map[string]any{"location": locs[0]}
			// The demo activity's location: the subscription shows events.
			pc.ExampleSubscriptionVariables = map[string]any{"location": m.ActivityLocation()}
		}
	}
	return playground.Handler(pc)
}
