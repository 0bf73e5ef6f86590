package restclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestErrorMapping(t *testing.T) {
	type pred struct {
		name string
		f    func(error) bool
	}
	preds := []pred{
		{"IsBadRequest", IsBadRequest}, {"IsUnauthorized", IsUnauthorized}, {"IsForbidden", IsForbidden},
		{"IsNotFound", IsNotFound}, {"IsConflict", IsConflict}, {"IsServerError", IsServerError},
		{"IsRateLimited", func(err error) bool { _, ok := IsRateLimited(err); return ok }},
		{"IsTransport", IsTransport},
	}
	cases := []struct {
		status int
		typ    string
		holds  string // the one predicate that must hold
	}{
		{400, "invalid_request", "IsBadRequest"},
		{401, "unauthorized", "IsUnauthorized"},
		{403, "forbidden", "IsForbidden"},
		{404, "not_found", "IsNotFound"},
		{409, "conflict", "IsConflict"},
		{429, "rate_limited", "IsRateLimited"},
		{500, "internal", "IsServerError"},
		{503, "unavailable", "IsServerError"},
		{422, "unprocessable", ""},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			u := newUpstream(t)
			u.handle(OpCreateCreditNote.Pattern(), func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				fmt.Fprintf(w, `{"message":"it failed\nbadly","type":%q}`, tc.typ)
			})
			_, resp, err := u.client().Billing.CreateCreditNote(ctxT(t), &CreditNoteCreateRequest{})
			if resp == nil || resp.StatusCode != tc.status {
				t.Fatalf("resp %v", resp)
			}
			for _, p := range preds {
				if got, want := p.f(err), p.name == tc.holds; got != want {
					t.Errorf("%s = %v", p.name, got)
				}
			}
			var e *ErrorResponse
			if !errors.As(err, &e) {
				t.Fatalf("%T", err)
			}
			want := &ErrorResponse{StatusCode: tc.status, Method: "POST", Route: OpListCreditNotes.Route,
				Path: OpListCreditNotes.Route, Message: "it failed badly", Type: tc.typ}
			if *e != *want {
				t.Errorf("got %+v\nwant %+v", e, want)
			}
			if s := err.Error(); s != fmt.Sprintf("POST /billing/credit_notes/v1: %d %s: it failed badly", tc.status, tc.typ) {
				t.Errorf("Error() = %q", s)
			}
			if StatusCode(err) != tc.status || StatusCode(fmt.Errorf("wrapped: %w", err)) != tc.status {
				t.Error("StatusCode through wrapping")
			}
		})
	}
}

func TestErrorBodies(t *testing.T) {
	cases := map[string]struct {
		body, wantMsg, wantErr string
	}{
		"html":         {"<html>Internal details: db at 10.0.0.1</html>", "", "GET /events/v1/{id}: 404: not found"},
		"no type":      {`{"message":"gone"}`, "gone", "GET /events/v1/{id}: 404: gone"},
		"non-string":   {`{"message":{"a":1},"type":7}`, "", "GET /events/v1/{id}: 404: not found"},
		"huge":         {`{"message":"` + strings.Repeat("x", 2*maxErrorBody) + `"}`, "", "GET /events/v1/{id}: 404: not found"},
		"long message": {`{"message":"` + strings.Repeat("é", 1000) + `","type":"t"}`, strings.Repeat("é", 256) + "…", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := newUpstream(t)
			u.handle(OpGetEvent.Pattern(), func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(404)
				io.WriteString(w, tc.body)
			})
			_, _, err := u.client().Events.GetEvent(ctxT(t), "e?x=1")
			e, ok := asErrorResponse(err)
			if !ok {
				t.Fatalf("%T %v", err, err)
			}
			if e.Message != tc.wantMsg {
				t.Errorf("Message = %.60q…", e.Message)
			}
			if tc.wantErr != "" && err.Error() != tc.wantErr {
				t.Errorf("Error() = %q", err.Error())
			}
			if e.Path != "/events/v1/e%3Fx=1" || strings.Contains(err.Error(), "x=1") {
				t.Errorf("Path %q, Error %q", e.Path, err)
			}
		})
	}
}

func TestCheckResponse(t *testing.T) {
	req, _ := http.NewRequest("GET", "http://h/api/resources/v1/r1?q=secret", nil)
	if err := CheckResponse("GET", OpGetResource.Route, &http.Response{StatusCode: 204, Request: req}); err != nil {
		t.Errorf("2xx: %v", err)
	}
	err := CheckResponse("GET", OpGetResource.Route, &http.Response{
		StatusCode: 429, Request: req, Header: http.Header{"Retry-After": {"2"}},
		Body: io.NopCloser(strings.NewReader(`{"message":"slow down","type":"rate_limited"}`)),
	})
	d, ok := IsRateLimited(err)
	if !ok || d != 2*time.Second {
		t.Errorf("IsRateLimited = %v %v", d, ok)
	}
	e, _ := asErrorResponse(err)
	if e.Path != "/api/resources/v1/r1" || err.Error() != "GET /resources/v1/{id}: 429 rate_limited: slow down" {
		t.Errorf("%+v %q", e, err)
	}
	if err := CheckResponse("GET", "/x", &http.Response{StatusCode: 500}); StatusCode(err) != 500 {
		t.Errorf("no body, no request: %v", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              0,
		"  7 ":                          7 * time.Second,
		"0":                             0,
		"-3":                            0,
		"soon":                          0,
		"99999999999999":                maxRetryAfter,
		"99999999999999999999":          maxRetryAfter,
		"-99999999999999999999":         0,
		"Fri, 31 Dec 9999 23:59:59 GMT": maxRetryAfter,
		"Mon, 01 Jan 2024 12:00:30 GMT": 30 * time.Second,
		"Mon, 01 Jan 2024 11:00:00 GMT": 0,
		"Tue, 09 Jan 2024 12:00:00 GMT": maxRetryAfter,
	} {
		if got := ParseRetryAfter(in, now); got != want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestTransportErrorText(t *testing.T) {
	inner := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	err := newTransportError("GET", OpListOrders.Route, &url.Error{Op: "Get", URL: "http://h/api/shop/orders/v1?locationRef=secret", Err: inner})
	if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "http://") {
		t.Errorf("Error() = %q", err)
	}
	if !errors.Is(err, inner) || !err.retryable() || err.Timeout() {
		t.Error("cause lost")
	}
	te := newTransportError("GET", "/x", context.DeadlineExceeded)
	if !te.Timeout() || te.retryable() {
		t.Error("deadline is a non-retryable timeout")
	}
	if newTransportError("GET", "/x", errors.New("tls: bad certificate")).retryable() {
		t.Error("certificate errors are not retried")
	}
	if !newTransportError("GET", "/x", io.ErrUnexpectedEOF).retryable() {
		t.Error("unexpected EOF is retried")
	}
}

// Every call's After hooks ask StatusCode (or IsUnauthorized, ...) of its
// error, nil on success: that must not allocate.
func TestStatusCodeOfSuccessAllocatesNothing(t *testing.T) {
	wrapped := fmt.Errorf("wrapped: %w", &ErrorResponse{StatusCode: http.StatusNotFound})
	if got := StatusCode(wrapped); got != http.StatusNotFound {
		t.Fatalf("StatusCode(wrapped 404) = %d", got)
	}
	if n := testing.AllocsPerRun(100, func() {
		if StatusCode(nil) != 0 || IsUnauthorized(nil) {
			t.Fatal("a nil error has a status")
		}
	}); n != 0 {
		t.Errorf("StatusCode(nil) and IsUnauthorized(nil) allocate %v times", n)
	}
}
