package restclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// maxErrorBody caps how much of an error response body is read.
const maxErrorBody = 64 << 10

// maxErrorText caps the length of the upstream message and type kept in an
// ErrorResponse.
const maxErrorText = 512

// ErrorResponse is a non-2xx answer of the upstream. Its text names the call
// by method and route template and carries the upstream {message, type};
// it never holds the raw body, the query string or credentials.
type ErrorResponse struct {
	StatusCode int
	Method     string
	Route      string        // path template, e.g. /resources/v1/{id}
	Path       string        // concrete path without query (relative to the base URL for Client calls)
	Message    string        // upstream "message" ("" when the body was not the documented shape)
	Type       string        // upstream "type"
	RetryAfter time.Duration // parsed Retry-After (seconds or HTTP date; a Client's capped by WithMaxRetryAfter), 0 if absent
}

// Error formats e as "GET /resources/v1/{id}: 404 not_found: resource not found".
func (e *ErrorResponse) Error() string {
	var b strings.Builder
	b.WriteString(e.Method)
	b.WriteByte(' ')
	b.WriteString(e.Route)
	b.WriteString(": ")
	b.WriteString(strconv.Itoa(e.StatusCode))
	if e.Type != "" {
		b.WriteByte(' ')
		b.WriteString(e.Type)
	}
	msg := e.Message
	if msg == "" {
		msg = strings.ToLower(http.StatusText(e.StatusCode))
	}
	if msg != "" {
		b.WriteString(": ")
		b.WriteString(msg)
	}
	return b.String()
}

// CheckResponse is the one gate for upstream answers: nil for a 2xx, else an
// *ErrorResponse built from the status, the Retry-After header and the
// {message, type} body, which is read through a 64 KiB cap. It does not close
// the body.
func CheckResponse(method, route string, r *http.Response) error {
	path := ""
	if r.Request != nil && r.Request.URL != nil {
		path = r.Request.URL.Path
	}
	return checkResponse(method, route, path, r)
}

func checkResponse(method, route, path string, r *http.Response) error {
	if r.StatusCode >= 200 && r.StatusCode <= 299 {
		return nil
	}
	e := &ErrorResponse{
		StatusCode: r.StatusCode,
		Method:     method,
		Route:      route,
		Path:       path,
		RetryAfter: ParseRetryAfter(r.Header.Get("Retry-After"), time.Now()),
	}
	if r.Body != nil {
		data, _ := io.ReadAll(io.LimitReader(r.Body, maxErrorBody))
		var body struct {
			Message any `json:"message"`
			Type    any `json:"type"`
		}
		if json.Unmarshal(data, &body) == nil {
			e.Message = cleanText(body.Message)
			e.Type = cleanText(body.Type)
		}
	}
	return e
}

// cleanText keeps a string value of the error body, without control
// characters and at most maxErrorText bytes long; other JSON values are dropped.
func cleanText(v any) string {
	s, ok := v.(string)
	if !ok {
		return ""
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) > maxErrorText {
		cut := maxErrorText
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// maxRetryAfter bounds a parsed Retry-After so arithmetic cannot overflow;
// a Client caps what it acts on far lower (WithMaxRetryAfter).
const maxRetryAfter = 24 * time.Hour

// ParseRetryAfter reads a Retry-After value: delay-seconds or an HTTP date,
// at most 24 hours (delay-seconds too large for an int64 included). It
// returns 0 when the value is empty, malformed, negative or in the past.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if secs <= 0 {
			return 0
		}
		if secs > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d <= 0 {
			return 0
		}
		return min(d, maxRetryAfter)
	}
	return 0
}

// redact replaces every secret in e's upstream text (an upstream that echoes
// a header must not leak it through our errors).
func (e *ErrorResponse) redact(secrets []string) {
	for _, s := range secrets {
		e.Message = strings.ReplaceAll(e.Message, s, redacted)
		e.Type = strings.ReplaceAll(e.Type, s, redacted)
	}
}

// redactedError hides secrets in the text of the error it wraps.
type redactedError struct {
	err     error
	secrets []string
}

func (e *redactedError) Error() string {
	s := e.err.Error()
	for _, sec := range e.secrets {
		s = strings.ReplaceAll(s, sec, redacted)
	}
	return s
}

func (e *redactedError) Unwrap() error { return e.err }

// redactErr wraps err so its text never shows one of secrets.
func redactErr(err error, secrets []string) error {
	if len(secrets) == 0 {
		return err
	}
	return &redactedError{err: err, secrets: secrets}
}

