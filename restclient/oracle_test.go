package restclient

import (
	"fmt"
	"reflect"
	"sync"
)

// The encoding/json oracle: each response decoded through an envelope
// struct by encoding/json, which the generated decoders must agree with
// (FuzzDecodeResponse, the decoder tests and benchmarks).

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

// parseOneWithType is parseOneWith for the answer type t (a *T).
func parseOneWithType(t reflect.Type, key string, unmarshal func([]byte, any) error) parseFunc {
	return func(data []byte) (any, pageInfo, error) {
		env := reflect.New(envelopeType(envelopeKey{t: t, key: key}))
		if err := unmarshal(data, env.Interface()); err != nil {
			return nil, pageInfo{}, err
		}
		v := env.Elem().Field(0)
		if v.IsNil() {
			return nil, pageInfo{}, errNoObject(key)
		}
		return v.Interface(), pageInfo{}, nil
	}
}

// parseListWithType is parseListWith for the answer type t (a []*T).
func parseListWithType(t reflect.Type, key string, unmarshal func([]byte, any) error) parseFunc {
	return func(data []byte) (any, pageInfo, error) {
		env := reflect.New(envelopeType(envelopeKey{t: t, key: key, list: true})).Elem()
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
		l := env.Field(0)
		return l.Slice3(0, l.Len(), l.Len()).Interface(), p, nil
	}
}

// parseOneWith is parseOne through an envelope struct decoded by unmarshal:
// encoding/json, in the tests that hold the generated decoders to it.
func parseOneWith[T any](key string, unmarshal func([]byte, any) error) parseFunc {
	return parseOneWithType(reflect.TypeFor[*T](), key, unmarshal)
}

// parseListWith is parseList through an envelope struct decoded by
// unmarshal.
func parseListWith[T any](key string, unmarshal func([]byte, any) error) parseFunc {
	return parseListWithType(reflect.TypeFor[[]*T](), key, unmarshal)
}
