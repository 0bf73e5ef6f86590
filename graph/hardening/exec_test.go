package hardening_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/graph/trusted"
	"github.com/workspacenet/facade/internal/base/accesslog"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver/hooks"
)

// TestRequestDeadlineWithHangingRelation: a nested relation whose upstream
// never answers ends with the request deadline, as null with
// UPSTREAM_UNAVAILABLE, and the rest of the data arrives. Only the deadline
// ends the hang (no retries, the attempt timeout is longer), and the rest of
// the query (the transactions list) must be answered within it: 2s leaves a
// loaded machine a wide margin. The client gives up after 10s.
func TestRequestDeadlineWithHangingRelation(t *testing.T) {
	env := testenv.New(t, testenv.Options{
		GraphOpts:  func(o *graph.Options) { o.RequestTimeout = 2 * time.Second },
		ClientOpts: []restclient.Option{restclient.WithRetry(restclient.RetryPolicy{})},
	})
	env.Hooks().SetFault(restclient.OpGetResource.Pattern(), hooks.Fault{Kind: hooks.FaultHang, Rate: 1})
	loc := env.ID(t, "location", 0)
	r := query(t, env, env.Bearer(), `{ location(id: "`+loc+`") {
		transactions(first: 20) { nodes { id booking { resource { capacity } } } } } }`, nil)
	if r.Status != http.StatusOK || len(r.Errors) == 0 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	for _, e := range r.Errors {
		if e.Code() != "UPSTREAM_UNAVAILABLE" || !strings.HasSuffix(e.PathString(), "booking.resource") {
			t.Errorf("error %s at %s: %s", e.Code(), e.PathString(), e.Message)
		}
	}
	var d struct {
		Location struct {
			Transactions struct {
				Nodes []struct{ ID string } `json:"nodes"`
			} `json:"transactions"`
		} `json:"location"`
	}
	if err := json.Unmarshal(r.Data, &d); err != nil || len(d.Location.Transactions.Nodes) == 0 || d.Location.Transactions.Nodes[0].ID == "" {
		t.Fatalf("partial data missing: %v %s", err, r.Data)
	}
}

func TestAutomaticPersistedQueries(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	q := `query APQ { resource(id: "` + env.ID(t, "resource", 0) + `") { id title } }`
	pq := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": trusted.Hash(q)}}

	r := post(t, env, env.Bearer(), gqlclient.Request{Extensions: pq}, nil)
	only(t, r, "PERSISTED_QUERY_NOT_FOUND")
	r = post(t, env, env.Bearer(), gqlclient.Request{Query: q, Extensions: pq}, nil)
	if len(r.Errors) > 0 {
		t.Fatalf("register: %s", r.Raw)
	}
	r = post(t, env, env.Bearer(), gqlclient.Request{Extensions: pq}, nil)
	if len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"title"`) {
		t.Fatalf("by hash: %s", r.Raw)
	}
}

func TestTrustedDocuments(t *testing.T) {
	doc := `query Trusted($id: ID!) { resource(id: $id) { id title } }`
	dir := t.TempDir()
	file := filepath.Join(dir, "docs.json")
	raw, _ := json.Marshal(map[string]string{trusted.Hash(doc): doc})
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	docs, err := trusted.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.New(t, testenv.Options{GraphOpts: func(o *graph.Options) { o.TrustedDocuments = docs }})
	vars := map[string]any{"id": env.ID(t, "resource", 0)}
	pq := func(h string) map[string]any {
		return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": h}}
	}

	refused := []struct {
		name string
		req  gqlclient.Request
		code string
	}{
		{"free-form query", gqlclient.Request{Query: doc, Variables: vars}, "OPERATION_NOT_TRUSTED"},
		{"unknown hash", gqlclient.Request{Extensions: pq(trusted.Hash("{ __typename }")), Variables: vars}, "PERSISTED_QUERY_NOT_FOUND"},
		{"query differing from its hash", gqlclient.Request{Query: "{ __typename }", Extensions: pq(trusted.Hash(doc))}, "OPERATION_NOT_TRUSTED"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			env.ResetCalls()
			only(t, post(t, env, env.Bearer(), tc.req, nil), tc.code)
			env.ExpectNoCalls(t)
		})
	}
	accepted := map[string]gqlclient.Request{
		"hash":            {Extensions: pq(trusted.Hash(doc)), Variables: vars},
		"hash and query":  {Query: doc, Extensions: pq(trusted.Hash(doc)), Variables: vars},
		"documentId":      {DocumentID: "sha256:" + trusted.Hash(doc), Variables: vars},
		"bare documentId": {DocumentID: trusted.Hash(doc), Variables: vars},
	}
	for name, req := range accepted {
		t.Run(name, func(t *testing.T) {
			r := post(t, env, env.Bearer(), req, nil)
			if len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"title"`) {
				t.Fatalf("%s", r.Raw)
			}
		})
	}
	t.Run("registry keys are checked", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.json")
		raw, _ := json.Marshal(map[string]string{trusted.Hash("{ x }"): doc})
		_ = os.WriteFile(bad, raw, 0o600)
		if _, err := trusted.Load(bad); err == nil {
			t.Fatal("a key that is not the document's hash was accepted")
		}
	})
}

