package restclient

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// gateMemoryBound is the README's bound on the authentication gate's
// memory with its default table sizes (both tables full).
const gateMemoryBound = 8 << 20

// TestGateMemoryBound: twice DefaultAuthMaxEntries credentials trusted and
// as many refused, each refusal carrying an upstream message and type of
// the longest an ErrorResponse keeps: the tables hold DefaultAuthMaxEntries
// each (the oldest evicted) and the heap grows by less than
// gateMemoryBound.
func TestGateMemoryBound(t *testing.T) {
	g := newAuthGate(DefaultAuthGate())
	rc := call{method: http.MethodGet, route: OpGetResource.Route}
	long := strings.Repeat("m", maxErrorText)
	const n = 2 * DefaultAuthMaxEntries
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		e := &ErrorResponse{StatusCode: http.StatusUnauthorized, Method: rc.method, Route: rc.route, Path: "/resources/v1/x", Message: long, Type: long}
		// Identities as a request makes them: a 32-byte string each.
		g.learn(context.Background(), nil, rc, who{id: fmt.Sprintf("r%031x", i)}, fetched{sent: true}, e)
		g.learn(context.Background(), nil, rc, who{id: fmt.Sprintf("t%031x", i)}, fetched{sent: true}, nil)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if g.refused.len() != DefaultAuthMaxEntries || g.trusted.len() != DefaultAuthMaxEntries {
		t.Fatalf("tables hold %d refused and %d trusted, want %d each", g.refused.len(), g.trusted.len(), DefaultAuthMaxEntries)
	}
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("both tables full (%d entries each): heap +%.1f MiB", DefaultAuthMaxEntries, float64(grown)/(1<<20))
	if grown > gateMemoryBound {
		t.Errorf("heap grew by %d bytes, the README states at most %d", grown, gateMemoryBound)
	}
	runtime.KeepAlive(g)
}
