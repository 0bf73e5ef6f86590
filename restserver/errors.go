package restserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
)

// errKind is the error vocabulary of the service. Each kind maps to one HTTP
// status and is the "type" of the error body.
type errKind string

const (
	kindInvalid      errKind = "invalid_request"
	kindUnauthorized errKind = "unauthorized"
	kindForbidden    errKind = "forbidden"
	kindNotFound     errKind = "not_found"
	kindConflict     errKind = "conflict"
	kindMethod       errKind = "method_not_allowed"
	kindRateLimited  errKind = "rate_limited"
	kindInternal     errKind = "internal"
)

// statusOf is the one table from error kind to HTTP status.
var statusOf = map[errKind]int{
	kindInvalid:      http.StatusBadRequest,
	kindUnauthorized: http.StatusUnauthorized,
	kindForbidden:    http.StatusForbidden,
	kindNotFound:     http.StatusNotFound,
	kindConflict:     http.StatusConflict,
	kindMethod:       http.StatusMethodNotAllowed,
	kindRateLimited:  http.StatusTooManyRequests,
	kindInternal:     http.StatusInternalServerError,
}

// apiError is an error meant for the client: its message is safe to show.
type apiError struct {
	Kind    errKind
	Message string
}

func (e *apiError) Error() string { return string(e.Kind) + ": " + e.Message }

func invalidf(format string, args ...any) error {
	return &apiError{kindInvalid, fmt.Sprintf(format, args...)}
}

func notFoundf(format string, args ...any) error {
	return &apiError{kindNotFound, fmt.Sprintf(format, args...)}
}

func conflictf(format string, args ...any) error {
	return &apiError{kindConflict, fmt.Sprintf(format, args...)}
}

func unauthorizedf(format string, args ...any) error {
	return &apiError{kindUnauthorized, fmt.Sprintf(format, args...)}
}

func forbiddenf(format string, args ...any) error {
	return &apiError{kindForbidden, fmt.Sprintf(format, args...)}
}

// notFound maps errNotFound (from the store) to a 404 with msg and passes
// other errors on.
func notFound(err error, msg string) error {
	if errors.Is(err, errNotFound) {
		return notFoundf("%s", msg)
	}
	return err
}

// errorBody is the body of every error response.
type errorBody struct {
	Message string `json:"message"`
	Type    string `json:"type"`
}

// writeError writes err as {"message","type"} with the status of its kind.
// An error that is not an *apiError is logged and shown as "internal error".
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		ae = &apiError{kindInternal, "internal error"}
	}
	if ae.Kind == kindUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="workspace-network", Bearer`)
	}
	writeJSON(w, statusOf[ae.Kind], errorBody{Message: ae.Message, Type: string(ae.Kind)})
}
