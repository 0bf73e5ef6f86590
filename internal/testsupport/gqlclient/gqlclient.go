// Package gqlclient is the one GraphQL-over-HTTP client of the tests, the
// benchmark and the soak run: it sends a request (POST, GET, or a raw body)
// and decodes the answer without judging it, so callers can assert on
// statuses and errors as well as data.
package gqlclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client sends GraphQL requests to one endpoint. Safe for concurrent use.
type Client struct {
	URL    string       // the endpoint, e.g. http://127.0.0.1:8080/graphql
	HTTP   *http.Client // nil: http.DefaultClient
	Header http.Header  // sent with every request (credentials); may be nil
}

// Request is a GraphQL request.
type Request struct {
	Query         string         `json:"query,omitempty"`
	OperationName string         `json:"operationName,omitempty"`
	Variables     map[string]any `json:"variables,omitempty"`
	Extensions    map[string]any `json:"extensions,omitempty"`
	// DocumentID names a trusted (persisted) document instead of Query.
	DocumentID string `json:"documentId,omitempty"`
}

// Response is an HTTP answer of the endpoint, decoded when it is JSON.
type Response struct {
	Status     int                        `json:"-"`
	Header     http.Header                `json:"-"`
	Raw        []byte                     `json:"-"`
	Data       json.RawMessage            `json:"data"`
	Errors     []Error                    `json:"errors"`
	Extensions map[string]json.RawMessage `json:"extensions"`
}

// Error is one GraphQL error.
type Error struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Code returns extensions.code.
func (e Error) Code() string { s, _ := e.Extensions["code"].(string); return s }

// PathString renders the path as "a.0.b".
func (e Error) PathString() string {
	parts := make([]string, len(e.Path))
	for i, p := range e.Path {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ".")
}

// Codes returns the errors' codes in order.
func (r *Response) Codes() []string {
	out := make([]string, len(r.Errors))
	for i, e := range r.Errors {
		out[i] = e.Code()
	}
	return out
}

// NotJSONError is returned, with the Response, when the body is not JSON.
type NotJSONError struct {
	Status int
	Body   []byte
}

func (e *NotJSONError) Error() string {
	return fmt.Sprintf("response is not JSON (%d): %.300s", e.Status, e.Body)
}

// Post sends req as a JSON POST with header added to c.Header.
func (c *Client) Post(ctx context.Context, req Request, header http.Header) (*Response, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	return c.PostBody(ctx, "application/json", body, header)
}

// PostBody POSTs body as it is, with the given content type ("" sends none).
func (c *Client) PostBody(ctx context.Context, contentType string, body []byte, header http.Header) (*Response, error) {
	status, h, raw, err := c.PostRaw(ctx, contentType, body, header)
	if err != nil {
		return nil, err
	}
	return Decode(status, h, raw)
}

// PostRaw is PostBody without decoding: the status, header and body of the
// answer, read to its last byte. A caller timing the exchange alone (the
// benchmark) decodes afterwards with Decode.
func (c *Client) PostRaw(ctx context.Context, contentType string, body []byte, header http.Header) (int, http.Header, []byte, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	if contentType != "" {
		hr.Header.Set("Content-Type", contentType)
	}
	return c.exchange(hr, header)
}

// Get sends req as a GET with the query string of the GraphQL-over-HTTP spec.
func (c *Client) Get(ctx context.Context, req Request, header http.Header) (*Response, error) {
	q := url.Values{}
	if req.Query != "" {
		q.Set("query", req.Query)
	}
	if req.OperationName != "" {
		q.Set("operationName", req.OperationName)
	}
	if req.DocumentID != "" {
		q.Set("documentId", req.DocumentID)
	}
	for name, m := range map[string]map[string]any{"variables": req.Variables, "extensions": req.Extensions} {
		if m != nil {
			b, err := json.Marshal(m)
			if err != nil {
				return nil, err
			}
			q.Set(name, string(b))
		}
	}
	u := c.URL
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	return c.send(hr, header)
}

// Do sends an HTTP request the caller built (another method, odd headers)
// with c.Header added, and decodes the answer.
func (c *Client) Do(hr *http.Request) (*Response, error) { return c.send(hr, nil) }

func (c *Client) send(hr *http.Request, header http.Header) (*Response, error) {
	status, h, raw, err := c.exchange(hr, header)
	if err != nil {
		return nil, err
	}
	return Decode(status, h, raw)
}

// exchange sends hr with c.Header and header added and reads the answer.
func (c *Client) exchange(hr *http.Request, header http.Header) (int, http.Header, []byte, error) {
	for _, h := range []http.Header{c.Header, header} {
		for k, vs := range h {
			hr.Header.Del(k)
			for _, v := range vs {
				hr.Header.Add(k, v)
			}
		}
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, raw, nil
}

// Decode decodes an answer the caller already holds (a handler's recorded
// response, when the endpoint is served in-process without HTTP) as the
// client's methods decode theirs: the Response, and a *NotJSONError with it
// when raw is not JSON.
func Decode(status int, header http.Header, raw []byte) (*Response, error) {
	out := &Response{Status: status, Header: header, Raw: raw}
	if err := json.Unmarshal(raw, out); err != nil {
		return out, &NotJSONError{Status: status, Body: raw}
	}
	return out, nil
}

// Credentials returns the request headers of a caller: Authorization and,
// when networkID is set, service-network-id.
func Credentials(authorization, networkID string) http.Header {
	h := http.Header{}
	if authorization != "" {
		h.Set("Authorization", authorization)
	}
	if networkID != "" {
		h.Set("service-network-id", networkID)
	}
	return h
}
