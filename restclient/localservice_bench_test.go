package restclient_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/childproc"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver"
)

// The local REST service in a child process
//
// The figures of one upstream call through the real local service (SQLite,
// demo data) must be the client's alone: the test binary re-executes itself
// with childUpstreamEnv set, and the child serves the service on a loopback
// port until its stdin closes. Allocations and CPU read in the parent are
// then the client's (and its HTTP stack's) only.

const childUpstreamEnv = "RESTCLIENT_TEST_UPSTREAM"

// childHello is the line the child writes once it listens.
type childHello struct {
	URL      string                   `json:"url"`
	Manifest *restserver.DemoManifest `json:"manifest"`
}

func init() {
	if os.Getenv(childUpstreamEnv) == "" {
		return
	}
	// Child mode: runs before TestMain, never returns.
	srv, err := restserver.New(context.Background(), restserver.Config{DBPath: ":memory:", DemoScale: 1})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child upstream:", err)
		os.Exit(1)
	}
	m, err := srv.Manifest()
	if err != nil {
		fmt.Fprintln(os.Stderr, "child upstream:", err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "child upstream:", err)
		os.Exit(1)
	}
	gone := childproc.ParentGone()
	go func() { _ = http.Serve(ln, srv.Handler()) }()
	if err := childproc.Announce(childHello{URL: "http://" + ln.Addr().String(), Manifest: m}); err != nil {
		fmt.Fprintln(os.Stderr, "child upstream:", err)
		os.Exit(1)
	}
	<-gone.Done()
	os.Exit(0)
}

var (
	childOnce sync.Once
	childHi   childHello
	childErr  error
	// child is held until the process exits: its stdin closes with it (or
	// when collected), and the child exits.
	child *childproc.Process
)

// localService starts (once per test binary) the child serving the local
// REST service and returns its URL and demo manifest. The child stops when
// the test binary exits (its stdin closes).
func localService(tb testing.TB) childHello {
	tb.Helper()
	childOnce.Do(func() {
		child, childErr = childproc.StartSelf(&childHi, 2*time.Minute, []string{"-test.run=^$", "-test.bench=^$"}, childUpstreamEnv+"=1")
		if childErr != nil {
			childErr = fmt.Errorf("child upstream: %w", childErr)
		}
	})
	if childErr != nil {
		tb.Fatal(childErr)
	}
	return childHi
}

// facadeLikeContext returns a context as the facade's handler makes one for
// a GraphQL request: per-request credentials, read-only results, a deadline,
// and call hooks of the shape the facade installs (metrics: Answered and
// After; the request's call collector: Before and After).
func facadeLikeContext(tb testing.TB, m *restserver.DemoManifest) (context.Context, *int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	tb.Cleanup(cancel)
	ctx = restclient.WithCredentials(ctx, restclient.Credentials{Authorization: "Bearer " + m.BearerToken, NetworkID: m.NetworkID})
	ctx = restclient.WithReadOnlyResults(ctx)
	calls := new(int)
	ctx = restclient.WithCallHooks(ctx,
		restclient.CallHooks{
			Answered: func(context.Context, restclient.CallStart, *http.Response) {},
			After:    func(context.Context, restclient.CallInfo) {},
		},
		restclient.CallHooks{
			Before: func(context.Context, restclient.CallStart) error { return nil },
			After:  func(context.Context, restclient.CallInfo) { *calls++ },
		})
	return ctx, calls
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLocalService is one upstream call through the real local REST
// service in a child process, with a facade-like context: GET
// /resources/v1/{id} (a ~1 KB body) and a 100-transaction page. cpu-ns/op
// is this process's CPU per call (the service's is in the child); B/op and
// allocs/op are the client's and its HTTP stack's alone.
func BenchmarkLocalService(b *testing.B) {
	hi := localService(b)
	m := hi.Manifest
	c, err := restclient.NewClient(hi.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseIdleConnections()
	ctx, calls := facadeLikeContext(b, m)
	resource := m.IDs["resource"][0]
	location := m.IDs["location"][0]
	for _, bc := range []struct {
		name string
		call func() error
	}{
		{"GetResource", func() error {
			r, _, err := c.Resources.GetResource(ctx, resource)
			if err == nil && r.ID != resource {
				err = fmt.Errorf("got resource %q", r.ID)
			}
			return err
		}},
		{"ListTransactions100", func() error {
			ts, _, err := c.Transactions.ListTransactions(ctx, &restclient.TransactionListOptions{LocationRef: location, ListOptions: restclient.ListOptions{Limit: 100}})
			if err == nil && len(ts) != 100 {
				err = fmt.Errorf("got %d transactions", len(ts))
			}
			return err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if err := bc.call(); err != nil { // warm: connection, route sizes
				b.Fatal(err)
			}
			*calls = 0
			b.ReportAllocs()
			c0 := cpuTime()
			for b.Loop() {
				if err := bc.call(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
			if *calls != b.N {
				b.Errorf("After saw %d calls of %d", *calls, b.N)
			}
		})
	}
}