// TestRequestLogHoldsNoCredentials runs requests with the Bearer token and
// Basic credentials through a logger writing to a buffer.
func TestRequestLogHoldsNoCredentials(t *testing.T) {
	var buf testenv.LogBuffer
	env := testenv.New(t, testenv.Options{Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	res := env.ID(t, "resource", 0)
	q := `query Logged { resource(id: "` + res + `") { id parent { id } } missing: resource(id: "00000000-0000-4000-8000-000000000000") { id } }`
	r := post(t, env, env.Bearer(), gqlclient.Request{Query: q}, http.Header{"X-Request-Id": {"req-42.a:b"}, "Cookie": {"session=cookie-secret-value"}})
	if got := r.Header.Get("X-Request-Id"); got != "req-42.a:b" {
		t.Errorf("X-Request-Id echoed = %q", got)
	}
	post(t, env, env.Basic(), gqlclient.Request{Query: q}, http.Header{"X-Request-Id": {"bad id with spaces\u00e9"}})
	get(t, env, gqlclient.Request{Query: "{__typename}"}, gqlclient.Credentials(env.Bearer().Authorization, ""))

	out := buf.String()
	basic := strings.TrimPrefix(env.Manifest.BasicAuth, "Basic ")
	for _, secret := range []string{env.Manifest.BearerToken, basic, "Bearer ", "cookie-secret-value", "demo-client-secret"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
	lines := logLines(t, &buf, accesslog.Message)
	if len(lines) != 3 {
		t.Fatalf("%d request lines, want 3:\n%s", len(lines), out)
	}
	first := lines[0]
	if first["request_id"] != "req-42.a:b" || first["operation"] != "Logged" || first["method"] != "POST" || first["status"] != float64(200) {
		t.Errorf("first line: %v", first)
	}
	if n, _ := first["upstream_calls"].(float64); n < 2 {
		t.Errorf("upstream_calls = %v", first["upstream_calls"])
	}
	if codes, _ := first["error_codes"].([]any); len(codes) != 1 || codes[0] != "NOT_FOUND" {
		t.Errorf("error_codes = %v", first["error_codes"])
	}
	if _, ok := first["duration_ms"].(float64); !ok {
		t.Errorf("no duration_ms: %v", first)
	}
	second := lines[1]
	if id, _ := second["request_id"].(string); len(id) != 32 || strings.Contains(id, " ") {
		t.Errorf("an unsafe X-Request-Id was kept: %q", id)
	}
	if third := lines[2]; third["status"] != float64(400) || third["error_codes"].([]any)[0] != "CSRF_PREVENTED" {
		t.Errorf("refused GET line: %v", third)
	}
}

// TestPanicBecomesInternalError: a resolver panic (raised by a field
// middleware around Resource.title) is INTERNAL_SERVER_ERROR for that field,
// the other fields arrive, the stack is logged and never returned.
func TestPanicBecomesInternalError(t *testing.T) {
	var buf testenv.LogBuffer
	env := testenv.New(t, testenv.Options{
		Logger: slog.New(slog.NewJSONHandler(&buf, nil)),
		GraphOpts: func(o *graph.Options) {
			o.Extensions = append(o.Extensions, testenv.FieldInterceptor(func(ctx context.Context, next graphql.Resolver) (any, error) {
				if fc := graphql.GetFieldContext(ctx); fc.Object == "Resource" && fc.Field.Name == "title" {
					panic(errors.New("boom in title"))
				}
				return next(ctx)
			}))
		},
	})
	r := query(t, env, env.Bearer(), `{ resource(id: "`+env.ID(t, "resource", 0)+`") { id title } }`, nil)
	e := only(t, r, "INTERNAL_SERVER_ERROR")
	if e.PathString() != "resource.title" || e.Message != "internal error" {
		t.Errorf("error %+v", e)
	}
	if strings.Contains(string(r.Raw), "boom") || strings.Contains(string(r.Raw), "goroutine") || strings.Contains(string(r.Raw), ".go:") {
		t.Errorf("the response leaks the panic: %s", r.Raw)
	}
	if !strings.Contains(string(r.Data), `"id"`) {
		t.Errorf("other fields missing: %s", r.Data)
	}
	panics := logLines(t, &buf, "resolver panic")
	if len(panics) != 1 || !strings.Contains(panics[0]["stack"].(string), "goroutine") || panics[0]["panic"] != "boom in title" || panics[0]["request_id"] == nil {
		t.Fatalf("panic log: %v", panics)
	}
}
