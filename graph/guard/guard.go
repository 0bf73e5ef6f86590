// Package guard holds the checks the facade makes on an HTTP request before
// GraphQL sees it, and its decoding into GraphQL parameters: the method,
// CSRF prevention, the content type, the body size limit, a well-formed
// request (one JSON object, no batch, members of the right types, a query).
// A refused request is answered with a GraphQL-shaped error carrying
// extensions.code and never reaches a resolver, so it costs no upstream
// call.
package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/internal/base/accesslog"
)

// PreflightHeaders are the request headers that prove a browser sent a CORS
// preflight first (a cross-site page cannot set them otherwise): Apollo
// Router's two, and the two other common ones. Their presence counts,
// whatever the value.
var PreflightHeaders = []string{"Apollo-Require-Preflight", "X-Apollo-Operation-Name", "GraphQL-Require-Preflight", "X-Requested-With"}

// preflightKeys are PreflightHeaders in http.Header's canonical form (a
// lookup by another form allocates).
var preflightKeys = func() []string {
	keys := make([]string, len(PreflightHeaders))
	for i, h := range PreflightHeaders {
		keys[i] = http.CanonicalHeaderKey(h)
	}
	return keys
}()

// Allowed is the Allow header of the endpoint: the methods it serves.
const Allowed = "GET, POST, OPTIONS"

// Refusal is a request refused before GraphQL: the HTTP status and the
// GraphQL error's code (graph/errcode) and message; Allow, when set, is sent
// as the Allow header (405).
type Refusal struct {
	Status  int
	Code    string
	Message string
	Allow   string
}

// Answer writes r (Write) and gives its code to the request's access log
// line (entry).
func (r *Refusal) Answer(w http.ResponseWriter, entry *accesslog.Entry, contentType string) {
	entry.AddCodes(r.Code)
	r.Write(w, contentType)
}

// Write answers w with r as {"errors":[{"message","extensions":{"code"}}]}
// (no data entry: nothing was executed), in the response media type the
// request negotiated (contentType, graph/overhttp.ContentType).
func (r *Refusal) Write(w http.ResponseWriter, contentType string) {
	w.Header().Set("Content-Type", contentType)
	if r.Allow != "" {
		w.Header().Set("Allow", r.Allow)
	}
	w.WriteHeader(r.Status)
	_ = json.NewEncoder(w).Encode(struct {
		Errors gqlerror.List `json:"errors"`
	}{gqlerror.List{gqlerr.New(r.Code, r.Message, nil)}})
}

// Method refuses, with 405 and Allow, a method the endpoint does not serve
// (anything but GET and POST; OPTIONS is answered before, by the caller).
func Method(r *http.Request) *Refusal {
	if r.Method == http.MethodGet || r.Method == http.MethodPost {
		return nil
	}
	return &Refusal{Status: http.StatusMethodNotAllowed, Code: errcode.MethodNotAllowed, Allow: Allowed,
		Message: "method " + r.Method + " is not allowed: send GraphQL requests as POST (or queries as GET)"}
}

// simpleContentTypes are the media types a browser sends cross-site without
// a CORS preflight (the Fetch standard's CORS-safelisted Content-Type).
var simpleContentTypes = []string{"application/x-www-form-urlencoded", "multipart/form-data", "text/plain"}

// CSRF refuses a request that a browser could have sent cross-site without a
// CORS preflight, Apollo Router's convention: it passes when it carries one
// of PreflightHeaders, or a Content-Type that parses as a media type other
// than the three simple ones (application/json forces a preflight, so a JSON
// POST, or a GET sent with Content-Type: application/json as Apollo Client
// does, passes). No Content-Type, an unparsable one, or a simple one is
// refused. Call it for GET and POST (Method refuses the rest).
func CSRF(r *http.Request) *Refusal {
	for _, h := range preflightKeys {
		if len(r.Header[h]) > 0 {
			return nil
		}
	}
	if ct := r.Header.Values("Content-Type"); len(ct) > 0 {
		if len(ct) == 1 && isJSON(ct[0]) {
			return nil // the usual case, without parsing: not a simple type
		}
		if mt, _, err := mime.ParseMediaType(strings.Join(ct, ", ")); err == nil && !slices.Contains(simpleContentTypes, mt) {
			return nil
		}
	}
	return &Refusal{
		Status: http.StatusBadRequest,
		Code:   errcode.CSRFPrevented,
		Message: "this request could have been sent by a browser without a CORS preflight, so it is refused (CSRF prevention): " +
			"send Content-Type: application/json, or add the header Apollo-Require-Preflight: true (or X-Apollo-Operation-Name, GraphQL-Require-Preflight)",
	}
}

