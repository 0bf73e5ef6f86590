package cache

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/workspacenet/facade/internal/policy/redisx"
)

// DefaultRedisTimeout is the op timeout of NewRedisStore(r, 0).
const DefaultRedisTimeout = 100 * time.Millisecond

// RedisStore is a Store in Redis: values are strings set with native TTLs
// (SET ... PX), so every replica sharing the server shares the entries and
// the invalidations. Multi-key reads are pipelined GETs, which a cluster
// client may route to several shards.
type RedisStore struct {
	r       redis.UniversalClient
	timeout time.Duration
}

// NewRedisStore returns a Store on r whose every call returns within about
// opTimeout (DefaultRedisTimeout when opTimeout <= 0), even if r does not
// honour context deadlines (go-redis without ContextTimeoutEnabled): the
// call then returns an error while r's command finishes in the background
// under r's own timeouts.
func NewRedisStore(r redis.UniversalClient, opTimeout time.Duration) *RedisStore {
	if opTimeout <= 0 {
		opTimeout = DefaultRedisTimeout
	}
	return &RedisStore{r: r, timeout: opTimeout}
}

// Get implements Store. A key holding another type than a string (or
// anything Redis refuses to GET for what it holds: redisx.IsKeyError) reads
// as absent; the other keys are read as usual.
func (s *RedisStore) Get(ctx context.Context, keys ...string) ([][]byte, error) {
	var out [][]byte
	err := s.bounded(ctx, func(ctx context.Context) error {
		cmds := make([]*redis.StringCmd, len(keys))
		_, err := s.r.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range keys {
				cmds[i] = p.Get(ctx, k)
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) && !redisx.IsKeyError(err) {
			return err
		}
		vals := make([][]byte, len(keys))
		for i, c := range cmds {
			b, err := c.Bytes()
			switch {
			case errors.Is(err, redis.Nil), redisx.IsKeyError(err):
				// Absent, or not a value this package wrote: a miss.
			case err != nil:
				return err
			default:
				vals[i] = b
			}
		}
		out = vals
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Set implements Store.
func (s *RedisStore) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return s.bounded(ctx, func(ctx context.Context) error {
		return s.r.Do(ctx, "SET", key, value, "PX", millis(ttl)).Err()
	})
}

// SetNX implements Store.
func (s *RedisStore) SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	var set bool
	err := s.bounded(ctx, func(ctx context.Context) error {
		err := s.r.Do(ctx, "SET", key, value, "NX", "PX", millis(ttl)).Err()
		switch {
		case errors.Is(err, redis.Nil): // NX refused: key exists
			return nil
		case err != nil:
			return err
		}
		set = true
		return nil
	})
	if err != nil {
		return false, err
	}
	return set, nil
}

// bounded runs f with a context ending after the op timeout, and returns
// when f does or when that context ends, whichever is first. f's results
// must be read only after it returned nil here.
func (s *RedisStore) bounded(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func millis(d time.Duration) int64 { return max(d.Milliseconds(), 1) }
