package stack

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/workspacenet/facade/internal/policy/cache"
	"github.com/workspacenet/facade/internal/policy/redisx"
)

// healthStore is the response cache's Redis store behind redisx's health
// state: while Redis is degraded for a key every operation on it fails at
// once (a miss, or nothing stored) instead of waiting for its timeout. With
// a Cluster, health is the key's master's, so a master failing over
// degrades only its own keys; a Get of several keys (an entry and its tags,
// on several masters) is judged as a keyless operation, so that one failing
// master does not degrade another's keys.
type healthStore struct {
	rc    *redisx.Client
	inner *cache.RedisStore
}

func newHealthStore(rc *redisx.Client) healthStore {
	return healthStore{rc: rc, inner: cache.NewRedisStore(rc.Redis(), rc.OpTimeout())}
}

func (s healthStore) Get(ctx context.Context, keys ...string) (out [][]byte, err error) {
	if len(keys) == 0 {
		return nil, nil
	}
	get := func(ctx context.Context, _ redis.UniversalClient) error {
		out, err = s.inner.Get(ctx, keys...)
		return err
	}
	if len(keys) == 1 {
		err = s.rc.DoKey(ctx, keys[0], get)
	} else {
		err = s.rc.Do(ctx, get)
	}
	return out, err
}

func (s healthStore) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return s.rc.DoKey(ctx, key, func(ctx context.Context, _ redis.UniversalClient) error {
		return s.inner.Set(ctx, key, value, ttl)
	})
}

func (s healthStore) SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (ok bool, err error) {
	err = s.rc.DoKey(ctx, key, func(ctx context.Context, _ redis.UniversalClient) error {
		ok, err = s.inner.SetNX(ctx, key, value, ttl)
		return err
	})
	return ok, err
}
