package restclient

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

var (
	tenantA = Credentials{Authorization: "Bearer tenant-a", NetworkID: "net-a"}
	tenantB = Credentials{Authorization: "Bearer tenant-b", NetworkID: "net-b"}
	tenantC = Credentials{Authorization: "Bearer tenant-c", NetworkID: "net-c"}
)

// TestBreakerOneTenantCannotOpenTheRouteForAnother: tenant B's failing
// createCreditNote calls open B's breaker only; tenant A's next call is sent.
func TestBreakerOneTenantCannotOpenTheRouteForAnother(t *testing.T) {
	u := newUpstream(t)
	var sentA atomic.Int64
	u.handle(OpCreateCreditNote.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == tenantB.Authorization {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"message":"boom","type":"internal"}`)
			return
		}
		sentA.Add(1)
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"creditNote":{"id":"cn"}}`)
	})
	c := u.client(noRetry)
	for i := range 5 {
		if _, _, err := c.Billing.CreateCreditNote(WithCredentials(ctxT(t), tenantB), &CreditNoteCreateRequest{}); !IsServerError(err) {
			t.Fatalf("B call %d: %v", i, err)
		}
	}
	route := OpListCreditNotes.Route
	if c.ClientBreakerState("POST", route, tenantB) != BreakerOpen || c.BreakerState("POST", route) != BreakerClosed {
		t.Fatalf("B's breaker %s, route breaker %s; want open, closed", c.ClientBreakerState("POST", route, tenantB), c.BreakerState("POST", route))
	}
	_, _, err := c.Billing.CreateCreditNote(WithCredentials(ctxT(t), tenantB), &CreditNoteCreateRequest{})
	if ce, ok := errors.AsType[*CircuitOpenError](err); !ok || !ce.Client {
		t.Fatalf("B's sixth call: %v", err)
	}
	if _, _, err := c.Billing.CreateCreditNote(WithCredentials(ctxT(t), tenantA), &CreditNoteCreateRequest{}); err != nil || sentA.Load() != 1 {
		t.Fatalf("A's call: %v (%d sent)", err, sentA.Load())
	}
}

// TestBreakerFailuresOfSeveralTenantsOpenTheRouteForAll: 5xx answers to two
// clients are the upstream's fault: the route opens for a third client too.
func TestBreakerFailuresOfSeveralTenantsOpenTheRouteForAll(t *testing.T) {
	u := newUpstream(t)
	var hits atomic.Int64
	u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	c := u.client(noRetry)
	for i := range 6 {
		who := []Credentials{tenantA, tenantB}[i%2]
		if _, _, err := c.Events.GetEvent(WithCredentials(ctxT(t), who), "e"); StatusCode(err) != 503 {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if c.BreakerState("GET", OpGetEvent.Route) != BreakerOpen {
		t.Fatalf("route breaker %s after failures of two clients", c.BreakerState("GET", OpGetEvent.Route))
	}
	_, _, err := c.Events.GetEvent(WithCredentials(ctxT(t), tenantC), "e")
	if ce, ok := errors.AsType[*CircuitOpenError](err); !ok || ce.Client || hits.Load() != 6 {
		t.Fatalf("C's call: %v after %d upstream calls", err, hits.Load())
	}
}

// TestBreakerRefusedConnectionsOpenTheRouteForAll: a connection the upstream
// refuses is no client's fault, whoever met it.
func TestBreakerRefusedConnectionsOpenTheRouteForAll(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c, err := NewClient("http://"+addr, WithRetry(RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, _, err := c.Events.GetEvent(WithCredentials(ctxT(t), tenantA), "e"); !IsTransport(err) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	_, _, err = c.Events.GetEvent(WithCredentials(ctxT(t), tenantB), "e")
	if ce, ok := errors.AsType[*CircuitOpenError](err); !ok || ce.Client {
		t.Fatalf("B's call after A's refused connections: %v", err)
	}
}
