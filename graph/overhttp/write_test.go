package overhttp

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/errcode"
)

// sink is a ResponseWriter keeping the status and body.
type sink struct {
	h      http.Header
	status int
	body   []byte
}

func (s *sink) Header() http.Header {
	if s.h == nil {
		s.h = http.Header{}
	}
	return s.h
}
func (s *sink) WriteHeader(status int)      { s.status = status }
func (s *sink) Write(b []byte) (int, error) { s.body = append(s.body, b...); return len(b), nil }

// TestWriteIsEncodingJSONsBody: write's bytes are what encoding/json makes of
// the response as the spec writes it (errors, data, extensions in that order,
// each only when present; data as it is), for every combination, with its
// length as the Content-Length.
func TestWriteIsEncodingJSONsBody(t *testing.T) {
	type body struct {
		Errors     gqlerror.List   `json:"errors,omitempty"`
		Data       json.RawMessage `json:"data,omitempty"`
		Extensions map[string]any  `json:"extensions,omitempty"`
	}
	errs := gqlerror.List{{Message: "bad <input> & more", Path: ast.Path{ast.PathName("a"), ast.PathIndex(1)},
		Extensions: map[string]any{"code": "BAD_USER_INPUT", "field": "first"}}}
	ext := map[string]any{"upstream": []map[string]any{{"route": "GET /x", "ms": 1.5}}}
	for _, data := range []string{"", "null", `{"a":[{"b":"c\u003c"},null]}`} {
		for _, e := range []gqlerror.List{nil, errs} {
			for _, x := range []map[string]any{nil, ext} {
				resp := &graphql.Response{Errors: e, Data: json.RawMessage(data), Extensions: x}
				want, err := json.Marshal(body{Errors: e, Data: json.RawMessage(data), Extensions: x})
				if err != nil {
					t.Fatal(err)
				}
				var s sink
				write(&s, http.StatusOK, resp)
				if s.status != http.StatusOK || string(s.body) != string(want) {
					t.Errorf("data %q, %d errors, extensions %v: %d %s, want 200 %s", data, len(e), x != nil, s.status, s.body, want)
				}
				if cl := s.Header().Get("Content-Length"); cl != strconv.Itoa(len(want)) {
					t.Errorf("data %q, %d errors, extensions %v: Content-Length %q, want %d", data, len(e), x != nil, cl, len(want))
				}
			}
		}
	}
}

// TestWriteUnmarshallableIs500: extensions that cannot be marshalled are a
// 500 with an INTERNAL_SERVER_ERROR error, not a truncated body.
func TestWriteUnmarshallableIs500(t *testing.T) {
	var s sink
	write(&s, http.StatusOK, &graphql.Response{Data: []byte(`{}`), Extensions: map[string]any{"x": func() {}}})
	if s.status != http.StatusInternalServerError || !strings.Contains(string(s.body), `"code":"`+errcode.Internal+`"`) {
		t.Fatalf("got %d %s", s.status, s.body)
	}
}

// BenchmarkWrite writes a 100-transaction feed's worth of data with an
// upstream report.
func BenchmarkWrite(b *testing.B) {
	item := `{"node":{"id":"7f1c2a9e-5b7d-4c1e-9a33-2d4b6c8e0f11","type":"BOOKING","status":"SUCCEEDED","amount":"12.50","createDate":"2026-01-02T03:04:05Z","booking":{"resource":{"id":"r1","title":"Meeting room \"Blue\"","capacity":8}}}}`
	data := []byte(`{"location":{"transactions":{"edges":[` + strings.Repeat(item+",", 99) + item + `]}}}`)
	resp := &graphql.Response{Data: data, Extensions: map[string]any{"upstream": []map[string]any{{"route": "GET /transactions", "ms": 1.5}}}}
	s := &sink{body: make([]byte, 0, 2*len(data))}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		s.body = s.body[:0]
		write(s, http.StatusOK, resp)
	}
}
