package guard

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// decodeBodyTwoPass decodes a body in two passes (json.Unmarshal into raw
// members, then each member decoded): the plain reference DecodeBody's one
// pass must agree with.
func decodeBodyTwoPass(body []byte) (*Params, *Refusal) {
	t := bytes.TrimLeft(body, " \t\r\n")
	if len(t) > 0 && t[0] == '[' {
		return nil, badRequest("batched requests (a JSON array) are not supported: send one operation per request")
	}
	var raw struct {
		Query, OperationName, DocumentID json.RawMessage
		Variables, Extensions            json.RawMessage
	}
	if len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &raw) != nil {
		return nil, badRequest("the request body is not a JSON object {\"query\", \"variables\", \"operationName\", \"extensions\"}")
	}
	p := &Params{}
	for _, m := range []struct {
		name string
		raw  json.RawMessage
		dst  any
	}{{"query", raw.Query, &p.Query}, {"operationName", raw.OperationName, &p.OperationName}, {"documentId", raw.DocumentID, &p.DocumentID},
		{"variables", raw.Variables, &p.Variables}, {"extensions", raw.Extensions, &p.Extensions}} {
		if len(m.raw) == 0 || string(m.raw) == "null" {
			continue
		}
		if d, ok := m.dst.(*string); ok {
			if m.raw[0] != '"' {
				return nil, badRequest("the request member \"" + m.name + "\" must be a string")
			}
			if json.Unmarshal(m.raw, d) != nil {
				return nil, badRequest("the request member \"" + m.name + "\" could not be decoded")
			}
			continue
		}
		if ref := decodeMember("request member", m.name, m.raw, m.dst); ref != nil {
			return nil, ref
		}
	}
	return p, p.check()
}

// DecodeBody answers every body as the two-pass reference does: the same
// parameters (numbers as json.Number) or the same refusal.
func TestDecodeBodyAgreesWithTwoPass(t *testing.T) {
	for _, body := range []string{
		`{"query":"{ __typename }"}`,
		`{"query":"query Q($id: ID!) { resource(id: $id) { title } }","variables":{"id":"x","n":12345678901234567890,"f":1.5,"l":[1,{"a":null}]},"operationName":"Q"}`,
		`{"query":"caf\u00e9 \"q\" ✓","extensions":{"persistedQuery":{"version":1,"sha256Hash":"ab"}}}`,
		"{\"query\":\"bad \xff utf-8\"}", `{"Query":"case-insensitive member"}`, `{"query":"a","query":"b"}`,
		`{"documentId":"d1"}`, `{"extensions":{"persistedQuery":{"version":1}}}`, `{}`, `{"query":null,"variables":null}`,
		`{"query":1}`, `{"query":"q","operationName":true}`, `{"query":"q","documentId":{}}`, `{"query":"q","variables":[1]}`,
		`{"query":"q","variables":"{}"}`, `{"query":"q","extensions":7}`, `{"query":"q"} {"query":"r"}`, `{"query":"q"}}`,
		`{"query":"q"}  ` + "\n", `  {"query":"q"}`, `[{"query":"q"}]`, `"query"`, ``, `{`, `{"query":"q",}`, `nul`, `{"query":"raw` + "\t" + `tab"}`,
		`{"query":"q","variables":{"a":1},"variables":{"b":2}}`, `{"query":"q","unknown":[1,2,{"x":"y"}]}`,
		// Escapes, surrogates, literals, nesting, whitespace, members in any
		// case.
		`{"query":"\x"}`, `{"query":"\u12"}`, `{"query":"\u00e9\ud83d\ude00 \ud800 \udc00x \/ \b\f\n\r\t"}`, `{"query":"q","variables":{"a":tru}}`,
		`{"query":"q","variables":{"a":true,"b":false,"c":null,"d":[],"e":{},"f":[[["x"]]],"g":"\"}"}}`, `{"query":"q","variables":{"a":01}}`,
		`{"query":"q","variables":{"a":-0.5e+3}}`, `{"query":"q","extensions":{"n":[1]}}`, "{\"query\":\"q\",\n  \"variables\": {\"a\": \"b\"}\n}",
		`{"QUERY":"q","Variables":{"K":"v"},"OPERATIONNAME":"Op"}`, `{"query":"q","variables":{"a":"b",}}`, `{"query":"q","variables":{"a" "b"}}`,
		`{"query":"q","variables":{"a":"b"}}x`, `{"query":"q","variables":{"":""}}`, `{"query":"","operationName":""}`, `{"query":"q"`, `{"query":"q","variables":{"a":"\u0000"}}`,
		`{"query":"q","variables":{"a":nul}}`, `{"query":"q","variables":{"a":"b"},"extensions":null}`, `{"query":"q","variables":{"a":["b",]}}`,
		`{"query":"q","variables":{"a":"b"}} `, ` {"query":"q","variables":{"a":{"b":{"c":["d",true,null]}}}}`, `{"query":"q","operationName":null,"documentId":null}`,
	} {
		gp, gref := DecodeBody([]byte(body))
		wp, wref := decodeBodyTwoPass([]byte(body))
		if !reflect.DeepEqual(gp, wp) || !reflect.DeepEqual(gref, wref) {
			t.Errorf("%q:\n got  %+v %+v\n want %+v %+v", body, gp, gref, wp, wref)
		}
	}
}

