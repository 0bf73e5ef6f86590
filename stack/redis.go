package stack

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/workspacenet/facade/internal/cache"
	"github.com/workspacenet/facade/internal/redisx"
)

// healthStore is the response cache's Redis store behind redisx's health
// state: while Redis is degraded every operation fails at once (a miss, or
// nothing stored) instead of waiting for its timeout, and a failure marks it
// degraded for the budget and the APQ store too.
type healthStore struct {
	rc    *redisx.Client
	inner *cache.RedisStore
}

func newHealthStore(rc *redisx.Client) healthStore {
	return healthStore{rc: rc, inner: cache.NewRedisStore(rc.Redis(), rc.OpTimeout())}
}

func (s healthStore) Get(ctx context.Context, keys ...string) (out [][]byte, err error) {
	err = s.rc.Do(ctx, func(ctx context.Context, _ redis.UniversalClient) error {
		out, err = s.inner.Get(ctx, keys...)
		return err
	})
	return out, err
}

func (s healthStore) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return s.rc.Do(ctx, func(ctx context.Context, _ redis.UniversalClient) error {
		return s.inner.Set(ctx, key, value, ttl)
	})
}

func (s healthStore) SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (ok bool, err error) {
	err = s.rc.Do(ctx, func(ctx context.Context, _ redis.UniversalClient) error {
		ok, err = s.inner.SetNX(ctx, key, value, ttl)
		return err
	})
	return ok, err
}
