// Package openapi holds the OpenAPI 3.0 document of the local REST service
// (the operations of the Workspace Network Service API plus POST
// /oauth2/token) and serves it. Checking live traffic against it is
// test-only and lives in openapitest, so that the OpenAPI library is not
// linked into programs.
//
// openapi.json is written by hand from ../../shared/spec (the spec wins;
// upstream-facts.md fills its gaps); its tests hold both the service's types
// (restserver/wire) and the client's (restclient) to it. Response objects and request bodies are closed
// (additionalProperties: false; the service refuses unknown fields),
// timestamps are nullable date-time strings, ids are uuids checked by
// pattern, limit is 1..100, and every operation documents its errors with
// the {"message", "type"} body: 400/401/403/429/5XX, 404 where a path names
// a record or a write references one (a list filtered by an unknown id is
// empty), 409 on writes only.
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
