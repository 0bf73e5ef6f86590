package restclient

import (
	"context"
	"net/http"
)

// Response cache
//
// WithCache gives a Client a cache of 2xx GET bodies across calls. A GET
// first asks it (unless the context says WithoutCacheReads): a hit is
// decoded like a fresh answer and makes no upstream call; it runs no Before
// or Send hook, and After sees it with CallInfo.Cached. Every 2xx body a GET
// fetched itself (not a shared GET's waiter) is offered to Put; the cache
// decides what to keep and for how long. Keys must include the credentials:
// a body fetched with one credential is never an answer for another. A 2xx
// write makes stale what its operation's Stale names (stale.go).

// ResponseCache keeps GET bodies across calls. Implementations must be safe
// for concurrent use and must never fail a call: a cache that cannot answer
// misses.
type ResponseCache interface {
	// Get returns the body cached for creds' GET of path (the request URI
	// below the base URL, query included; route is its template).
	Get(ctx context.Context, creds Credentials, route, path string) (body []byte, ok bool)
	// Put offers the 2xx body of creds' GET of path.
	Put(ctx context.Context, creds Credentials, route, path string, body []byte)
	// Invalidate makes stale, for every caller, the entries of the GET
	// route whose param (its path parameter or a tagging list filter) is
	// value. The client calls it after each 2xx write, as the operation
	// table's Stale says. It fails only for a route or param it cannot
	// invalidate (a programming error).
	Invalidate(ctx context.Context, route, param, value string) error
}

// WithCache installs c (nil: no cache).
func WithCache(c ResponseCache) Option {
	return func(cl *Client) error {
		cl.cache = c
		return nil
	}
}

// WithoutCacheReads returns ctx whose GETs skip the cache's answers (a
// request's Cache-Control: no-cache); what they fetch still refreshes it.
func WithoutCacheReads(ctx context.Context) context.Context {
	return WithScope(ctx, Scope{NoCacheReads: true})
}

// cachedResponse is the Response of a cache hit.
func cachedResponse() *http.Response {
	return &http.Response{Status: "200 OK (cached)", StatusCode: http.StatusOK, Header: http.Header{"X-Cache": {"hit"}}}
}
