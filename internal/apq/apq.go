// Package apq stores the automatic persisted queries of gqlgen
// (extension.AutomaticPersistedQuery) for every replica: a query registered
// through one replica is found by the others. Each query goes to Redis (key
// wnf:apq:<sha256>, expiring 24h after it was registered) and to a local
// LRU; lookups read the LRU first, then Redis. Without Redis, or while it is
// unavailable (redisx degraded), the store is the local LRU alone and never
// fails.
package apq

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/redis/go-redis/v9"

	"github.com/workspacenet/facade/internal/redisx"
)

const (
	// KeyPrefix starts the Redis key of each query, followed by its SHA-256
	// in lowercase hex.
	KeyPrefix = "wnf:apq:"
	// TTL is how long Redis keeps a query after it was registered.
	TTL = 24 * time.Hour
	// MaxQueryBytes bounds the queries stored: longer ones are not stored
	// (the client then sends them in full, as APQ allows).
	MaxQueryBytes = 256 << 10
)

// store is a graphql.Cache[string] over a local LRU and Redis.
type store struct {
	rc    *redisx.Client
	local *lru.LRU[string]
}

// New returns a store keeping size queries in the local LRU (size > 0) and
// sharing them through rc (nil: local only).
func New(rc *redisx.Client, size int) graphql.Cache[string] {
	return &store{rc: rc, local: lru.New[string](size)}
}

// Get returns the query registered under hash: from the local LRU, else
// from Redis (then kept locally too). A query in Redis that does not hash
// to hash is ignored. Redis failing is a miss.
func (s *store) Get(ctx context.Context, hash string) (string, bool) {
	if q, ok := s.local.Get(ctx, hash); ok {
		return q, true
	}
	if s.rc == nil || !isSHA256(hash) {
		return "", false
	}
	var q string
	err := s.rc.Do(ctx, func(ctx context.Context, r redis.UniversalClient) (err error) {
		q, err = r.Get(ctx, KeyPrefix+hash).Result()
		return err
	})
	if err != nil || len(q) > MaxQueryBytes || !hashes(q, hash) {
		return "", false
	}
	s.local.Add(ctx, hash, q)
	return q, true
}

// Add registers query under hash (gqlgen checked that it hashes to it):
// locally, and in Redis for TTL when Redis is healthy. Queries over
// MaxQueryBytes are not stored.
func (s *store) Add(ctx context.Context, hash, query string) {
	if len(query) > MaxQueryBytes {
		return
	}
	s.local.Add(ctx, hash, query)
	if s.rc == nil || !isSHA256(hash) {
		return
	}
	_ = s.rc.Do(ctx, func(ctx context.Context, r redis.UniversalClient) error {
		return r.Set(ctx, KeyPrefix+hash, query, TTL).Err()
	})
}

// isSHA256 reports whether h is a SHA-256 in lowercase hex, as gqlgen
// computes it: anything else is not looked up in Redis.
func isSHA256(h string) bool {
	if len(h) != 2*sha256.Size {
		return false
	}
	for i := range len(h) {
		if c := h[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func hashes(query, hash string) bool {
	sum := sha256.Sum256([]byte(query))
	return hex.EncodeToString(sum[:]) == hash
}
