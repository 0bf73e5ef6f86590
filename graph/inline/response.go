package inline

import (
	"sync"
	"sync/atomic"

	"github.com/vektah/gqlparser/v2/ast"
)

// The size of each document's last response, so that the next response of
// an operation of that document is written into a buffer of that size at
// once, instead of one doubling from 64 bytes (ten allocations and copies
// for a response of 60 KB). Keyed by the parsed document (the handler's query
// cache keeps them; the key keeps one alive), started over past
// sharedLimit entries.
var responseSizes struct {
	m sync.Map // *ast.QueryDocument -> *atomic.Int64
	n atomic.Int64
}

// maxSizeHint bounds the size a buffer is grown to before it is written.
const maxSizeHint = 8 << 20

// ResponseSize returns the size to grow the buffer of a response of an
// operation of doc to: its last response's and a sixteenth more (the data
// may have grown since), 0 when none is known.
func ResponseSize(doc *ast.QueryDocument) int {
	if v, ok := responseSizes.m.Load(doc); ok {
		n := int(v.(*atomic.Int64).Load())
		return n + n/16
	}
	return 0
}

// SetResponseSize records n, the size of a response of an operation of doc
// (up to maxSizeHint).
func SetResponseSize(doc *ast.QueryDocument, n int) {
	if doc == nil {
		return
	}
	n = min(n, maxSizeHint)
	if v, ok := responseSizes.m.Load(doc); ok {
		v.(*atomic.Int64).Store(int64(n))
		return
	}
	if responseSizes.n.Add(1) > sharedLimit {
		responseSizes.m.Clear()
		responseSizes.n.Store(0)
	}
	size := new(atomic.Int64)
	size.Store(int64(n))
	responseSizes.m.Store(doc, size)
}