// TransportError is a failure to get an HTTP answer at all: timeout, refused
// or reset connection, a body cut short. A cancelled or expired caller
// context is not a TransportError: calls then return ctx.Err().
type TransportError struct {
	Method, Route string
	Err           error
	// Sent: the whole request was written before the failure, so the
	// upstream may have received it and acted on it. Tracked for writes
	// only (anything but GET and HEAD); always false for reads.
	Sent bool
	// Answered: the status line and headers arrived; the body was cut short.
	Answered bool
}

// OutcomeUnknown reports whether e ended a write (anything but GET and HEAD)
// that was sent: the upstream may or may not have applied it, and repeating
// it blindly may apply it twice.
func (e *TransportError) OutcomeUnknown() bool {
	return e.Sent && e.Method != http.MethodGet && e.Method != http.MethodHead
}

// Error names the call and the cause, never the URL or its query.
func (e *TransportError) Error() string {
	return e.Method + " " + e.Route + ": transport error: " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *TransportError) Unwrap() error { return e.Err }

// Timeout reports whether the attempt timed out.
func (e *TransportError) Timeout() bool {
	if errors.Is(e.Err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout()
}

// retryable reports whether the failure is a connection error that an
// idempotent request may retry: refused, reset, closed early. Timeouts are
// not retried (the attempt already used its budget).
func (e *TransportError) retryable() bool {
	if e.Timeout() {
		return false
	}
	if errors.Is(e.Err, syscall.ECONNREFUSED) || errors.Is(e.Err, syscall.ECONNRESET) ||
		errors.Is(e.Err, syscall.EPIPE) || errors.Is(e.Err, io.EOF) || errors.Is(e.Err, io.ErrUnexpectedEOF) {
		return true
	}
	var op *net.OpError
	return errors.As(e.Err, &op) && (op.Op == "dial" || op.Op == "read" || op.Op == "write")
}

// newTransportError wraps err, dropping *url.Error's URL from the text (the
// URL may carry a query).
func newTransportError(method, route string, err error) *TransportError {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		err = ue.Err
	}
	return &TransportError{Method: method, Route: route, Err: err}
}

// DecodeError is a 2xx answer whose body is not the JSON the operation
// returns (malformed, wrong types, missing the wrapping object, too large).
type DecodeError struct {
	Method, Route string
	Err           error
}

// Error names the call and the decoding failure.
func (e *DecodeError) Error() string {
	return e.Method + " " + e.Route + ": decoding response: " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// asErrorResponse finds an *ErrorResponse in err's chain (errors.AsType:
// no allocation, which errors.As's escaping target costs on every call).
func asErrorResponse(err error) (*ErrorResponse, bool) {
	return errors.AsType[*ErrorResponse](err)
}

// StatusCode returns the HTTP status of an *ErrorResponse in err's chain, or 0.
func StatusCode(err error) int {
	if e, ok := asErrorResponse(err); ok {
		return e.StatusCode
	}
	return 0
}

// IsNotFound reports whether err is a 404 answer.
func IsNotFound(err error) bool { return StatusCode(err) == http.StatusNotFound }

// IsUnauthorized reports whether err is a 401 answer.
func IsUnauthorized(err error) bool { return StatusCode(err) == http.StatusUnauthorized }

// IsForbidden reports whether err is a 403 answer.
func IsForbidden(err error) bool { return StatusCode(err) == http.StatusForbidden }

// IsBadRequest reports whether err is a 400 answer.
func IsBadRequest(err error) bool { return StatusCode(err) == http.StatusBadRequest }

// IsConflict reports whether err is a 409 answer.
func IsConflict(err error) bool { return StatusCode(err) == http.StatusConflict }

// IsServerError reports whether err is a 5xx answer.
func IsServerError(err error) bool { return StatusCode(err) >= 500 && StatusCode(err) <= 599 }

// IsRateLimited reports whether err is a 429 answer and returns the delay the
// upstream asked for (0 when it sent no Retry-After).
func IsRateLimited(err error) (retryAfter time.Duration, ok bool) {
	e, ok := asErrorResponse(err)
	if !ok || e.StatusCode != http.StatusTooManyRequests {
		return 0, false
	}
	return e.RetryAfter, true
}

// IsTransport reports whether err is a *TransportError (no HTTP answer).
func IsTransport(err error) bool {
	var e *TransportError
	return errors.As(err, &e)
}
