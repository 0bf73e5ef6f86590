// Package cache is a cross-request cache of upstream GET bodies
// (restclient.ResponseCache) that is tenant-safe by construction: an entry's
// store key includes the caller's identity, and its value is sealed with a
// key derived from the caller's whole credential, so nothing fetched with one
// credential is ever served to another, and a dump of the store reveals no
// tenant data, credential or id.
//
// Invalidation is by tag: every entry is tagged by the identifying values of
// its request (path parameters, list filters such as invoiceRef), and seals
// the versions its tags had before its body was fetched; a Get reads the
// entry and its tags' current versions in one store round trip and misses
// unless they are equal. Invalidate replaces a tag's version with a random
// one, which makes stale every entry sealed with the old one, for every
// identity and every replica sharing the store, without scanning. A tag
// whose version is lost (evicted, expired, store flushed) makes its entries
// miss too.
//
// The cache never fails a call: a store error or timeout is a miss (Get) or
// nothing done (Put, Invalidate), counted in Stats().Errors.
package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/workspacenet/facade/restclient"
)

// DefaultMaxBytes is the largest body cached when Config.MaxBytes is 0.
const DefaultMaxBytes = 1 << 20

// MinSecretLen is the least length of Config.Secret.
const MinSecretLen = 32

// tagTTL is how long a tag version lives after it was created or replaced;
// its entries miss once after it expires.
const tagTTL = 24 * time.Hour

// Config configures New.
type Config struct {
	// Secret is the server secret (at least MinSecretLen bytes, random):
	// every key and seal derives from it, so replicas sharing a store must
	// share it, and changing it empties the cache.
	Secret []byte
	// TTL is how long a body is kept, by "GET <route template>" (e.g.
	// "GET /resources/v1/{id}", see ParseTTLs); a route absent or 0 is not
	// cached. A key that is not a GET route of the API is an error.
	TTL map[string]time.Duration
	// MaxBytes is the largest body cached (0: DefaultMaxBytes); larger
	// bodies are not.
	MaxBytes int
	// Store holds the entries (NewMemoryStore, NewRedisStore).
	Store Store
	// OnLookup, when set, is told of every Get of a cached route: the
	// route's family (resources, events, products, ... as in ParseTTLs) and
	// whether it hit (metrics).
	OnLookup func(family string, hit bool)
}

// Cache is a restclient.ResponseCache; see the package documentation. It is
// safe for concurrent use.
type Cache struct {
	keys     keys
	ttl      map[string]time.Duration // by route template
	maxBytes int
	store    Store
	pending  pendingVersions
	onLookup func(family string, hit bool)

	hits, misses, puts, invalidations, storeErrors atomic.Uint64
}

var _ restclient.ResponseCache = (*Cache)(nil)

// New returns a Cache configured by cfg.
func New(cfg Config) (*Cache, error) {
	if len(cfg.Secret) < MinSecretLen {
		return nil, fmt.Errorf("cache: Secret has %d bytes, want at least %d", len(cfg.Secret), MinSecretLen)
	}
	if cfg.Store == nil {
		return nil, errors.New("cache: no Store")
	}
	if cfg.MaxBytes < 0 {
		return nil, fmt.Errorf("cache: negative MaxBytes %d", cfg.MaxBytes)
	}
	k, err := deriveKeys(cfg.Secret)
	if err != nil {
		return nil, err
	}
	c := &Cache{keys: k, ttl: map[string]time.Duration{}, maxBytes: cfg.MaxBytes, store: cfg.Store, onLookup: cfg.OnLookup}
	if c.maxBytes == 0 {
		c.maxBytes = DefaultMaxBytes
	}
	for pattern, d := range cfg.TTL {
		route, ok := strings.CutPrefix(pattern, "GET ")
		if !ok || routes[route] == nil {
			return nil, fmt.Errorf("cache: TTL of %q: not a GET route of the API (known: GET %s)", pattern, strings.Join(knownRoutes(), ", GET "))
		}
		if d < 0 {
			return nil, fmt.Errorf("cache: TTL of %q: negative duration %s", pattern, d)
		}
		if d > 0 {
			c.ttl[route] = d
		}
	}
	return c, nil
}

