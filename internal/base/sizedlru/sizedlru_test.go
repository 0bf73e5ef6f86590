package sizedlru

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

var _ graphql.Cache[string] = (*Cache[string])(nil)

func TestBoundInBytes(t *testing.T) {
	ctx := context.Background()
	c := New[string](10*(1000+EntryOverhead), 0, nil)
	for i := range 100 {
		k := strconv.Itoa(i) + strings.Repeat("x", 1000-len(strconv.Itoa(i)))
		c.Add(ctx, k, "v")
		if c.Bytes() > 10*(1000+EntryOverhead) {
			t.Fatalf("after %d adds: %d bytes", i+1, c.Bytes())
		}
	}
	if c.Len() != 10 {
		t.Errorf("len %d, want 10", c.Len())
	}
	// The most recent ten are kept; the oldest gone.
	if _, ok := c.Get(ctx, "99"+strings.Repeat("x", 998)); !ok {
		t.Error("the last entry was evicted")
	}
	if _, ok := c.Get(ctx, "0"+strings.Repeat("x", 999)); ok {
		t.Error("the first entry is still there")
	}
}

func TestLeastRecentlyUsedGoesFirst(t *testing.T) {
	ctx := context.Background()
	c := New[int](3*(1+EntryOverhead), 0, nil)
	c.Add(ctx, "a", 1)
	c.Add(ctx, "b", 2)
	c.Add(ctx, "c", 3)
	c.Get(ctx, "a")
	c.Add(ctx, "d", 4)
	if _, ok := c.Get(ctx, "b"); ok {
		t.Error("b, the least recently used, was kept")
	}
	for _, k := range []string{"a", "c", "d"} {
		if _, ok := c.Get(ctx, k); !ok {
			t.Errorf("%s evicted", k)
		}
	}
}

func TestTooHeavyIsNotKept(t *testing.T) {
	ctx := context.Background()
	c := New[string](1000, 0, func(k, v string) int64 { return int64(len(k) + len(v)) })
	c.Add(ctx, "k", "small")
	c.Add(ctx, "k", strings.Repeat("v", 1000))
	if _, ok := c.Get(ctx, "k"); ok || c.Bytes() != 0 {
		t.Errorf("a value over the bound was kept (%d bytes)", c.Bytes())
	}
}

func TestEntryBound(t *testing.T) {
	ctx := context.Background()
	c := New[int](1<<20, 2, nil)
	for i := range 5 {
		c.Add(ctx, strconv.Itoa(i), i)
	}
	if c.Len() != 2 {
		t.Errorf("len %d, want 2", c.Len())
	}
	c.Add(ctx, "4", 4) // replacing an entry keeps the count
	if c.Len() != 2 || c.Bytes() != 2*(1+EntryOverhead) {
		t.Errorf("len %d bytes %d after replacing", c.Len(), c.Bytes())
	}
}
