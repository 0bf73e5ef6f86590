package restclient

import (
	"context"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
)

// mapCache is a ResponseCache keyed by credentials and path; it records
// the invalidations it is asked for.
type mapCache struct {
	mu            sync.Mutex
	m             map[string][]byte
	puts          int
	invalidations []Stale // Route, Param and the value (in From)
}

func (c *mapCache) Invalidate(_ context.Context, route, param, value string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.invalidations = append(c.invalidations, Stale{route, param, value})
	return nil
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
	u.handle(OpGetResource.Pattern(), func(w http.ResponseWriter, r *http.Request) {
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
	if ci := obs.last(t); !ci.Cached || ci.Status != 200 || ci.Route != OpGetResource.Route {
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
	u.serveJSON(OpCreateVisitRequest.Pattern(), wantRequest{method: "POST", path: OpCreateVisitRequest.Route, body: `{"request":{}}`}, 201, `{"request":{}}`)
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
	u.handle(OpGetResource.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"resource":{"id":"r1"}}`)
	})
	mc := &mapCache{m: map[string][]byte{testCreds.Identity() + " /resources/v1/r1": []byte("not json")}}
	r, _, err := u.client(WithCache(mc)).Resources.GetResource(ctxT(t), "r1")
	if err != nil || r.ID != "r1" || u.hits.Load() != 1 {
		t.Fatalf("%v %v after %d calls", r, err, u.hits.Load())
	}
}

// TestWritesInvalidateWhatTheTableSays: a 2xx write asks the cache to drop
// what its operation's Stale names, with values from its answer or its path;
// a refused write and a read invalidate nothing.
func TestWritesInvalidateWhatTheTableSays(t *testing.T) {
	u := newUpstream(t)
	u.handle(OpCreateCreditNote.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"creditNote":{"id":"cn1","invoiceRef":"inv/1","locationRef":"loc1"}}`))
	})
	u.handle(OpUpdateVisit.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") == "refused" {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"message":"no","type":"forbidden"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"visit":{"id":"v 1"}}`))
	})
	u.handle(OpGetResource.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"resource":{"id":"r1"}}`))
	})
	mc := &mapCache{}
	c := u.client(WithCache(mc))
	ctx := t.Context()
	if _, _, err := c.Billing.CreateCreditNote(ctx, &CreditNoteCreateRequest{InvoiceRef: new("inv/1")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Visitors.UpdateVisit(ctx, "v 1", &VisitUpdateRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Visitors.UpdateVisit(ctx, "refused", &VisitUpdateRequest{}); err == nil {
		t.Fatal("refused write: no error")
	}
	if _, _, err := c.Resources.GetResource(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	want := []Stale{
		{OpListInvoiceItems.Route, "id", "inv/1"},
		{OpListCreditNotes.Route, "invoiceRef", "inv/1"},
		{OpListCreditNotes.Route, "locationRef", "loc1"},
		{OpGetVisit.Route, "id", "v 1"},
	}
	if !slices.Equal(mc.invalidations, want) {
		t.Errorf("invalidations = %v\nwant %v", mc.invalidations, want)
	}
}
