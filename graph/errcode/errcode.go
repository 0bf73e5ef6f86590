// Package errcode is the facade's error vocabulary: every extensions.code a
// GraphQL error of the facade carries, whoever emits it (graph/gqlerr for
// resolver errors, graph/limits, graph/trusted, the handler's graph/guard
// refusals, and gqlgen itself for parse and validation errors). It imports
// nothing, so every package can use it. docs/errors.md's table is the
// reference, README.md lists the codes in brief; a test keeps both equal to
// these constants. The strings are wire format: clients match on them, so
// they never change.
package errcode

const (
	// Unauthenticated: the request carries no credentials, Basic credentials for a Bearer-only operation, or the upstream answered 401 (to this call, to an earlier call of the request, or to these credentials within the refusal TTL: the rest are not sent).
	Unauthenticated = "UNAUTHENTICATED"
	// Forbidden: the upstream answered 403; extensions.requiredScope names the scope the operation needs, absent when the token is not of the service-network-id's network.
	Forbidden = "FORBIDDEN"
	// NotFound: the upstream answered 404 (unknown id, or a record of another network).
	NotFound = "NOT_FOUND"
	// BadUserInput: the facade's own input validation (extensions.field names the argument or input field), or an upstream 400/422.
	BadUserInput = "BAD_USER_INPUT"
	// Conflict: the upstream answered 409 (a booking over capacity, crediting more than remains).
	Conflict = "CONFLICT"
	// RateLimited: the credentials' rate budget has no slot before the request's deadline, or the upstream answered 429; extensions.retryAfter in seconds.
	RateLimited = "RATE_LIMITED"
	// UpstreamUnavailable: a 5xx, timeout, refused or reset connection, open circuit breaker or unreadable upstream response.
	UpstreamUnavailable = "UPSTREAM_UNAVAILABLE"
	// UpstreamInvalid: the upstream answered, but one value of its answer cannot be read (a timestamp that is not ISO 8601): that field is null, the rest of the data arrives.
	UpstreamInvalid = "UPSTREAM_INVALID"
	// OutcomeUnknown: a write (POST, PUT) was sent but its answer was lost (connection reset, body cut short, timeout): it may or may not have been applied.
	OutcomeUnknown = "OUTCOME_UNKNOWN"
	// QueryTooComplex: the operation exceeds a limit of graph/limits, checked before it runs (a request error: no data, no upstream call).
	QueryTooComplex = "QUERY_TOO_COMPLEX"
	// RequestLimitExceeded: the request reached its cap of upstream calls; the fields that needed more are null, the rest of the data arrives.
	RequestLimitExceeded = "REQUEST_LIMIT_EXCEEDED"
	// CSRFPrevented: HTTP 400 refusal of a GET or POST that a browser could send cross-site without a CORS preflight (no Content-Type, or a simple one) and that carries no preflight-forcing header.
	CSRFPrevented = "CSRF_PREVENTED"
	// BadRequest: HTTP 400 refusal of a request that is not one well-formed GraphQL-over-HTTP request (malformed JSON, a batch, no query, a parameter of the wrong type) or of credential headers that cannot be right (above 4 KiB, a service-network-id that is not a uuid), and the code of gqlgen request errors that carry none.
	BadRequest = "BAD_REQUEST"
	// MethodNotAllowed: HTTP 405 with Allow: a method other than GET and POST (Allow: GET, POST, OPTIONS), or a mutation sent by GET (Allow: POST).
	MethodNotAllowed = "METHOD_NOT_ALLOWED"
	// UnsupportedMediaType: HTTP 415 refusal of a POST whose Content-Type is not application/json (in UTF-8), once CSRF prevention let it through.
	UnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
	// NotAcceptable: HTTP 406 refusal of a request whose Accept header admits neither application/graphql-response+json nor application/json.
	NotAcceptable = "NOT_ACCEPTABLE"
	// RequestTooLarge: HTTP 413 refusal of a body larger than the limit.
	RequestTooLarge = "REQUEST_TOO_LARGE"
	// QueryTooLarge: HTTP 413 refusal of a query text (comments included) longer than -max-query-bytes, by GET or POST, or registered as a persisted query; nothing is parsed or stored.
	QueryTooLarge = "QUERY_TOO_LARGE"
	// PersistedQueryNotFound: a persisted-query hash the server does not know (APQ, or trusted documents).
	PersistedQueryNotFound = "PERSISTED_QUERY_NOT_FOUND"
	// OperationNotTrusted: with trusted documents, a free-form query, or a query that is not the document of its hash.
	OperationNotTrusted = "OPERATION_NOT_TRUSTED"
	// Overloaded: HTTP 503 with Retry-After: the cost of the operations in flight leaves no room for this one's within -admission-wait (-max-cost-in-flight, and -client-cost-share for a client beyond its share); refused before any upstream call.
	Overloaded = "OVERLOADED"
	// ResponseTooLarge: the response data is larger than -max-response-bytes: data is null and this error is the whole answer.
	ResponseTooLarge = "RESPONSE_TOO_LARGE"
	// IntrospectionDisabled: a __schema or __type field on a server with introspection off (-production); the field is null, nothing is logged.
	IntrospectionDisabled = "INTROSPECTION_DISABLED"
	// TooManySubscriptions: a subscription beyond -live-max-per-connection (on one WebSocket), -live-max-per-credential (of one upstream client on this replica) or -live-max-subscriptions (on this replica); extensions.maximum and extensions.limit ("connection", "credential" or "total"). Refused before any upstream call.
	TooManySubscriptions = "TOO_MANY_SUBSCRIPTIONS"
	// TooManyConnections: HTTP 503 refusal of a WebSocket or SSE connection beyond -live-max-connections or -live-max-connections-per-credential on this replica, HTTP 429 beyond -live-max-init-per-address connections of one address not yet proven (a WebSocket refused after its upgrade is closed 1013).
	TooManyConnections = "TOO_MANY_CONNECTIONS"
	// SubscriberTooSlow: the last event of a subscription whose client did not take its events: more than -live-buffer distinct objects were waiting for it (updates of one object are coalesced first).
	SubscriberTooSlow = "SUBSCRIBER_TOO_SLOW"
	// LiveQueryTooLarge: the last update of a live query whose result is larger than -live-query-max-bytes (docs/live-data.md); extensions.maximum. The result before it was sent.
	LiveQueryTooLarge = "LIVE_QUERY_TOO_LARGE"
	// OriginNotAllowed: HTTP 403 refusal of a WebSocket upgrade whose Origin is neither the server's own nor in -cors-origins (cross-site WebSocket hijacking).
	OriginNotAllowed = "ORIGIN_NOT_ALLOWED"
	// RouterSecretRequired: a `_service` or `_entities` field (Federation) from a request without the router's shared secret, where one is required (-production, or ROUTER_SECRET set); the field is null, nothing is sent upstream.
	RouterSecretRequired = "ROUTER_SECRET_REQUIRED"
	// Internal: a bug in the facade or a resolver panic: logged with detail, shown as "internal error".
	Internal = "INTERNAL_SERVER_ERROR"
	// ParseFailed: the document is not valid GraphQL (set by gqlgen, as its errcode.ParseFailed).
	ParseFailed = "GRAPHQL_PARSE_FAILED"
	// ValidationFailed: the document is not valid for the schema (set by gqlgen, as its errcode.ValidationFailed).
	ValidationFailed = "GRAPHQL_VALIDATION_FAILED"
)
