package accesslog

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
)

// A request without a usable X-Request-Id gets a new id of 32 hex digits,
// different for every request, echoed in the response and named by its line.
func TestMadeRequestIDs(t *testing.T) {
	var buf bytes.Buffer
	h := Middleware(slog.New(slog.NewJSONHandler(&buf, nil)), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		From(r.Context()).SetOperation("Op")
		w.WriteHeader(http.StatusTeapot)
	}))
	hexID := regexp.MustCompile(`^[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for _, in := range []string{"", "bad id!", ""} {
		req := httptest.NewRequest(http.MethodGet, "/graphql", nil)
		if in != "" {
			req.Header.Set(RequestIDHeader, in)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		id := rec.Header().Get(RequestIDHeader)
		if !hexID.MatchString(id) || seen[id] {
			t.Fatalf("request id %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
		var line map[string]any
		if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
			t.Fatalf("log line %q: %v", buf.String(), err)
		}
		if line["request_id"] != id || line["status"] != float64(http.StatusTeapot) || line["operation"] != "Op" || line["msg"] != Message {
			t.Errorf("log line %v", line)
		}
		buf.Reset()
	}
}

// BenchmarkMiddleware is the access log around an empty handler, its line
// discarded and written as JSON.
func BenchmarkMiddleware(b *testing.B) {
	for name, log := range map[string]*slog.Logger{"discard": slog.New(slog.DiscardHandler), "json": slog.New(slog.NewJSONHandler(io.Discard, nil))} {
		b.Run(name, func(b *testing.B) {
			h := Middleware(log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				w.HeaderMap = http.Header{}
				h.ServeHTTP(w, req)
			}
		})
	}
}
