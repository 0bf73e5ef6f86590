package graph_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/stack"
)

// metric reads one of the facade's metrics without labels (a gauge) from the
// stack's registry; the Env must have metrics on (withMetrics).
func metric(t *testing.T, env *testenv.Env, name string) float64 {
	t.Helper()
	fams, err := env.Stack.MetricsRegistry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// withMetrics turns the stack's metrics on, on a port of their own.
func withMetrics(c *stack.Config) { c.MetricsAddr = "127.0.0.1:0" }

// bigTitle makes the local service answer the resource *id (read at each
// request) with a title of n bytes: real data can be large, and a response larger than what the
// kernel buffers between the facade and a client that does not read (Linux:
// tcp_wmem's 4 MiB at most, plus a small receive buffer) keeps the facade's
// write waiting for that client.
func bigTitle(id *string, n int) func(http.Handler) http.Handler {
	title := strings.Repeat("x", n)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || r.URL.Path != "/resources/v1/"+*id {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			var body map[string]map[string]any
			if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body["resource"] == nil {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			body["resource"]["title"] = title
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(body)
		})
	}
}

// slowReader sends a GraphQL POST on a raw connection with a small receive
// buffer and reads only the first bytes of the answer's status line.
type slowReader struct {
	conn net.Conn
	head []byte
}

func startSlowReader(t *testing.T, env *testenv.Env, c testenv.Creds, query string) *slowReader {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(env.BaseURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"query": query})
	fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: facade\r\nContent-Type: application/json\r\nAuthorization: %s\r\nservice-network-id: %s\r\nContent-Length: %d\r\n\r\n%s",
		c.Authorization, c.NetworkID, len(body), body)
	return &slowReader{conn: conn}
}

// readHead waits for the first 12 bytes of the answer ("HTTP/1.1 200"):
// the facade has started writing it, so the operation has executed.
func (s *slowReader) readHead() error {
	_ = s.conn.SetReadDeadline(time.Now().Add(60 * time.Second)) // a hang guard
	s.head = make([]byte, 12)
	_, err := io.ReadFull(s.conn, s.head)
	return err
}

// TestSlowReadersHoldNoAdmissionUnits: four clients that do not read their
// answers (7 MB each, a small receive buffer, not a byte read past the status
// line) hold none of the admission units once their operations have
// executed, so another operation is admitted while their answers wait; and
// the answers wait no longer than -response-write-timeout: then the facade
// gives up on them, and their requests end (without it they would last until
// the server's write timeout, -request-timeout + 5 s).
func TestSlowReadersHoldNoAdmissionUnits(t *testing.T) {
	const titleBytes, copies = 1_000_000, 7
	var big string
	env := testenv.New(t, testenv.Options{
		GraphOpts: func(g *graph.Options) {
			// Four slow operations of cost 25 fill the bound; refusals are
			// at once, so nothing here depends on a wait.
			g.MaxCostInFlight, g.AdmissionWait = 100, 0
			g.ResponseWriteTimeout = time.Second
			g.RequestTimeout = time.Minute // the server's write timeout: 65 s
		},
		Config: func(c *stack.Config) {
			withMetrics(c)
			c.UpstreamMiddleware = bigTitle(&big, titleBytes)
		},
	})
	big = env.ID(t, "resource", 1)
	var q strings.Builder
	q.WriteString("{ ")
	for i := range copies {
		fmt.Fprintf(&q, `r%d: resource(id: %q) { title } `, i, big)
	}
	// 7 resources, and a location (1) with its connection (1) of 16
	// transactions: cost 25.
	fmt.Fprintf(&q, `location(id: %q) { transactions(first: 16) { nodes { id } } } }`, env.ID(t, "location", 0))
	slow := q.String()

	readers := make([]*slowReader, 4)
	var wg sync.WaitGroup
	for i := range readers {
		readers[i] = startSlowReader(t, env, env.Bearer(), slow)
		wg.Go(func() {
			if err := readers[i].readHead(); err != nil {
				t.Errorf("slow reader %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for i, r := range readers {
		if string(r.head) != "HTTP/1.1 200" {
			t.Fatalf("slow reader %d: %q, want HTTP/1.1 200", i, r.head)
		}
	}

	held := metric(t, env, "facade_admission_cost_in_flight")
	a := env.Query(t, env.Bearer(), `{ resource(id: "`+env.ID(t, "resource", 0)+`") { id } }`, nil)
	t.Logf("while four answers wait for their readers: %v cost units held; another operation: HTTP %d", held, a.Status)
	if held != 0 {
		t.Errorf("%v cost units held by operations that have executed, want 0", held)
	}
	if a.Status != http.StatusOK || len(a.Errors) > 0 || !strings.Contains(string(a.Data), env.ID(t, "resource", 0)) {
		t.Fatalf("an operation beside the slow readers: HTTP %d %.300s", a.Status, a.Raw)
	}

	// The facade gives up on the answers at their write deadline: the
	// requests end (the gauge). What the kernel already holds of them is
	// sent when, if ever, the clients read again.
	testenv.WaitFor(t, "the slow readers' requests to end", func() bool {
		return metric(t, env, "facade_graphql_requests_in_flight") == 0
	})
}
