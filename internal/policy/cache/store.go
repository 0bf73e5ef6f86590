package cache

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// Store holds the cache's sealed entries and tag versions: opaque byte values
// under string keys, each with a time to live. Implementations must be safe
// for concurrent use and bound every call in time; an error is a miss (Get)
// or nothing done (Set, SetNX), never the Cache caller's error. A Store may
// keep the values given to Set, and callers must not modify the slices Get
// returns.
type Store interface {
	// Get returns the value of each key, in order, nil for an absent or
	// expired key; a networked store answers in one round trip.
	Get(ctx context.Context, keys ...string) ([][]byte, error)
	// Set stores value at key, replacing any value, for ttl (> 0).
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// SetNX stores value at key for ttl (> 0) unless key holds a value, and
	// reports whether it stored.
	SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error)
}

// DefaultMemoryBytes is the bound of NewMemoryStore(0).
const DefaultMemoryBytes = 64 << 20

// MemoryStore is an in-process Store bounded in bytes (of keys and values),
// evicting the least recently used entries to make room; expired entries are
// never returned. Its calls never fail.
type MemoryStore struct {
	max int
	now func() time.Time // tests replace it

	mu    sync.Mutex
	size  int
	lru   *list.List // of *memEntry, most recently used first
	items map[string]*list.Element
}

type memEntry struct {
	key     string
	value   []byte
	expires time.Time
}

// NewMemoryStore returns a MemoryStore holding at most maxTotalBytes of keys
// and values (DefaultMemoryBytes when maxTotalBytes <= 0). A value that
// cannot fit alone is not stored.
func NewMemoryStore(maxTotalBytes int) *MemoryStore {
	if maxTotalBytes <= 0 {
		maxTotalBytes = DefaultMemoryBytes
	}
	return &MemoryStore{max: maxTotalBytes, now: time.Now, lru: list.New(), items: map[string]*list.Element{}}
}

// Get implements Store.
func (s *MemoryStore) Get(_ context.Context, keys ...string) ([][]byte, error) {
	out := make([][]byte, len(keys))
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range keys {
		if el := s.live(k, now); el != nil {
			s.lru.MoveToFront(el)
			out[i] = el.Value.(*memEntry).value
		}
	}
	return out, nil
}

// Set implements Store.
func (s *MemoryStore) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.set(key, value, now.Add(ttl))
	return nil
}

// SetNX implements Store.
func (s *MemoryStore) SetNX(_ context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live(key, now) != nil {
		return false, nil
	}
	return s.set(key, value, now.Add(ttl)), nil
}

// Len returns the number of entries held (expired ones included until they
// are evicted or looked up) and their size in bytes.
func (s *MemoryStore) Len() (entries, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lru.Len(), s.size
}

// live returns key's element, removing it when expired.
func (s *MemoryStore) live(key string, now time.Time) *list.Element {
	el := s.items[key]
	if el == nil {
		return nil
	}
	if !now.Before(el.Value.(*memEntry).expires) {
		s.remove(el)
		return nil
	}
	return el
}

// set stores the entry, evicting from the least recently used end; it reports
// whether the entry fits.
func (s *MemoryStore) set(key string, value []byte, expires time.Time) bool {
	if el := s.items[key]; el != nil {
		s.remove(el)
	}
	n := len(key) + len(value)
	if n > s.max {
		return false
	}
	for s.size+n > s.max {
		s.remove(s.lru.Back())
	}
	s.items[key] = s.lru.PushFront(&memEntry{key: key, value: value, expires: expires})
	s.size += n
	return true
}

func (s *MemoryStore) remove(el *list.Element) {
	e := s.lru.Remove(el).(*memEntry)
	delete(s.items, e.key)
	s.size -= len(e.key) + len(e.value)
}
