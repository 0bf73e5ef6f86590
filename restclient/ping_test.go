package restclient

import (
	"net/http"
	"sync/atomic"
	"testing"
)

func TestPing(t *testing.T) {
	u := newUpstream(t)
	var status atomic.Int32
	status.Store(http.StatusUnauthorized)
	u.handle(OpGetResource.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Error("ping sent credentials")
		}
		w.WriteHeader(int(status.Load()))
	})
	c := u.client()
	if err := c.Ping(ctxT(t)); err != nil {
		t.Errorf("401: %v", err)
	}
	status.Store(http.StatusServiceUnavailable)
	if err := c.Ping(ctxT(t)); err == nil {
		t.Error("503: nil")
	}
	u.srv.Close()
	if err := c.Ping(ctxT(t)); !IsTransport(err) {
		t.Errorf("closed upstream: %v", err)
	}
}
