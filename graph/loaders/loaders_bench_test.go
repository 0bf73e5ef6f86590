package loaders

import (
	"context"
	"testing"

	"github.com/workspacenet/facade/restclient"
)

// BenchmarkNew measures the per-request setup of the loaders (every GraphQL
// request makes one set).
func BenchmarkNew(b *testing.B) {
	c, err := restclient.NewClient("http://127.0.0.1:1")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if New(c, DefaultConfig()) == nil {
			b.Fatal("nil loaders")
		}
	}
}

// BenchmarkLoad measures a loader's own cost per key, around a fetch that
// returns at once: "miss" is the first load of a key in a request (the
// loader made, the fetch dispatched), "hit" a key the request loaded before.
func BenchmarkLoad(b *testing.B) {
	ctx := b.Context()
	res := &restclient.Resource{ID: "r1"}
	fetch := func(_ *Loaders, _ context.Context, id string) (*restclient.Resource, error) {
		return res, nil
	}
	b.Run("miss", func(b *testing.B) {
		l := New(nil, DefaultConfig())
		b.ReportAllocs()
		for b.Loop() {
			z := testLoader(l, fetch)
			if v, err := z.load(ctx, "r1"); v != res || err != nil {
				b.Fatal(v, err)
			}
		}
	})
	b.Run("hit", func(b *testing.B) {
		z := testLoader(New(nil, DefaultConfig()), fetch)
		if _, err := z.load(ctx, "r1"); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if v, err := z.load(ctx, "r1"); v != res || err != nil {
				b.Fatal(v, err)
			}
		}
	})
}
