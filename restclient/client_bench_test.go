package restclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

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
			for b.Loop() {
				r, _, err := c.Resources.GetResource(ctx, "r1")
				if err != nil || r.ID != "r1" {
					b.Fatal(r, err)
				}
			}
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
