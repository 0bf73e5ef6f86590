// Package httpx is the response writer wrapper the HTTP middlewares share
// (the access log, the REST service's metrics).
package httpx

import "net/http"

// StatusWriter remembers the first status written: Code is 0 while none
// was (a handler that wrote nothing, which net/http answers 200, or a
// hijacked connection).
type StatusWriter struct {
	http.ResponseWriter
	Code int
}

// WriteHeader implements http.ResponseWriter.
func (w *StatusWriter) WriteHeader(code int) {
	if w.Code == 0 {
		w.Code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.Code == 0 {
		w.Code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer (Flush,
// Hijack, deadlines).
func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
