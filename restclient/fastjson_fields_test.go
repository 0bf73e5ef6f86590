package restclient

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestGeneratedDecodersFieldByField builds, from the Go types, documents that
// give every field of every generated decoder's root type a value, a null,
// a key in other letter case, and, one field at a time, a value of the wrong
// JSON type, and requires each decoder to agree with encoding/json on each
// (both refuse it, or both decode deeply equal values): every field's
// branches of decode_gen.go, not only those the demo data reaches.
func TestGeneratedDecodersFieldByField(t *testing.T) {
	// The root type of every decoder of decoders() (the table's rows), and
	// how its answer wraps a document of it.
	type root struct {
		typ  reflect.Type
		wrap func(doc any) any
	}
	roots := map[string]root{}
	for _, op := range operations {
		r := root{op.answer.Elem(), func(doc any) any { return doc }}
		switch op.shape {
		case oneObject:
			r.wrap = one(op.Key)
		case listOfObjects:
			r.typ, r.wrap = op.answer.Elem().Elem(), list(op.Key)
		}
		roots[op.Key] = r
		if op.lazy != nil {
			roots[op.Key+"Lazy"] = r
		}
	}
	decs := decoders()
	for name, r := range roots {
		p, ok := decs[name]
		if !ok {
			t.Fatalf("no decoder %q", name)
		}
		check := func(what string, doc any) {
			t.Helper()
			body, err := json.Marshal(r.wrap(doc))
			if err != nil {
				t.Fatal(err)
			}
			sameAsReference(t, name+" "+what, p, body)
		}
		full := &docGen{wrong: -1}
		check("every field", full.value(r.typ, 0))
		check("every field null", (&docGen{wrong: -1, nulls: true}).value(r.typ, 0))
		check("keys in upper case", (&docGen{wrong: -1, upper: true}).value(r.typ, 0))
		for k := range full.fields {
			check("a wrong type in field "+full.names[k], (&docGen{wrong: k}).value(r.typ, 0))
		}
	}
}

func one(key string) func(any) any { return func(doc any) any { return map[string]any{key: doc} } }
func list(key string) func(any) any {
	return func(doc any) any { return map[string]any{key: []any{doc}} }
}

// docGen makes a JSON document (as encoding/json values) for a Go type: every
// field set, or null (nulls), keys upper-cased (upper), and the field of
// traversal index wrong given a value of another JSON type.
type docGen struct {
	wrong        int
	nulls, upper bool
	fields       int      // fields visited
	names        []string // their paths, by index
}

// maxDepth bounds recursive types (a field of a type holding that type).
const maxDepth = 4

func (g *docGen) value(t reflect.Type, depth int) any {
	switch {
	case t == reflect.TypeFor[Timestamp]():
		return "2026-01-02T03:04:05Z"
	case t == reflect.TypeFor[json.RawMessage]():
		return map[string]any{"k": []any{1, "x", true, nil}}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.value(t.Elem(), depth)
	case reflect.String:
		return "x\u00e9\\\"" // an escape and a non-ASCII letter
	case reflect.Bool:
		return true
	case reflect.Int, reflect.Int64, reflect.Int32:
		return -42
	case reflect.Float64, reflect.Float32:
		return 12.5e-1
	case reflect.Slice:
		if depth >= maxDepth {
			return []any{}
		}
		return []any{g.value(t.Elem(), depth+1)}
	case reflect.Map:
		return map[string]any{"k": g.value(t.Elem(), depth+1)}
	case reflect.Struct:
		obj := map[string]any{}
		if depth >= maxDepth {
			return obj
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			k := g.fields
			g.fields++
			g.names = append(g.names, t.Name()+"."+name)
			key := name
			if g.upper {
				key = strings.ToUpper(name)
			}
			switch {
			case k == g.wrong:
				obj[key] = wrongFor(f.Type)
			case g.nulls:
				obj[key] = nil
			default:
				obj[key] = g.value(f.Type, depth+1)
			}
		}
		return obj
	}
	return "x"
}

// wrongFor returns a JSON value of another type than t's.
func wrongFor(t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[Timestamp]():
		return 20260102
	case t == reflect.TypeFor[json.RawMessage]():
		return "not an object, still JSON"
	}
	switch t.Kind() {
	case reflect.String:
		return 7
	case reflect.Bool, reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64, reflect.Float32:
		return "7"
	case reflect.Slice, reflect.Map:
		return true
	case reflect.Struct:
		return []any{1}
	}
	return map[string]any{}
}
