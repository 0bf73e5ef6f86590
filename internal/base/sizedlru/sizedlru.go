// Package sizedlru is a least-recently-used cache bounded in bytes: each
// entry weighs what its weight function says (at least the length of its
// key), and adding one evicts the least recently used until the sum fits
// the bound. An entry heavier than the bound alone is not kept. It
// implements gqlgen's graphql.Cache, so the server's parsed-document cache
// and the APQ store hold at most their bound, however large the documents
// sent.
package sizedlru

import (
	"container/list"
	"context"
	"sync"
)

// EntryOverhead is the bytes counted for each entry on top of its weight:
// the map slot, the list element and the entry's own fields.
const EntryOverhead = 160

// Cache is a byte-bounded LRU, safe for concurrent use.
type Cache[V any] struct {
	maxBytes   int64
	maxEntries int
	weigh      func(key string, v V) int64

	mu    sync.Mutex
	bytes int64
	m     map[string]*list.Element // of *entry[V]
	order list.List                // most recently used first
}

type entry[V any] struct {
	key    string
	v      V
	weight int64
}

// New returns a cache holding at most maxBytes, counted as weigh(key,
// value) plus EntryOverhead per entry, and at most maxEntries entries (0: no
// count bound). weigh nil counts the key's length.
func New[V any](maxBytes int64, maxEntries int, weigh func(key string, v V) int64) *Cache[V] {
	if weigh == nil {
		weigh = func(key string, _ V) int64 { return int64(len(key)) }
	}
	return &Cache[V]{maxBytes: maxBytes, maxEntries: maxEntries, weigh: weigh, m: map[string]*list.Element{}}
}

// Get returns key's value and makes it the most recently used.
func (c *Cache[V]) Get(_ context.Context, key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry[V]).v, true
}

// Add stores value under key, evicting the least recently used entries
// until the cache is within its bounds. A value heavier than the whole
// bound is not stored (and removes an older value of key).
func (c *Cache[V]) Add(_ context.Context, key string, value V) {
	w := c.weigh(key, value) + EntryOverhead
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[key]; ok {
		c.removeElement(el)
	}
	if w > c.maxBytes {
		return
	}
	c.m[key] = c.order.PushFront(&entry[V]{key: key, v: value, weight: w})
	c.bytes += w
	for c.bytes > c.maxBytes || c.maxEntries > 0 && c.order.Len() > c.maxEntries {
		c.removeElement(c.order.Back())
	}
}

func (c *Cache[V]) removeElement(el *list.Element) {
	e := c.order.Remove(el).(*entry[V])
	delete(c.m, e.key)
	c.bytes -= e.weight
}

// Bytes returns the bytes the entries are counted for.
func (c *Cache[V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// Len returns the number of entries.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
