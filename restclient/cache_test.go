package restclient

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
)

// mapCache is a ResponseCache keyed by credentials and path.
type mapCache struct {
	mu   sync.Mutex
	m    map[string][]byte
	puts int
}

func (c *mapCache) key(cr Credentials, path string) string { return cr.Identity() + " " + path }

func (c *mapCache) Get(_ context.Context, cr Credentials, route, path string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[c.key(cr, path)]
	return b, ok
}

func (c *mapCache) Put(_ context.Context, cr Credentials, route, path string, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string][]byte{}
	}
	c.m[c.key(cr, path)] = body
	c.puts++
}

func TestCacheAnswersWithoutAnUpstreamCall(t *testing.T) {
	u := newUpstream(t)
	u.handle("GET /resources/v1/{id}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"resource":{"id":"`+r.PathValue("id")+`"}}`)
	})
	mc := &mapCache{}
	c := u.client(WithCache(mc))
	obs := &observations{}
	for i := range 3 {
		r, _, err := c.Resources.GetResource(obs.ctx(t), "r1")
		if err != nil || r.ID != "r1" {
			t.Fatalf("call %d: %v %v", i, r, err)
		}
	}
	if u.hits.Load() != 1 || mc.puts != 1 {
		t.Fatalf("%d upstream calls, %d puts; want 1 and 1", u.hits.Load(), mc.puts)
	}
	if ci := obs.last(t); !ci.Cached || ci.Status != 200 || ci.Route != "/resources/v1/{id}" {
		t.Errorf("a hit observed as %+v", ci)
	}
	// Another credential never gets the entry.
	other := WithCredentials(ctxT(t), Credentials{Authorization: "Bearer other", NetworkID: testNetwork})
	if _, _, err := c.Resources.GetResource(other, "r1"); err != nil || u.hits.Load() != 2 {
		t.Fatalf("other credential: %v after %d calls", err, u.hits.Load())
	}
	// no-cache: the cache is not read, and what is fetched refreshes it.
	if _, _, err := c.Resources.GetResource(WithoutCacheReads(ctxT(t)), "r1"); err != nil || u.hits.Load() != 3 || mc.puts != 3 {
		t.Fatalf("no-cache: %v, %d calls, %d puts", err, u.hits.Load(), mc.puts)
	}
	// Writes are never answered from, nor put into, the cache.
	u.serveJSON("POST /visitors/requests/v1", wantRequest{method: "POST", path: "/visitors/requests/v1", body: `{"request":{}}`}, 201, `{"request":{}}`)
	for range 2 {
		if _, _, err := c.Visitors.CreateVisitRequest(ctxT(t), &VisitRequestCreateRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if u.hits.Load() != 5 || mc.puts != 3 {
		t.Errorf("POSTs: %d calls, %d puts", u.hits.Load(), mc.puts)
	}
}

func TestCacheEntryThatDoesNotDecodeIsAMiss(t *testing.T) {
	u := newUpstream(t)
	u.handle("GET /resources/v1/{id}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"resource":{"id":"r1"}}`)
	})
	mc := &mapCache{m: map[string][]byte{testCreds.Identity() + " /resources/v1/r1": []byte("not json")}}
	r, _, err := u.client(WithCache(mc)).Resources.GetResource(ctxT(t), "r1")
	if err != nil || r.ID != "r1" || u.hits.Load() != 1 {
		t.Fatalf("%v %v after %d calls", r, err, u.hits.Load())
	}
}
