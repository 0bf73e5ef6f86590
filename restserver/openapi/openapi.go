// Package openapi holds the OpenAPI 3.0 document of the local REST service
// (the 18 operations of the Workspace Network Service API plus POST
// /oauth2/token) and serves it. Checking live traffic against it is
// test-only and lives in openapitest, so that the OpenAPI library is not
// linked into programs.
//
// openapi.json is written by hand from ../../shared/spec (the spec wins;
// upstream-facts.md fills its gaps) and uses the JSON names of
// restclient/types.go. Response objects are closed (additionalProperties:
// false), timestamps are nullable date-time strings, ids are uuids checked by
// pattern, and every operation documents 400/401/403/404/409/429/5XX with the
// {"message", "type"} error body.
package openapi

import (
	"bytes"
	_ "embed"
	"io"
	"net/http"
	"strconv"
)

//go:embed openapi.json
var document []byte

// Document returns a copy of the OpenAPI document (JSON).
func Document() []byte { return bytes.Clone(document) }

// Handler serves the document: GET or HEAD answers it as application/json,
// other methods get 405. Mount it at "GET /openapi.json".
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusMethodNotAllowed)
			_, _ = io.WriteString(w, `{"message":"method not allowed","type":"invalid_request"}`+"\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(document)))
		w.Header().Set("Cache-Control", "no-cache")
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(document)
	})
}