// isJSON accepts only what mime.ParseMediaType reads as application/json
// with no parameter but charset=utf-8.
func TestIsJSONAgreesWithParseMediaType(t *testing.T) {
	for _, ct := range []string{"application/json", "Application/JSON", "application/json; charset=utf-8",
		"application/json;charset=UTF-8", "application/json;  charset=utf-8", "application/jsonx", "application/json; charset=latin1",
		"application/json; boundary=x", "text/plain", "", "application/json,"} {
		mt, params, err := mime.ParseMediaType(ct)
		want := err == nil && mt == "application/json" && len(params) <= 1 && (len(params) == 0 || strings.EqualFold(params["charset"], "utf-8"))
		if got := isJSON(ct); got && !want {
			t.Errorf("isJSON(%q) = true; mime: %q %v %v", ct, mt, params, err)
		}
	}
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "APPLICATION/JSON;charset=UTF-8"} {
		if !isJSON(ct) {
			t.Errorf("isJSON(%q) = false", ct)
		}
	}
}

// readAll reads every byte whatever the announced size and the reads' sizes.
func TestReadAll(t *testing.T) {
	body := strings.Repeat("0123456789", 1000)
	for _, size := range []int64{-1, 0, 10, int64(len(body)), int64(len(body)) + 5, 1 << 30} {
		for name, r := range map[string]io.Reader{"whole": strings.NewReader(body), "one byte": iotest.OneByteReader(strings.NewReader(body))} {
			got, err := readAll(r, size)
			if err != nil || string(got) != body {
				t.Errorf("size %d, %s: %d bytes, %v", size, name, len(got), err)
			}
		}
	}
	if _, err := readAll(iotest.ErrReader(io.ErrUnexpectedEOF), 10); err != io.ErrUnexpectedEOF {
		t.Errorf("read error: %v", err)
	}
}

// BenchmarkDecodeBody decodes a resource query's POST body.
func BenchmarkDecodeBody(b *testing.B) {
	body := []byte(`{"query":"query Resource($id: ID!) { resource(id: $id) { id title type capacity } }","variables":{"id":"50d02716-58d5-40e7-943d-c9c79898b0e5"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, ref := DecodeBody(body); ref != nil {
			b.Fatal(ref.Message)
		}
	}
}

// BenchmarkDecodeBodyNumbers decodes a body whose variables hold numbers
// (they reach gqlgen as json.Number).
func BenchmarkDecodeBodyNumbers(b *testing.B) {
	body := []byte(`{"query":"query Orders($l: ID!, $n: Int) { orders(locationId: $l, first: $n) { nodes { id } } }","variables":{"l":"a1ee47b3-6872-4b88-852c-288830aca7b5","n":25}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, ref := DecodeBody(body); ref != nil {
			b.Fatal(ref.Message)
		}
	}
}
