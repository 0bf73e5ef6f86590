// Package apq stores the automatic persisted queries of gqlgen
// (extension.AutomaticPersistedQuery) in this process and, for clients the
// upstream accepted, for every replica: a query shared through one replica
// is found by the others.
//
// Locally the store is an LRU bounded in bytes (Config.Bytes) and entries.
// Add keeps a query locally only; the GraphQL layer calls it once the
// document has parsed and validated, never before. Share also writes it to
// Redis (key wnf:apq:<sha256>, expiring TTL after), charged to the
// registering client's budget (Config.ClientBytes per TTL window) and to the
// budget of all clients (Config.TotalBytes per window); a registration over
// either is kept locally only. Each registration is charged what it takes
// in Redis (Charge), and a key lives at most TTL, so the queries in Redis
// never take more than 2 x TotalBytes (the current window's and the last
// one's).
// Lookups read the LRU first, then Redis. Without Redis, or while it is
// unavailable (redisx degraded), the store is the local LRU alone and never
// fails.
package apq

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/workspacenet/facade/internal/base/sizedlru"
	"github.com/workspacenet/facade/internal/policy/redisx"
)

const (
	// KeyPrefix starts the Redis key of each query, followed by its SHA-256
	// in lowercase hex.
	KeyPrefix = "wnf:apq:"
	// BudgetKeyPrefix starts the Redis keys counting the bytes registered in
	// one TTL window: wnf:apqbudget:{w<window>}:all for every client and
	// wnf:apqbudget:{w<window>}:c:<client> for one.
	BudgetKeyPrefix = "wnf:apqbudget:"
	// TTL is how long Redis keeps a query after it was registered, and the
	// window of the registration budgets.
	TTL = time.Hour
	// KeyOverhead is charged to the budgets for each registration on top of
	// the query's length and a quarter of it (Redis's allocator rounds a
	// value up to its size class, at most 25 % more): Redis's own memory for
	// the key, its name and the client's counter.
	KeyOverhead = 256
)

// Defaults of Config.
const (
	DefaultEntries       = 1000
	DefaultBytes         = 8 << 20
	DefaultMaxQueryBytes = 64 << 10
	DefaultClientBytes   = 2 << 20
	DefaultTotalBytes    = 32 << 20
)

// Config bounds the store.
type Config struct {
	// Entries and Bytes bound the local LRU (the query text and
	// sizedlru.EntryOverhead per entry count towards Bytes).
	Entries int
	Bytes   int64
	// MaxQueryBytes: longer queries are neither stored nor read from Redis.
	MaxQueryBytes int
	// ClientBytes is what one client may register in Redis per TTL window,
	// TotalBytes what all clients may; 0 shares nothing through Redis.
	ClientBytes, TotalBytes int64
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Entries: DefaultEntries, Bytes: DefaultBytes, MaxQueryBytes: DefaultMaxQueryBytes,
		ClientBytes: DefaultClientBytes, TotalBytes: DefaultTotalBytes}
}

// Store is a graphql.Cache[string] over a local byte-bounded LRU and Redis.
type Store struct {
	cfg   Config
	rc    *redisx.Client
	local *sizedlru.Cache[string]
	now   func() time.Time
}

// New returns a store bounded by cfg, sharing queries through rc (nil:
// local only).
func New(rc *redisx.Client, cfg Config) *Store {
	weigh := func(key, q string) int64 { return int64(len(key) + len(q)) }
	return &Store{cfg: cfg, rc: rc, local: sizedlru.New(cfg.Bytes, cfg.Entries, weigh), now: time.Now}
}

// Get returns the query registered under hash: from the local LRU, else
// from Redis (then kept locally too). A query in Redis that does not hash
// to hash, or is longer than MaxQueryBytes, is ignored. Redis failing is a
// miss.
func (s *Store) Get(ctx context.Context, hash string) (string, bool) {
	if q, ok := s.local.Get(ctx, hash); ok {
		return q, true
	}
	if s.rc == nil || !isSHA256(hash) {
		return "", false
	}
	var q string
	err := s.rc.DoKey(ctx, KeyPrefix+hash, func(ctx context.Context, r redis.UniversalClient) (err error) {
		q, err = r.Get(ctx, KeyPrefix+hash).Result()
		return err
	})
	if err != nil || !s.fits(q) || !hashes(q, hash) {
		return "", false
	}
	s.local.Add(ctx, hash, q)
	return q, true
}

// Add keeps query under hash in this process (gqlgen checked that it hashes
// to it). Queries over MaxQueryBytes are not stored.
func (s *Store) Add(ctx context.Context, hash, query string) {
	if s.fits(query) {
		s.local.Add(ctx, hash, query)
	}
}

// Share writes query to Redis for the other replicas, as a registration of
// client (an identity the upstream accepted), when it fits MaxQueryBytes,
// is not there already and fits both budgets of this window. It reports
// whether Redis now holds it.
func (s *Store) Share(ctx context.Context, hash, query, client string) bool {
	if s.rc == nil || !s.fits(query) || !isSHA256(hash) || !hashes(query, hash) || s.cfg.ClientBytes <= 0 || s.cfg.TotalBytes <= 0 {
		return false
	}
	key := KeyPrefix + hash
	shared := false
	err := s.rc.DoKey(ctx, key, func(ctx context.Context, r redis.UniversalClient) error {
		n, err := r.Exists(ctx, key).Result()
		if err != nil || n > 0 {
			shared = n > 0 // there already: not charged again, nor kept longer
			return err
		}
		w := s.now().UnixMilli() / TTL.Milliseconds()
		tag := "{w" + strconv.FormatInt(w, 10) + "}"
		ok, err := charge.Run(ctx, r, []string{BudgetKeyPrefix + tag + ":c:" + client, BudgetKeyPrefix + tag + ":all"},
			Charge(query), s.cfg.ClientBytes, s.cfg.TotalBytes, 2*TTL.Milliseconds()).Int()
		if err != nil || ok != 1 {
			return err // over budget: kept locally only
		}
		if err := r.SetNX(ctx, key, query, TTL).Err(); err != nil {
			return err
		}
		shared = true
		return nil
	})
	return err == nil && shared
}

// charge adds ARGV[1] bytes to the client's counter (KEYS[1]) and the
// total's (KEYS[2]) when neither would pass its budget (ARGV[2], ARGV[3]),
// both expiring after ARGV[4] ms; 1 when charged, 0 when over budget.
var charge = redis.NewScript(`
local n = tonumber(ARGV[1])
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
local g = tonumber(redis.call('GET', KEYS[2]) or '0')
if c + n > tonumber(ARGV[2]) or g + n > tonumber(ARGV[3]) then return 0 end
redis.call('INCRBY', KEYS[1], n)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('INCRBY', KEYS[2], n)
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
`)

// Charge is what registering query in Redis counts against the budgets:
// its length, a quarter more and KeyOverhead.
func Charge(query string) int64 { return int64(len(query) + len(query)/4 + KeyOverhead) }

func (s *Store) fits(q string) bool {
	return s.cfg.MaxQueryBytes <= 0 || len(q) <= s.cfg.MaxQueryBytes
}

// LocalBytes returns the bytes the local LRU is counted for.
func (s *Store) LocalBytes() int64 { return s.local.Bytes() }

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