// ContentType refuses, with 415, a POST whose body is not JSON in UTF-8:
// a Content-Type other than application/json, or a charset other than
// utf-8.
func ContentType(r *http.Request) *Refusal {
	ct := r.Header.Get("Content-Type")
	if isJSON(ct) {
		return nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err == nil && mt == "application/json" {
		if cs, ok := params["charset"]; !ok || strings.EqualFold(cs, "utf-8") {
			return nil
		}
	}
	return &Refusal{Status: http.StatusUnsupportedMediaType, Code: errcode.UnsupportedMediaType,
		Message: "a GraphQL POST must have Content-Type: application/json (UTF-8)"}
}

// isJSON reports whether a Content-Type is one of the usual spellings of JSON
// in UTF-8 ("application/json", with "; charset=utf-8" or not, any case),
// which need no media type parsing; mime.ParseMediaType decides the rest.
func isJSON(ct string) bool {
	const json, charset = "application/json", "charset=utf-8"
	if len(ct) < len(json) || !strings.EqualFold(ct[:len(json)], json) {
		return false
	}
	rest := ct[len(json):]
	if rest == "" {
		return true
	}
	if rest[0] != ';' {
		return false
	}
	rest = strings.TrimLeft(rest[1:], " ")
	return strings.EqualFold(rest, charset)
}

// ReadBody reads r's body up to max bytes (0: no limit) and returns it; a
// larger body is a 413 REQUEST_TOO_LARGE, an unreadable one a 400
// BAD_REQUEST.
func ReadBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, *Refusal) {
	if max <= 0 {
		body, err := readAll(r.Body, r.ContentLength)
		if err != nil {
			return nil, &Refusal{Status: http.StatusBadRequest, Code: errcode.BadRequest, Message: "the request body could not be read"}
		}
		return body, nil
	}
	tooLarge := func() *Refusal {
		return &Refusal{Status: http.StatusRequestEntityTooLarge, Code: errcode.RequestTooLarge,
			Message: fmt.Sprintf("the request body is larger than the limit of %d bytes", max)}
	}
	if r.ContentLength > max {
		return nil, tooLarge()
	}
	body, err := readAll(http.MaxBytesReader(w, r.Body, max), r.ContentLength)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, tooLarge()
		}
		return nil, &Refusal{Status: http.StatusBadRequest, Code: errcode.BadRequest, Message: "the request body could not be read"}
	}
	return body, nil
}

// QueryTooLarge is the 413 QUERY_TOO_LARGE refusal of a query text of n
// bytes, longer than max: refused before it is parsed or stored.
func QueryTooLarge(n, max int) *Refusal {
	return &Refusal{Status: http.StatusRequestEntityTooLarge, Code: errcode.QueryTooLarge,
		Message: fmt.Sprintf("the query is %d bytes, longer than the limit of %d bytes (comments included)", n, max)}
}

// readAll is io.ReadAll starting with room for size bytes (the
// Content-Length; -1 when unknown) and one more, so a body of the announced
// length is read into one buffer, without growing it.
func readAll(r io.Reader, size int64) ([]byte, error) {
	if size < 0 || size > 64<<10 {
		size = 511 // io.ReadAll's start; a larger body grows the buffer as it comes
	}
	b := make([]byte, 0, size+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow
		}
	}
}

// Params are the parameters of one GraphQL-over-HTTP request, decoded:
// gqlgen's RawParams (variables and extensions with json.Number numbers, as
// gqlgen's own decoding), and the documentId of a trusted document sent
// outside extensions.
type Params struct {
	graphql.RawParams
	DocumentID string
}