// Get returns the body cached for creds' GET of path on route: only one Put
// by the same credential (Authorization and network id) for the same route
// and path, younger than the route's TTL, and none of whose tags was
// invalidated since. Requests without an Authorization value are never
// cached.
func (c *Cache) Get(ctx context.Context, creds restclient.Credentials, route, path string) ([]byte, bool) {
	tags, ok := c.cacheable(creds, route, path)
	if !ok {
		return nil, false
	}
	key := c.keys.entryKey(creds, route, path)
	ks := make([]string, 1+len(tags))
	ks[0] = key
	for i, t := range tags {
		ks[1+i] = c.keys.tagKey(route, t)
	}
	vals, err := c.store.Get(ctx, ks...)
	if err != nil || len(vals) != len(ks) {
		c.storeErrors.Add(1)
		c.misses.Add(1)
		c.lookup(route, false)
		return nil, false
	}
	versions := vals[1:]
	if body, ok := c.fresh(creds, key, vals[0], versions); ok {
		c.hits.Add(1)
		c.lookup(route, true)
		return body, true
	}
	// The fetch that follows this miss is sealed with these versions: an
	// invalidation during it makes its entry stale at once.
	c.pending.put(key, versions)
	c.misses.Add(1)
	c.lookup(route, false)
	return nil, false
}

// lookup tells OnLookup of a Get of route.
func (c *Cache) lookup(route string, hit bool) {
	if c.onLookup != nil {
		c.onLookup(familyOf(route), hit)
	}
}

// fresh opens sealed and returns its body when its tag versions are the
// current ones.
func (c *Cache) fresh(creds restclient.Credentials, key string, sealed []byte, versions [][]byte) ([]byte, bool) {
	if sealed == nil {
		return nil, false
	}
	pt, err := c.keys.open(creds, key, sealed)
	if err != nil || len(pt) < len(versions)*tokenLen {
		return nil, false
	}
	for i, v := range versions {
		if v == nil || !bytes.Equal(v, pt[i*tokenLen:(i+1)*tokenLen]) {
			return nil, false
		}
	}
	return pt[len(versions)*tokenLen:], true
}

// Put keeps body as creds' GET of path on route for the route's TTL, unless
// the route is not cached or body is larger than MaxBytes. The entry carries
// the tag versions that the miss before this fetch (Get) saw, so an
// invalidation during the fetch is not lost; a Put without that Get (e.g.
// the caller skipped cache reads) reads them now, and an invalidation during
// its fetch can then go unseen until the entry's TTL. Put is not cancelled
// with ctx (a store call is bounded by the store's own timeout).
func (c *Cache) Put(ctx context.Context, creds restclient.Credentials, route, path string, body []byte) {
	tags, ok := c.cacheable(creds, route, path)
	if !ok {
		return
	}
	key := c.keys.entryKey(creds, route, path)
	versions, seen := c.pending.take(key)
	if len(body) > c.maxBytes {
		return
	}
	ctx = context.WithoutCancel(ctx)
	tagKeys := make([]string, len(tags))
	for i, t := range tags {
		tagKeys[i] = c.keys.tagKey(route, t)
	}
	if !seen || len(versions) != len(tags) {
		v, err := c.store.Get(ctx, tagKeys...)
		if err != nil || len(v) != len(tags) {
			c.storeErrors.Add(1)
			return
		}
		versions = v
	}
	pt := make([]byte, 0, len(tags)*tokenLen+len(body))
	for i, v := range versions {
		if v == nil {
			// No version yet: create one. If another Put or an Invalidate
			// created it since the versions were read, this body may predate
			// an invalidation: do not keep it.
			tok := newToken()
			created, err := c.store.SetNX(ctx, tagKeys[i], tok, tagTTL)
			if err != nil {
				c.storeErrors.Add(1)
				return
			}
			if !created {
				return
			}
			v = tok
		}
		if len(v) != tokenLen {
			return // not a version this package wrote
		}
		pt = append(pt, v...)
	}
	pt = append(pt, body...)
	sealed, err := c.keys.seal(creds, key, pt)
	if err != nil {
		return
	}
	if err := c.store.Set(ctx, key, sealed, c.ttl[route]); err != nil {
		c.storeErrors.Add(1)
		return
	}
	c.puts.Add(1)
}

