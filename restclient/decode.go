package restclient

import (
	"fmt"
	"io"
	"reflect"
	"sync"
	"sync/atomic"
)

// Decoding of 2xx bodies
//
// Every successful answer is decoded by the generated decoders of its wire
// type (decode_gen.go over fastjson.go's reader; `go generate ./restclient`
// writes them, CI checks they are fresh, and FuzzDecodeResponse holds them
// to encoding/json's semantics). parseOne and parseList refuse, when the
// package is initialised, a type without generated decoders, so there is no
// second decoding path. Envelopes ({"transactions": [...], "nextPageToken":
// "..."}) are decoded in one pass.

// bodySizes remembers the size of each route's last 2xx body, so the next
// body of the route (usually chunked, without Content-Length) is read into a
// buffer of about the right size instead of one grown by doubling from 512
// bytes (a location's product list is ~90 KB).
type bodySizes struct{ m sync.Map } // route -> *atomic.Int64

// hint returns route's size record.
func (b *bodySizes) hint(route string) *atomic.Int64 {
	if v, ok := b.m.Load(route); ok {
		return v.(*atomic.Int64)
	}
	v, _ := b.m.LoadOrStore(route, new(atomic.Int64))
	return v.(*atomic.Int64)
}

// readBody reads a 2xx body of at most maxResponseBody bytes (one more byte
// tells the caller it is too large) into a buffer sized by the Content-Length
// when the answer has one, else by the route's last body (hint), and updates
// hint.
func readBody(r io.Reader, contentLength int64, hint *atomic.Int64) ([]byte, error) {
	size := contentLength
	if size < 0 {
		size = hint.Load() + hint.Load()/8
	}
	size = min(max(size, 512), maxResponseBody+1)
	buf := make([]byte, 0, size+1) // +1: room to see EOF without growing
	lr := io.LimitReader(r, maxResponseBody+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			hint.Store(int64(len(buf)))
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// parseFunc decodes a 2xx body into a fresh value (a *T or a []*T) and the
// paging it carried; shared GETs parse once for every read-only waiter.
type parseFunc func(data []byte) (any, pageInfo, error)

// fastRoot is a type with generated decoders (decode_gen.go, fastjson.go).
type fastRoot interface {
	fastOne(key string) parseFunc
	fastList(key string) parseFunc
}

// errNoObject is the error of an envelope without its object.
func errNoObject(key string) error { return fmt.Errorf("response has no %q object", key) }

// parseOne decodes the object under key into a new *T; a missing or null
// object is an error. T must have generated decoders (a root of
// decode_gen.go's go:generate line): parseOne panics otherwise, when the
// package's parse functions are made.
func parseOne[T any](key string) parseFunc { return fastRootOf[T]().fastOne(key) }

// parseList decodes the array under key into a new []*T (missing or null:
// empty; its capacity is its length, so an append by one holder never writes
// into another's) and the page tokens beside it (strings or null). T must
// have generated decoders, as for parseOne.
func parseList[T any](key string) parseFunc { return fastRootOf[T]().fastList(key) }

// fastRootOf returns T's generated decoders, or panics naming T.
func fastRootOf[T any]() fastRoot {
	f, ok := any((*T)(nil)).(fastRoot)
	if !ok {
		panic(fmt.Sprintf("restclient: %v has no generated decoder: add it to the go:generate line of fastjson.go", reflect.TypeFor[T]()))
	}
	return f
}
