// Package openapitest checks HTTP traffic against the local REST service's
// OpenAPI document (package openapi). It is test support, in the manner of
// net/http/httptest: import it only from _test.go files, so that programs
// do not link the OpenAPI library (kin-openapi) it is built on.
package openapitest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/workspacenet/facade/restserver/hooks"
	"github.com/workspacenet/facade/restserver/openapi"
)

// Load parses and validates the document (openapi.Document).
func Load() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openapi.Document())
	if err != nil {
		return nil, fmt.Errorf("openapitest: load: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("openapitest: invalid document: %w", err)
	}
	return doc, nil
}

// Validator checks requests and responses against the document. It is safe
// for concurrent use.
type Validator struct {
	doc    *openapi3.T
	router routers.Router
}

// NewValidator loads the document and builds its router.
func NewValidator() (*Validator, error) {
	doc, err := Load()
	if err != nil {
		return nil, err
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapitest: router: %w", err)
	}
	return &Validator{doc: doc, router: router}, nil
}

var validationOptions = openapi3filter.Options{
	AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc, // any credentials pass here
	IncludeResponseStatus: true,                                  // undocumented statuses are violations
	MultiError:            true,
	SkipSettingDefaults:   true, // never alter the request the server sees
}

// Wrap returns a handler that serves next and checks each exchange against
// the document, calling report once per violation (report must be safe for
// concurrent use, as t.Errorf is):
//
//   - the response (status, headers, body) must match the operation's
//     documented response for that status;
//   - the request must match the operation (parameters, body) — reported
//     only when next answered 2xx, i.e. when the server accepted a request
//     the document calls invalid, so tests of rejected requests stay quiet.
//
// Requests to undocumented paths or methods (/_stats, /healthz,
// /openapi.json, ...) are passed through unchecked, as are responses carrying
// the hooks.FaultHeader of an injected fault and hijacked connections.
// Responses are buffered: next's writes reach the client when it returns.
func (v *Validator) Wrap(next http.Handler, report func(error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route, pathParams, err := v.router.FindRoute(r)
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		var body []byte
		if r.Body != nil && r.Body != http.NoBody {
			body, err = io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, "openapi validator: reading request body: "+err.Error(), http.StatusBadRequest)
				return
			}
			_ = r.Body.Close()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		// Validate a copy, so neither the body nor defaults leak into next.
		vr := r.Clone(r.Context())
		vr.Body = io.NopCloser(bytes.NewReader(body))
		opts := validationOptions
		reqInput := &openapi3filter.RequestValidationInput{
			Request: vr, PathParams: pathParams, Route: route, Options: &opts,
		}
		reqErr := openapi3filter.ValidateRequest(context.WithoutCancel(r.Context()), reqInput)

		rec := &recorder{w: w, header: http.Header{}}
		next.ServeHTTP(rec, r)
		if rec.hijacked {
			return
		}
		rec.flushTo(w)

		if rec.snapshot.Get(hooks.FaultHeader) != "" {
			return
		}
		where := fmt.Sprintf("%s %s -> %d", r.Method, r.URL.RequestURI(), rec.status)
		if reqErr != nil && rec.status >= 200 && rec.status < 300 {
			for _, e := range flatten(reqErr) {
				report(fmt.Errorf("openapi: %s: request accepted but invalid: %s", where, e))
			}
		}
		respErr := openapi3filter.ValidateResponse(context.WithoutCancel(r.Context()), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: reqInput,
			Status:                 rec.status,
			Header:                 rec.snapshot,
			Body:                   io.NopCloser(bytes.NewReader(rec.body.Bytes())),
			Options:                &opts,
		})
		if respErr != nil {
			for _, e := range flatten(respErr) {
				report(fmt.Errorf("openapi: %s: response: %s (body %.300s)", where, e, rec.body.Bytes()))
			}
		}
	})
}

// flatten turns kin-openapi's nested errors into one short message per
// violation ("at /resource/foo: property \"foo\" is unsupported").
func flatten(err error) []string {
	var out []string
	var walk func(prefix string, err error)
	walk = func(prefix string, err error) {
		switch e := err.(type) {
		case openapi3.MultiError:
			for _, inner := range e {
				walk(prefix, inner)
			}
		case *openapi3filter.RequestError:
			switch {
			case e.Parameter != nil:
				prefix += fmt.Sprintf("%s parameter %q: ", e.Parameter.In, e.Parameter.Name)
			case e.RequestBody != nil:
				prefix += "body: "
			}
			walkWrapped(walk, &out, prefix, e.Reason, e.Err)
		case *openapi3filter.ResponseError:
			walkWrapped(walk, &out, prefix, e.Reason, e.Err)
		case *openapi3.SchemaError:
			out = append(out, fmt.Sprintf("%sat /%s: %s", prefix, strings.Join(e.JSONPointer(), "/"), e.Reason))
		default:
			out = append(out, prefix+err.Error())
		}
	}
	walk("", err)
	return out
}

// walkWrapped reports reason alone when there is no inner error, and
// otherwise descends, keeping reason unless the inner error is a schema
// violation (which says more).
func walkWrapped(walk func(string, error), out *[]string, prefix, reason string, inner error) {
	if inner == nil {
		*out = append(*out, prefix+reason)
		return
	}
	switch inner.(type) {
	case openapi3.MultiError, *openapi3.SchemaError:
	default:
		if reason != "" {
			prefix += reason + ": "
		}
	}
	walk(prefix, inner)
}

// recorder buffers a response so it can be validated; Hijack passes through.
type recorder struct {
	w        http.ResponseWriter
	header   http.Header
	snapshot http.Header // header as of WriteHeader
	status   int
	body     bytes.Buffer
	hijacked bool
}

func (rec *recorder) Header() http.Header { return rec.header }

func (rec *recorder) WriteHeader(code int) {
	if rec.status != 0 || code < 200 {
		return
	}
	rec.status = code
	rec.snapshot = rec.header.Clone()
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.hijacked {
		return 0, http.ErrHijacked
	}
	rec.WriteHeader(http.StatusOK)
	return rec.body.Write(b)
}

// Flush is a no-op: the response is sent when the handler returns.
func (rec *recorder) Flush() {}

func (rec *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(rec.w).Hijack()
	if err == nil {
		rec.hijacked = true
	}
	return c, rw, err
}

// Unwrap lets http.ResponseController reach the real writer's other methods.
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.w }

func (rec *recorder) flushTo(w http.ResponseWriter) {
	rec.WriteHeader(http.StatusOK) // a handler that wrote nothing answers 200
	h := w.Header()
	for k, v := range rec.snapshot {
		h[k] = v
	}
	w.WriteHeader(rec.status)
	_, _ = w.Write(rec.body.Bytes())
}