// badRequest is a 400 BAD_REQUEST refusal.
func badRequest(msg string) *Refusal {
	return &Refusal{Status: http.StatusBadRequest, Code: errcode.BadRequest, Message: msg}
}

// DecodeBody decodes a POST body that must be one JSON request object
// {"query", "operationName", "variables", "extensions", "documentId"}. It
// refuses (400) malformed JSON, a batch (an array of requests, which the
// facade does not serve), a member of the wrong type, and a request with no
// query (and no persisted-query hash or documentId naming one). The refusal
// never echoes the body.
func DecodeBody(body []byte) (*Params, *Refusal) {
	t := bytes.TrimLeft(body, " \t\r\n")
	if len(t) > 0 && t[0] == '[' {
		return nil, badRequest("batched requests (a JSON array) are not supported: send one operation per request")
	}
	// One pass over the body, without copying it: each member decoded as
	// whatever JSON value it holds (variables and extensions kept raw, then
	// decoded with numbers as json.Number, as gqlgen decodes them), then its
	// type checked in the order of the members.
	notObject := func() *Refusal {
		return badRequest("the request body is not a JSON object {\"query\", \"variables\", \"operationName\", \"extensions\"}")
	}
	if len(t) == 0 || t[0] != '{' {
		return nil, notObject()
	}
	var raw rawBody
	if json.Unmarshal(t, &raw) != nil {
		return nil, notObject()
	}
	p := &Params{}
	for _, m := range []struct {
		name string
		v    any
		dst  *string
	}{{"query", raw.Query, &p.Query}, {"operationName", raw.OperationName, &p.OperationName}, {"documentId", raw.DocumentID, &p.DocumentID}} {
		if m.v == nil {
			continue
		}
		v, ok := m.v.(string)
		if !ok {
			return nil, badRequest("the request member \"" + m.name + "\" must be a string")
		}
		*m.dst = v
	}
	for _, m := range []struct {
		name string
		raw  json.RawMessage
		dst  *map[string]any
	}{{"variables", raw.Variables, &p.Variables}, {"extensions", raw.Extensions, &p.Extensions}} {
		if ref := decodeMember("request member", m.name, m.raw, m.dst); ref != nil {
			return nil, ref
		}
	}
	return p, p.check()
}

// rawBody is a request object with each member as whatever JSON value it
// holds.
type rawBody struct {
	Query, OperationName, DocumentID any
	Variables, Extensions            json.RawMessage
}

// DecodeQuery decodes the parameters of a GET from its query string: query,
// operationName and documentId as they are, variables and extensions as
// JSON objects. It refuses (400) what DecodeBody refuses.
func DecodeQuery(r *http.Request) (*Params, *Refusal) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("the query string could not be decoded")
	}
	p := &Params{RawParams: graphql.RawParams{Query: q.Get("query"), OperationName: q.Get("operationName")}, DocumentID: q.Get("documentId")}
	for _, m := range []struct {
		name string
		dst  any
	}{{"variables", &p.Variables}, {"extensions", &p.Extensions}} {
		if v := q.Get(m.name); v != "" {
			if ref := decodeMember("query parameter", m.name, json.RawMessage(v), m.dst); ref != nil {
				return nil, ref
			}
		}
	}
	return p, p.check()
}

// decodeMember decodes raw into dst, a *map[string]any; null leaves dst
// unset. Any other JSON type is a 400 naming the member.
func decodeMember(what, name string, raw json.RawMessage, dst any) *Refusal {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var err error
	switch d := dst.(type) {
	case *map[string]any:
		if raw[0] != '{' {
			return badRequest("the " + what + " \"" + name + "\" must be a JSON object")
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err = dec.Decode(d); err == nil && dec.Decode(&struct{}{}) != io.EOF {
			err = errors.New("trailing data")
		}
	}
	if err != nil {
		return badRequest("the " + what + " \"" + name + "\" could not be decoded")
	}
	return nil
}

// check refuses a request that names no operation document: no query, no
// documentId and no persisted-query hash.
func (p *Params) check() *Refusal {
	if p.Query == "" && p.DocumentID == "" && p.Extensions["persistedQuery"] == nil {
		return badRequest("the request has no query: send the GraphQL document as \"query\"")
	}
	return nil
}
