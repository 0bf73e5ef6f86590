package live

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestSharedNamesNeedTheSecret: a source's name in Redis (its lease, state
// and channel keys) depends on the replicas' secret: a reader of Redis, who
// sees the identity hashes in the budget's keys, cannot compute the name of
// a guessed (identity, source), so cannot tell which sources a client
// watches. The replicas of one secret agree on the name.
func TestSharedNamesNeedTheSecret(t *testing.T) {
	k := pollerKey{identity: alice.Identity(), source: "/shop/orders/v1?locationRef=loc-1"}
	a := NewShared(nil, []byte("secret one, 32 bytes long......."))
	b := NewShared(nil, []byte("secret two, 32 bytes long......."))
	if a.name(k) == b.name(k) {
		t.Fatalf("name %s is the same under two secrets", a.name(k))
	}
	if again := NewShared(nil, []byte("secret one, 32 bytes long.......")); again.name(k) != a.name(k) {
		t.Fatal("two replicas of one secret name a source differently")
	}
	plain := sha256.Sum256([]byte(k.identity + "\x00" + k.source))
	if a.name(k) == hex.EncodeToString(plain[:16]) {
		t.Fatal("the name is a plain hash of the identity and the source")
	}
}
