package cache

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/workspacenet/facade/restclient"
)

// The cache as a restclient.Client uses it: a repeated GET makes no upstream
// call, another credential does, and so does a GET after Invalidate.
func TestThroughRestclient(t *testing.T) {
	var calls atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc(restclient.OpGetResource.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.WriteString(w, `{"resource":{"id":"`+r.PathValue("id")+`","title":"`+r.Header.Get("Authorization")+`"}}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := newCache(t, NewMemoryStore(0))
	rc, err := restclient.NewClient(srv.URL, restclient.WithBearerToken("tok-ALPHA-91c2e7", alpha.NetworkID), restclient.WithCache(c))
	if err != nil {
		t.Fatal(err)
	}
	getAs := func(ctx context.Context, want string, wantCalls int64) {
		t.Helper()
		r, _, err := rc.Resources.GetResource(ctx, "res 1")
		if err != nil || r.ID != "res 1" || r.Title == nil || *r.Title != want || calls.Load() != wantCalls {
			t.Fatalf("GetResource = %+v, %v after %d upstream calls; want title %q after %d", r, err, calls.Load(), want, wantCalls)
		}
	}
	ctx := t.Context()
	getAs(ctx, alpha.Authorization, 1)
	getAs(ctx, alpha.Authorization, 1)
	asBravo := restclient.WithCredentials(ctx, bravo)
	getAs(asBravo, bravo.Authorization, 2)
	getAs(asBravo, bravo.Authorization, 2)
	if err := c.Invalidate(ctx, resRoute, "id", "res 1"); err != nil {
		t.Fatal(err)
	}
	getAs(ctx, alpha.Authorization, 3)
	getAs(asBravo, bravo.Authorization, 4)
	getAs(ctx, alpha.Authorization, 4)
	if s := c.Stats(); s.Hits != 3 || s.Puts != 4 {
		t.Errorf("Stats = %+v", s)
	}
}
