package restclient

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// processCPU is the process's user and system CPU time so far: with
// goroutine hand-offs, CPU per call differs from time per call (a waiting
// goroutine costs no CPU, a futile wake-up of another thread does).
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGetResource is one GET /resources/v1/{id} end to end against a
// local httptest server (whose own work is in the figures too, unchanged by
// client changes): the per-call overhead of do, the shared-GET flight, the
// attempt (slot, timeout, headers, trace), net/http and decoding. "hooks"
// adds a call-hook set with every hook, as the facade installs per request.
func BenchmarkGetResource(b *testing.B) {
	body := []byte(`{"resource":{"id":"r1","title":"Room","capacity":4,"type":"meeting_room","locationRef":"l1","createDate":"2024-01-02T03:04:05Z"}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name   string
		shared bool
		hooks  bool
	}{{"shared", true, false}, {"shared+hooks", true, true}, {"unshared", false, false}} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := NewClient(srv.URL+basePath, WithBearerToken(testToken, testNetwork), WithSharedGets(tc.shared))
			if err != nil {
				b.Fatal(err)
			}
			defer c.CloseIdleConnections()
			ctx := context.Background()
			if tc.hooks {
				calls := 0
				ctx = WithCallHooks(ctx, CallHooks{
					Before:   func(context.Context, CallStart) error { return nil },
					Send:     func(context.Context, CallStart) error { return nil },
					Answered: func(context.Context, CallStart, *http.Response) {},
					After:    func(context.Context, CallInfo) { calls++ },
				})
				defer func() {
					if calls != b.N {
						b.Errorf("After saw %d calls of %d", calls, b.N)
					}
				}()
			}
			b.ReportAllocs()
			c0 := processCPU()
			for b.Loop() {
				r, _, err := c.Resources.GetResource(ctx, "r1")
				if err != nil || r.ID != "r1" {
					b.Fatal(r, err)
				}
			}
			b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkListTransactions is one GET /billing/transactions/v1 with a query
// (an empty page) against a local httptest server: the per-call overhead of
// a list call, URL building included.
func BenchmarkListTransactions(b *testing.B) {
	body := []byte(`{"transactions":[],"nextPageToken":null}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("limit") != "50" {
			http.Error(w, `{"message":"limit","type":"invalid"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL+basePath, WithBearerToken(testToken, testNetwork))
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseIdleConnections()
	opts := &TransactionListOptions{LocationRef: "l1", ListOptions: ListOptions{Limit: 50}}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.Transactions.ListTransactions(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallOverhead is the client's own work per GET, without network:
// the client's transport is replaced by one answering from memory, so the
// figures are do, the shared-GET flight, breakers, slots, hooks, contexts,
// the request and its header, and decoding a small resource, in the context
// the facade gives its calls (per-request credentials, read-only results, a
// deadline, call hooks with Before, Answered and After).
func BenchmarkCallOverhead(b *testing.B) {
	body := `{"resource":{"id":"r1","title":"Room","capacity":4,"type":"meeting_room","locationRef":"l1","createDate":"2024-01-02T03:04:05Z"}}`
	for _, shared := range []bool{true, false} {
		name := "shared"
		if !shared {
			name = "unshared"
		}
		b.Run(name, func(b *testing.B) {
			c, err := NewClient("http://upstream.test/api", WithSharedGets(shared))
			if err != nil {
				b.Fatal(err)
			}
			defer c.CloseIdleConnections()
			c.rt = roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
					ContentLength: int64(len(body)), Request: r, Body: io.NopCloser(strings.NewReader(body))}, nil
			})
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			ctx = WithReadOnlyResults(WithCredentials(ctx, testCreds))
			calls := 0
			ctx = WithCallHooks(ctx,
				CallHooks{Answered: func(context.Context, CallStart, *http.Response) {}, After: func(context.Context, CallInfo) {}},
				CallHooks{Before: func(context.Context, CallStart) error { return nil }, After: func(context.Context, CallInfo) { calls++ }})
			b.ReportAllocs()
			c0 := processCPU()
			for b.Loop() {
				r, _, err := c.Resources.GetResource(ctx, "r1")
				if err != nil || r.ID != "r1" {
					b.Fatal(r, err)
				}
			}
			b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
			if calls != b.N {
				b.Errorf("After saw %d calls of %d", calls, b.N)
			}
		})
	}
}

// BenchmarkRequestScope is what the facade does per request to the settings
// of its calls (credentials, read-only results, the cache's bypass, four
// hook sets) and what each of its calls then reads of them.
func BenchmarkRequestScope(b *testing.B) {
	hooks := []CallHooks{{Before: func(context.Context, CallStart) error { return nil }}, {}, {}, {After: func(context.Context, CallInfo) {}}}
	creds := testCreds
	parent := WithCallHooks(context.Background()) // as deep as an empty chain
	b.ReportAllocs()
	for b.Loop() {
		ctx := WithScope(parent, Scope{Credentials: &creds, ReadOnlyResults: true, NoCacheReads: true, Hooks: hooks})
		sc := scopeOf(ctx)
		if !sc.hasWho || len(sc.hooks) != 4 || !sc.readOnly || !sc.noCacheReads {
			b.Fatal("settings lost")
		}
	}
}
