// Package gqlerr turns every error a resolver returns into a GraphQL error
// with extensions.code (one of graph/errcode's codes), and makes sure no
// stack trace, credential or raw upstream body reaches a client.
package gqlerr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/internal/policy/budget"
	"github.com/workspacenet/facade/internal/policy/calls"
	"github.com/workspacenet/facade/restclient"
)

// InputError is a problem with the caller's input found before any upstream
// call. Field names the argument or input field ("input.startDate").
type InputError struct {
	Field   string
	Message string
}

func (e *InputError) Error() string { return e.Field + ": " + e.Message }

// Input returns an *InputError for field.
func Input(field, format string, args ...any) error {
	return &InputError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// ErrNoCredentials is returned for a request that carries no Authorization
// header when the facade has no credentials of its own.
var ErrNoCredentials = errors.New("this request carries no credentials: send an Authorization header (and service-network-id with a Bearer token)")

// Coded is an error that already knows its code (limits, for example).
type Coded struct {
	Code    string
	Message string
	Ext     map[string]any
}

func (e *Coded) Error() string { return e.Message }

// Presenter returns gqlgen's error presenter: every error becomes a
// *gqlerror.Error with extensions.code. Unexpected errors are logged with
// their detail and shown as "internal error".
func Presenter(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		var gqlErr *gqlerror.Error
		if errors.As(err, &gqlErr) && gqlErr.Err == nil {
			// Parser, validation and limit errors built by gqlgen or by us.
			if gqlErr.Path == nil {
				gqlErr.Path = graphql.GetPath(ctx)
			}
			if _, ok := gqlErr.Extensions["code"]; !ok {
				// gqlgen's own request errors without a code (APQ version
				// or hash mismatch, ...): every error carries one.
				if gqlErr.Extensions == nil {
					gqlErr.Extensions = map[string]any{}
				}
				gqlErr.Extensions["code"] = errcode.BadRequest
			}
			return gqlErr
		}
		out := &gqlerror.Error{Path: graphql.GetPath(ctx), Err: err}
		if gqlErr != nil {
			out.Locations = gqlErr.Locations
			if len(gqlErr.Path) > 0 {
				out.Path = gqlErr.Path
			}
		}
		code, msg, ext := classify(err)
		if code == errcode.Internal {
			log.ErrorContext(ctx, "resolver error", "path", out.Path.String(), "err", err)
		}
		out.Message = msg
		out.Extensions = map[string]any{"code": code}
		for k, v := range ext {
			out.Extensions[k] = v
		}
		return out
	}
}

// WithoutSuggestions removes the "Did you mean ...?" the GraphQL validator
// appends to its messages (unknown fields, arguments, enum values, types,
// input fields), which would reveal the schema's names when introspection is
// off. gqlgen's own switch covers the field suggestions only.
func WithoutSuggestions(e *gqlerror.Error) *gqlerror.Error {
	if e == nil {
		return nil
	}
	if i := strings.Index(e.Message, " Did you mean "); i >= 0 {
		e.Message = e.Message[:i]
	}
	return e
}

// Recover turns a resolver panic into an INTERNAL_SERVER_ERROR for that field;
// the panic value and stack are logged, never returned.
func Recover(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "resolver panic", "path", graphql.GetPath(ctx).String(), "panic", fmt.Sprint(p), "stack", stack())
		return &Coded{Code: errcode.Internal, Message: "internal error"}
	}
}

// Code returns the extensions.code err maps to.
func Code(err error) string {
	code, _, _ := classify(err)
	return code
}

