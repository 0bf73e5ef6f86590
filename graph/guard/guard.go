// Package guard holds the checks the facade makes on an HTTP request before
// GraphQL sees it: CSRF prevention, the body size limit, refusal of batched
// (array) bodies. A refused request is answered with a
// GraphQL-shaped JSON error and never reaches a resolver, so it costs no
// upstream call.
package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/workspacenet/facade/graph/errcode"
)

// PreflightHeaders are the request headers that prove a browser sent a CORS
// preflight first (a cross-site page cannot set them otherwise). Any
// non-empty value counts.
var PreflightHeaders = []string{"X-Requested-With", "GraphQL-Require-Preflight", "Apollo-Require-Preflight"}

// Refusal is a request refused before GraphQL: the HTTP status and the
// GraphQL error's code (graph/errcode) and message.
type Refusal struct {
	Status  int
	Code    string
	Message string
}

// Write answers w with r as {"errors":[{"message","extensions":{"code"}}]}.
func (r *Refusal) Write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(r.Status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"errors": []any{map[string]any{"message": r.Message, "extensions": map[string]any{"code": r.Code}}},
	})
}

// CSRF refuses a request that a browser could send cross-site without a CORS
// preflight: a GET, or a POST whose content type is not application/json
// (text/plain, multipart/form-data, application/x-www-form-urlencoded, or
// none), unless it carries one of PreflightHeaders. Other methods pass (they
// are preflighted, or answered by the transport).
func CSRF(r *http.Request) *Refusal {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPost:
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && mt == "application/json" {
			return nil
		}
	default:
		return nil
	}
	for _, h := range PreflightHeaders {
		if r.Header.Get(h) != "" {
			return nil
		}
	}
	return &Refusal{
		Status: http.StatusBadRequest,
		Code:   errcode.CSRFPrevented,
		Message: "this request could have been sent by a browser without a CORS preflight, so it is refused (CSRF prevention): " +
			"send a JSON POST (Content-Type: application/json), or add the header GraphQL-Require-Preflight: 1",
	}
}

// ReadBody reads r's body up to max bytes (0: no limit) and returns it; a
// larger body is a 413 REQUEST_TOO_LARGE, an unreadable one a 400
// BAD_REQUEST.
func ReadBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, *Refusal) {
	if max <= 0 {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, &Refusal{Status: http.StatusBadRequest, Code: errcode.BadRequest, Message: "the request body could not be read"}
		}
		return body, nil
	}
	tooLarge := &Refusal{Status: http.StatusRequestEntityTooLarge, Code: errcode.RequestTooLarge,
		Message: fmt.Sprintf("the request body is larger than the limit of %d bytes", max)}
	if r.ContentLength > max {
		return nil, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, tooLarge
		}
		return nil, &Refusal{Status: http.StatusBadRequest, Code: errcode.BadRequest, Message: "the request body could not be read"}
	}
	return body, nil
}

// CheckJSONBody refuses a JSON body that is not one GraphQL request object:
// malformed JSON, or a batch (an array of requests), which the facade does
// not serve. The refusal never echoes the body.
func CheckJSONBody(body []byte) (documentID string, ref *Refusal) {
	t := bytes.TrimLeft(body, " \t\r\n")
	if len(t) > 0 && t[0] == '[' {
		return "", &Refusal{Status: http.StatusBadRequest, Code: errcode.BadRequest,
			Message: "batched requests (a JSON array) are not supported: send one operation per request"}
	}
	// Members of the wrong type would reach gqlgen's decoder, whose error
	// has no code and echoes the body. One Unmarshal both validates the
	// JSON and reads the members.
	var p struct {
		Query, OperationName, DocumentID json.RawMessage
		Variables, Extensions            json.RawMessage
	}
	if len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &p) != nil {
		return "", &Refusal{Status: http.StatusBadRequest, Code: errcode.BadRequest,
			Message: "the request body is not a JSON object {\"query\", \"variables\", \"operationName\", \"extensions\"}"}
	}
	for _, m := range []struct {
		name string
		raw  json.RawMessage
		kind byte
	}{{"query", p.Query, '"'}, {"operationName", p.OperationName, '"'}, {"documentId", p.DocumentID, '"'}, {"variables", p.Variables, '{'}, {"extensions", p.Extensions, '{'}} {
		if len(m.raw) > 0 && m.raw[0] != m.kind && string(m.raw) != "null" {
			what := "a string"
			if m.kind == '{' {
				what = "an object"
			}
			return "", &Refusal{Status: http.StatusBadRequest, Code: errcode.BadRequest, Message: "the request member \"" + m.name + "\" must be " + what}
		}
	}
	if len(p.DocumentID) > 0 && p.DocumentID[0] == '"' {
		_ = json.Unmarshal(p.DocumentID, &documentID) // a valid JSON string: cannot fail
	}
	return documentID, nil
}