// cacheable returns the tags of creds' GET of path on route when it is cached.
func (c *Cache) cacheable(creds restclient.Credentials, route, path string) ([]tag, bool) {
	if c.ttl[route] <= 0 || creds.Authorization == "" {
		return nil, false
	}
	return tagsOf(route, path)
}

// Invalidate makes stale, for every caller and every replica sharing the
// store, the entries of route (a GET route template, cached here or not)
// whose param has value: param is a path parameter of route ("id" of
// restclient.OpGetResource's, "productId" of OpGetProduct's; value
// unescaped) or one of the route's CacheTags, a filter of a list route
// (invoiceRef or locationRef of OpListCreditNotes'), which then matches
// every page and every other query of that list with that filter value. The error reports only a
// route or param that names no tag (a programming error); a store failure is
// not an error: the entries then stay until their TTL, and Stats().Errors
// counts it. Invalidate is not cancelled with ctx.
func (c *Cache) Invalidate(ctx context.Context, route, param, value string) error {
	s := routes[route]
	if s == nil {
		return fmt.Errorf("cache: Invalidate: %q is not a GET route of the API (known: %s)", route, strings.Join(knownRoutes(), ", "))
	}
	if params := s.params; !slices.Contains(params, param) {
		return fmt.Errorf("cache: Invalidate: GET %s has no parameter %q (known: %s)", route, param, strings.Join(params, ", "))
	}
	if err := c.store.Set(context.WithoutCancel(ctx), c.keys.tagKey(route, tag{param, value}), newToken(), tagTTL); err != nil {
		c.storeErrors.Add(1)
		return nil
	}
	c.invalidations.Add(1)
	return nil
}

// Stats counts what a Cache did since New.
type Stats struct {
	Hits          uint64 // Gets answered
	Misses        uint64 // Gets of cached routes not answered
	Puts          uint64 // entries stored
	Invalidations uint64 // Invalidates stored
	Errors        uint64 // store calls that failed or timed out
}

// Stats returns the counts so far.
func (c *Cache) Stats() Stats {
	return Stats{
		Hits: c.hits.Load(), Misses: c.misses.Load(), Puts: c.puts.Load(),
		Invalidations: c.invalidations.Load(), Errors: c.storeErrors.Load(),
	}
}

// pendingMax bounds each generation of pendingVersions.
const pendingMax = 4096

// pendingVersions remembers the tag versions a missing Get saw, by store
// key, until the Put of that fetch takes them. Two generations bound it:
// when the current one is full it becomes the previous one and the older is
// dropped (a Put that finds nothing reads the versions itself). Versions
// older than the truth are harmless: the entry is then stale at once.
type pendingVersions struct {
	mu        sync.Mutex
	cur, prev map[string][][]byte
}

func (p *pendingVersions) put(key string, versions [][]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil || len(p.cur) >= pendingMax {
		p.prev, p.cur = p.cur, make(map[string][][]byte)
	}
	p.cur[key] = versions
}

func (p *pendingVersions) take(key string) ([][]byte, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range []map[string][][]byte{p.cur, p.prev} {
		if v, ok := m[key]; ok {
			delete(m, key)
			return v, true
		}
	}
	return nil, false
}
