package restclient

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	gojson "github.com/goccy/go-json"
)

// Decoding of 2xx bodies
//
// Every successful answer is decoded by unmarshal, the one place that names
// the JSON codec: github.com/goccy/go-json, which decodes our types two to
// three times faster than encoding/json with the same semantics (struct
// tags, UnmarshalJSON methods such as Timestamp's, json.RawMessage, errors
// on type mismatches and trailing data). Envelopes ({"transactions": [...],
// "nextPageToken": "..."}) are decoded in one pass into a struct made for
// the key (envelopeType), so the page is scanned once and the other keys are
// validated and skipped by the codec.

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

// unmarshal decodes the JSON document data into v.
func unmarshal(data []byte, v any) error { return gojson.Unmarshal(data, v) }

// unmarshalObject is unmarshal for a document that must be a JSON object
// (null, arrays and scalars are errors).
func unmarshalObject(data []byte, v any) error {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return errors.New("response is not a JSON object")
	}
	return unmarshal(data, v)
}

// envelopeKey names an envelope type: the wrapped type and its key.
type envelopeKey struct {
	t    reflect.Type
	key  string
	list bool
}

var envelopes sync.Map // envelopeKey -> reflect.Type

// envelopeType returns struct { V <t> `json:"<key>"`; Next, SearchQueryNext
// *string } (the page tokens only for lists), made once per key.
func envelopeType(k envelopeKey) reflect.Type {
	if t, ok := envelopes.Load(k); ok {
		return t.(reflect.Type)
	}
	fields := []reflect.StructField{{Name: "V", Type: k.t, Tag: reflect.StructTag(fmt.Sprintf(`json:%q`, k.key))}}
	if k.list {
		str := reflect.TypeFor[*string]()
		fields = append(fields,
			reflect.StructField{Name: "Next", Type: str, Tag: `json:"nextPageToken"`},
			reflect.StructField{Name: "SearchQueryNext", Type: str, Tag: `json:"searchQueryNext"`})
	}
	t, _ := envelopes.LoadOrStore(k, reflect.StructOf(fields))
	return t.(reflect.Type)
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
// object is an error. Types with generated decoders use them, others go-json.
func parseOne[T any](key string) parseFunc {
	if f, ok := any((*T)(nil)).(fastRoot); ok {
		return f.fastOne(key)
	}
	return goParseOne[T](key)
}

// parseList decodes the array under key into a new []*T (missing or null:
// empty; its capacity is its length, so an append by one holder never writes
// into another's) and the page tokens beside it (strings or null). Types with
// generated decoders use them, others go-json.
func parseList[T any](key string) parseFunc {
	if f, ok := any((*T)(nil)).(fastRoot); ok {
		return f.fastList(key)
	}
	return goParseList[T](key)
}

// goParseOne is parseOne with go-json.
func goParseOne[T any](key string) parseFunc { return parseOneWith[T](key, unmarshalObject) }

// goParseList is parseList with go-json.
func goParseList[T any](key string) parseFunc { return parseListWith[T](key, unmarshalObject) }

// parseOneWith is parseOne through an envelope struct decoded by unmarshal
// (go-json here, encoding/json in the tests that compare with it).
func parseOneWith[T any](key string, unmarshal func([]byte, any) error) parseFunc {
	return func(data []byte) (any, pageInfo, error) {
		env := reflect.New(envelopeType(envelopeKey{t: reflect.TypeFor[*T](), key: key}))
		if err := unmarshal(data, env.Interface()); err != nil {
			return nil, pageInfo{}, err
		}
		v := env.Elem().Field(0).Interface().(*T)
		if v == nil {
			return nil, pageInfo{}, errNoObject(key)
		}
		return v, pageInfo{}, nil
	}
}

// parseListWith is parseList through an envelope struct decoded by
// unmarshal.
func parseListWith[T any](key string, unmarshal func([]byte, any) error) parseFunc {
	return func(data []byte) (any, pageInfo, error) {
		env := reflect.New(envelopeType(envelopeKey{t: reflect.TypeFor[[]*T](), key: key, list: true})).Elem()
		if err := unmarshal(data, env.Addr().Interface()); err != nil {
			return nil, pageInfo{}, err
		}
		var p pageInfo
		if s := env.Field(1).Interface().(*string); s != nil {
			p.next = *s
		}
		if s := env.Field(2).Interface().(*string); s != nil {
			p.searchQueryNext = *s
		}
		return slices.Clip(env.Field(0).Interface().([]*T)), p, nil
	}
}

// decodeStruct decodes the whole response object into dst, with its
// generated decoder when it has one, else go-json.
func decodeStruct[T any](dst *T) decodeFunc {
	return func(data []byte) (pageInfo, error) {
		if f, ok := any(dst).(interface{ fastWhole([]byte) error }); ok {
			return pageInfo{}, f.fastWhole(data)
		}
		return pageInfo{}, unmarshalObject(data, dst)
	}
}
