package guard

import (
	"encoding/json"
	"io"
	"mime"
	"strings"
	"testing"
	"testing/iotest"
)

// plainString's fast path answers exactly what json.Unmarshal answers, and
// leaves to it every string it cannot take as is.
func TestPlainStringAgreesWithJSON(t *testing.T) {
	for _, raw := range []string{`""`, `"{ __typename }"`, `"query Q($id: ID!) { resource(id: $id) { title } }"`,
		`"caf\u00e9 ✓"`, "\"caf\xc3\xa9\"", "\"bad \xff utf-8\"", `"a\"b"`, `"tab\there"`, "\"raw\ttab\"", `"\\"`, "\"nl\n\""} {
		var want string
		werr := json.Unmarshal([]byte(raw), &want)
		got, ok := plainString(json.RawMessage(raw))
		if ok && (werr != nil || got != want) {
			t.Errorf("plainString(%q) = %q; json.Unmarshal: %q, %v", raw, got, want, werr)
		}
		var d string
		ref := decodeMember("request member", "query", json.RawMessage(raw), &d)
		if (ref == nil) != (werr == nil) || werr == nil && d != want {
			t.Errorf("decodeMember(%q) = %q, %v; json.Unmarshal: %q, %v", raw, d, ref, want, werr)
		}
	}
	if _, ok := plainString(json.RawMessage("\"caf\xc3\xa9\"")); !ok {
		t.Error("valid UTF-8 without escapes not taken as is")
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
