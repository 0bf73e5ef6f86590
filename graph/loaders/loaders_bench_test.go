package loaders

import (
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