func classify(err error) (code, msg string, ext map[string]any) {
	var (
		inErr   *InputError
		coded   *Coded
		resp    *restclient.ErrorResponse
		trErr   *restclient.TransportError
		decErr  *restclient.DecodeError
		limErr  *calls.LimitError
		refErr  *calls.CredentialsRefusedError
		credErr *restclient.RefusedCredentialsError
		bearErr *BearerRequired
		openErr *restclient.CircuitOpenError
		budErr  *budget.Error
		enumErr *restclient.UnknownValueError
	)
	switch {
	case errors.As(err, &inErr):
		return errcode.BadUserInput, inErr.Error(), map[string]any{"field": inErr.Field}
	case errors.As(err, &coded):
		return coded.Code, coded.Message, coded.Ext
	case errors.As(err, &refErr):
		// An earlier call of the request was answered 401: this one was not sent.
		return errcode.Unauthenticated, msgRefused, nil
	case errors.As(err, &credErr):
		// The upstream refused these credentials on another call (a 401
		// remembered for a while, or the answer this call waited for): the
		// code of that answer, this call named, unsent.
		code, msg, _ := classifyResponse(credErr.Refused)
		return code, msg, map[string]any{"upstream": upstream(credErr.Method, credErr.Route, 0)}
	case errors.As(err, &bearErr):
		return errcode.Unauthenticated, "this operation accepts Bearer authentication only: send Authorization: Bearer <token> with service-network-id; not called",
			map[string]any{"upstream": upstream(bearErr.Method, bearErr.Route, 0)}
	case errors.As(err, &limErr):
		return errcode.RequestLimitExceeded, limErr.Error(), map[string]any{"maximum": limErr.Max}
	case errors.As(err, &budErr):
		return errcode.RateLimited, "the upstream allows these credentials no more requests before this request's deadline; not called, retry later",
			map[string]any{"retryAfter": retryAfter(budErr.RetryAfter)}
	case errors.As(err, &openErr):
		msg := "the upstream service is failing on this route; not called, retry later"
		if openErr.Client {
			msg = "the upstream service keeps failing this route for these credentials; not called, retry later"
		}
		return errcode.UpstreamUnavailable, msg, map[string]any{"upstream": upstream(openErr.Method, openErr.Route, 0)}
	case restclient.IsCircuitOpen(err):
		return errcode.UpstreamUnavailable, "the upstream service is failing on this route; not called, retry later", nil
	case errors.Is(err, ErrNoCredentials):
		return errcode.Unauthenticated, ErrNoCredentials.Error(), nil
	case errors.As(err, &resp):
		return classifyResponse(resp)
	case errors.As(err, &enumErr):
		v := shownValue(enumErr.Value)
		return errcode.UpstreamInvalid, fmt.Sprintf("the upstream sent %q, which is not a value of %s", v, enumErr.Enum), map[string]any{"value": v}
	case errors.As(err, &decErr):
		return errcode.UpstreamUnavailable, "the upstream service sent a response that could not be read",
			map[string]any{"upstream": upstream(decErr.Method, decErr.Route, 0)}
	case errors.As(err, &trErr) && trErr.OutcomeUnknown():
		return errcode.OutcomeUnknown, "the request was sent to the upstream service but its answer was lost: it may or may not have been applied; check before repeating it",
			map[string]any{"upstream": upstream(trErr.Method, trErr.Route, 0)}
	case errors.As(err, &trErr):
		msg := "the upstream service could not be reached"
		if trErr.Timeout() {
			msg = "the upstream service did not answer in time"
		}
		return errcode.UpstreamUnavailable, msg, map[string]any{"upstream": upstream(trErr.Method, trErr.Route, 0)}
	case errors.Is(err, context.DeadlineExceeded):
		return errcode.UpstreamUnavailable, "the request ran out of time waiting for the upstream service", nil
	case errors.Is(err, context.Canceled):
		return errcode.UpstreamUnavailable, "the request was cancelled", nil
	}
	return errcode.Internal, "internal error", nil
}

const msgRefused = "the upstream service refused the credentials"

// classifyResponse maps an upstream HTTP error. Upstream messages are passed
// on for client errors (they describe the caller's input or rights) and never
// for server errors.
func classifyResponse(e *restclient.ErrorResponse) (string, string, map[string]any) {
	ext := map[string]any{"upstream": upstream(e.Method, e.Route, e.StatusCode)}
	detail := e.Message
	switch {
	case e.StatusCode == 401:
		return errcode.Unauthenticated, msgRefused, ext
	case e.StatusCode == 403 && restclient.IsNetworkMismatch(e):
		return errcode.Forbidden, "the credentials do not belong to the network named by the service-network-id header", ext
	case e.StatusCode == 403:
		if s := restclient.RequiredScope(e.Method, e.Route); s != "" {
			ext["requiredScope"] = s
		}
		return errcode.Forbidden, "the credentials lack the scope this operation needs" + suffix(detail), ext
	case e.StatusCode == 404:
		return errcode.NotFound, "not found" + suffix(detail), ext
	case e.StatusCode == 409:
		return errcode.Conflict, "conflict" + suffix(detail), ext
	case e.StatusCode == 429:
		if e.RetryAfter > 0 {
			ext["retryAfter"] = retryAfter(e.RetryAfter)
		}
		return errcode.RateLimited, "the upstream service is rate limiting these credentials; retry later", ext
	case e.StatusCode == 400 || e.StatusCode == 422:
		return errcode.BadUserInput, "invalid input" + suffix(detail), ext
	case e.StatusCode >= 500:
		return errcode.UpstreamUnavailable, fmt.Sprintf("the upstream service failed (%d)", e.StatusCode), ext
	}
	return errcode.UpstreamUnavailable, fmt.Sprintf("unexpected upstream status %d", e.StatusCode), ext
}

// BearerRequired refuses, before any upstream call, an operation the API
// accepts with Bearer authentication only when the request's credentials
// are of another scheme.
type BearerRequired struct{ Method, Route string }

func (e *BearerRequired) Error() string {
	return e.Method + " " + e.Route + " accepts Bearer authentication only"
}

// retryAfter renders a wait as whole seconds, rounded up (at least 1).
func retryAfter(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

func suffix(detail string) string {
	if detail == "" {
		return ""
	}
	const max = 300
	if len(detail) > max {
		detail = detail[:max] + "…"
	}
	return ": " + detail
}

func upstream(method, route string, status int) map[string]any {
	m := map[string]any{"method": method, "path": route}
	if status != 0 {
		m["status"] = status
	}
	return m
}

// maxShownValue bounds the bytes of an upstream value an error shows.
const maxShownValue = 64

// shownValue is v, cut to its first maxShownValue bytes at a rune's start.
func shownValue(v string) string {
	if len(v) <= maxShownValue {
		return v
	}
	cut := maxShownValue
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut]
}
