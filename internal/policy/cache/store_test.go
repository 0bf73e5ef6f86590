package cache

import (
	"strings"
	"testing"
	"time"
)

func TestMemoryStoreBoundAndLRU(t *testing.T) {
	ctx := t.Context()
	m := NewMemoryStore(100)
	v := []byte(strings.Repeat("v", 29)) // with a 1-byte key: 30 bytes
	for _, k := range []string{"a", "b", "c"} {
		if err := m.Set(ctx, k, v, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	m.Get(ctx, "a") // a is now more recently used than b
	m.Set(ctx, "d", v, time.Minute)
	got, _ := m.Get(ctx, "a", "b", "c", "d")
	if got[0] == nil || got[1] != nil || got[2] == nil || got[3] == nil {
		t.Errorf("after evicting for d: a %v b %v c %v d %v; want b evicted", got[0] != nil, got[1] != nil, got[2] != nil, got[3] != nil)
	}
	if n, size := m.Len(); n != 3 || size != 90 {
		t.Errorf("Len = %d entries, %d bytes", n, size)
	}
	// Replacing an entry counts its size once.
	m.Set(ctx, "a", []byte("x"), time.Minute)
	if n, size := m.Len(); n != 3 || size != 62 {
		t.Errorf("Len = %d entries, %d bytes", n, size)
	}
	// A value that cannot fit alone is not stored and evicts nothing.
	big := []byte(strings.Repeat("b", 100))
	m.Set(ctx, "e", big, time.Minute)
	if ok, _ := m.SetNX(ctx, "f", big, time.Minute); ok {
		t.Error("SetNX stored a value larger than the store")
	}
	if got, _ := m.Get(ctx, "e", "f", "c"); got[0] != nil || got[1] != nil || got[2] == nil {
		t.Errorf("oversized values: %q", got)
	}
}

func TestMemoryStoreExpiryAndSetNX(t *testing.T) {
	ctx := t.Context()
	clk := &fakeClock{t: time.Unix(1_900_000_000, 0)}
	m := NewMemoryStore(0)
	m.now = clk.Now
	if ok, _ := m.SetNX(ctx, "k", []byte("1"), time.Second); !ok {
		t.Fatal("SetNX on an absent key did not store")
	}
	if ok, _ := m.SetNX(ctx, "k", []byte("2"), time.Second); ok {
		t.Fatal("SetNX replaced a live value")
	}
	clk.Advance(time.Second - 1)
	if got, _ := m.Get(ctx, "k"); string(got[0]) != "1" {
		t.Fatalf("before expiry: %q", got[0])
	}
	clk.Advance(1)
	if got, _ := m.Get(ctx, "k"); got[0] != nil {
		t.Fatalf("after expiry: %q", got[0])
	}
	if n, _ := m.Len(); n != 0 {
		t.Errorf("expired entry still held: %d", n)
	}
	if ok, _ := m.SetNX(ctx, "k", []byte("3"), time.Second); !ok {
		t.Fatal("SetNX on an expired key did not store")
	}
}
