package tracing_test

import (
	"strings"
	"testing"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

// TestCallerTraceHeadersAreNotForwarded: a caller's tracestate and baggage
// never reach the upstream, whatever they hold, with or without a
// traceparent: every upstream request carries the facade's own
// traceparent (the caller's trace id when it sent one, the facade's span
// id) and no tracestate or baggage.
func TestCallerTraceHeadersAreNotForwarded(t *testing.T) {
	env, _, _ := tracedEnv(t)
	const (
		state   = "evil=injected,congo=t61rcWkgMzE"
		baggage = "userId=alice,isAdmin=true,session=%0D%0AX-Injected%3A%201"
	)
	for name, headers := range map[string]map[string]string{
		"with traceparent":    {"traceparent": callerParent, "tracestate": state, "baggage": baggage},
		"without traceparent": {"tracestate": state, "baggage": baggage},
	} {
		t.Run(name, func(t *testing.T) {
			env.Hooks().Reset()
			resp := env.Do(t, env.Bearer(), `query($id: ID!) { resource(id: $id) { id parent { id } } }`,
				map[string]any{"id": env.ID(t, "resource", 0)}, headers)
			var data struct{ Resource struct{ ID string } }
			testenv.MustData(t, resp, &data)
			seen := env.Hooks().Seen()
			_, total := env.Calls()
			if total == 0 || int64(len(seen)) != total {
				t.Fatalf("the service saw %d requests, counted %d", len(seen), total)
			}
			for _, s := range seen {
				if s.Tracestate != "" || s.Baggage != "" {
					t.Errorf("%s: the upstream received tracestate %q, baggage %q from the caller", s.Route, s.Tracestate, s.Baggage)
				}
				parts := strings.Split(s.Traceparent, "-")
				if len(parts) != 4 || parts[2] == callerSpan {
					t.Errorf("%s: traceparent %q, want the facade's own span", s.Route, s.Traceparent)
				}
				if _, continued := headers["traceparent"]; continued && len(parts) == 4 && parts[1] != callerTrace {
					t.Errorf("%s: traceparent %q does not continue the caller's trace %s", s.Route, s.Traceparent, callerTrace)
				}
			}
		})
	}
}
