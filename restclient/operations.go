package restclient

import (
	"net/http"
	"slices"
	"time"
)

// Operation is one operation of the Workspace Network Service API and the
// authentication it requires (spec, Authentication; upstream-facts.md,
// "Scopes the spec does not show").
type Operation struct {
	// Method is the HTTP method, e.g. "GET".
	Method string
	// Route is the path template exactly as this client's calls name it in
	// errors and breakers, e.g. "/resources/v1/{id}".
	Route string
	// Scope is the scope family, e.g. "invoices".
	Scope string
	// ReadOnlyOK reports whether the family's ".readonly" twin also
	// suffices (reads); when false only Scope itself does.
	ReadOnlyOK bool
	// BearerOnly: Basic authentication is refused.
	BearerOnly bool
	// RequireNetwork: the service-network-id header is required even with
	// Basic authentication.
	RequireNetwork bool

	// The response cache, GETs only (every GET has a family). CacheFamily
	// names the route in a TTL spec (internal/cache.ParseTTLs; one family
	// may hold several routes), CacheTTL is the family's default TTL (0: not
	// cached unless configured), and CacheTags are the list filters whose
	// values tag the route's entries beside its path parameter, so that a
	// write can make them stale.
	CacheFamily string
	CacheTTL    time.Duration
	CacheTags   []string

	// Stale lists, for a write, the cached GET entries its success makes
	// stale, for every caller (the client invalidates them through its
	// ResponseCache once the write is answered 2xx).
	Stale []Stale
}

// Stale names cached entries a write makes stale: those of the GET Route
// whose Param (its path parameter, or one of its CacheTags) has the value
// From names: "{id}" is the write's own path parameter, anything else the
// JSON name of a string field of the write's answer ("invoiceRef").
type Stale struct {
	Route, Param, From string
}

// Pattern returns "METHOD route", e.g. "GET /resources/v1/{id}" (the key of
// breakers, of the local service's routes and of its hooks).
func (o Operation) Pattern() string { return o.Method + " " + o.Route }

// RequiredScope returns the least scope that permits o: the ".readonly" twin
// for reads ("invoices.readonly"), the family itself otherwise ("invoices").
func (o Operation) RequiredScope() string {
	if o.ReadOnlyOK {
		return o.Scope + ".readonly"
	}
	return o.Scope
}

// Scopes returns every scope that permits o, the family first:
// ["invoices", "invoices.readonly"] for a read, ["invoices"] otherwise.
func (o Operation) Scopes() []string {
	if o.ReadOnlyOK {
		return []string{o.Scope, o.Scope + ".readonly"}
	}
	return []string{o.Scope}
}

// operation returns an operation that needs scope family scope itself; the
// methods below add the rest.
func operation(method, route, scope string) Operation {
	return Operation{Method: method, Route: route, Scope: scope}
}

func (o Operation) readOnlyOK() Operation {
	o.ReadOnlyOK = true
	return o
}

func (o Operation) bearerOnly() Operation {
	o.BearerOnly = true
	return o
}

func (o Operation) requireNetwork() Operation {
	o.RequireNetwork = true
	return o
}

// cached puts a GET in cache family with its default TTL and the list
// filters that tag its entries.
func (o Operation) cached(family string, ttl time.Duration, tags ...string) Operation {
	o.CacheFamily, o.CacheTTL, o.CacheTags = family, ttl, tags
	return o
}

// stales says what a write makes stale.
func (o Operation) stales(s ...Stale) Operation {
	o.Stale = s
	return o
}

// referenceTTL is the default TTL of reference data (resources, events,
// products); money and activity are not cached by default.
const referenceTTL = 30 * time.Second

// operations is the API, in the spec's order. GET /shop/products/v1/{productId}
// and GET /events/v1/{id} are reads that the spec and the public reference
// give the full scope only.
var operations = [...]Operation{
	operation(http.MethodPost, "/billing/credit_notes/v1", "invoices").stales(
		// The invoice (its amounts and credit notes) and the credit-note
		// lists of that invoice and of its location.
		Stale{"/billing/invoices/v1/{id}/items", "id", "invoiceRef"},
		Stale{"/billing/credit_notes/v1", "invoiceRef", "invoiceRef"},
		Stale{"/billing/credit_notes/v1", "locationRef", "locationRef"}),
	operation(http.MethodGet, "/billing/credit_notes/v1", "invoices").readOnlyOK().cached("creditNotes", 0, "invoiceRef", "locationRef"),
	operation(http.MethodGet, "/billing/invoices/v1/{id}/items", "invoices").readOnlyOK().cached("invoices", 0),
	// A booking creates a transaction, but its answer does not say the
	// location: transaction lists are left to their TTL.
	operation(http.MethodPost, "/resources/bookings/v1", "resources"),
	operation(http.MethodGet, "/resources/v1/{id}", "resources").readOnlyOK().cached("resources", referenceTTL),
	operation(http.MethodPost, "/visitors/visits/v1", "visitors").bearerOnly(),
	operation(http.MethodGet, "/visitors/visits/v1/{id}", "visitors").readOnlyOK().cached("visits", 0),
	operation(http.MethodPut, "/visitors/visits/v1/{id}", "visitors").stales(Stale{"/visitors/visits/v1/{id}", "id", "{id}"}),
	operation(http.MethodPost, "/visitors/requests/v1", "visitors"),
	operation(http.MethodPost, "/feed/posts/v1", "feed").bearerOnly(),
	operation(http.MethodPut, "/feed/posts/v1/{id}", "feed"),
	operation(http.MethodGet, "/feed/posts/v1/{id}/comments", "feed").readOnlyOK().cached("comments", 0),
	operation(http.MethodGet, "/transactions/money/v1", "transactions").readOnlyOK().cached("transactions", 0, "locationRef"),
	operation(http.MethodGet, "/shop/products/v1", "shop").readOnlyOK().cached("products", referenceTTL, "locationRef"),
	operation(http.MethodGet, "/shop/products/v1/{productId}", "shop").cached("products", referenceTTL),
	operation(http.MethodGet, "/shop/orders/v1", "shop").readOnlyOK().cached("orders", 0, "locationRef"),
	operation(http.MethodGet, "/discounts/redemptions/v1", "invoices").readOnlyOK().cached("redemptions", 0, "couponRef", "promocodeRef"),
	operation(http.MethodGet, "/events/v1/{id}", "events").requireNetwork().cached("events", referenceTTL),
}

// Operations returns the API's 18 operations in the spec's order. The slice
// and the slices in it are fresh copies: changing them changes nothing else.
func Operations() []Operation {
	out := append([]Operation(nil), operations[:]...)
	for i := range out {
		out[i].CacheTags = slices.Clone(out[i].CacheTags)
		out[i].Stale = slices.Clone(out[i].Stale)
	}
	return out
}

// LookupOperation returns the operation method route (route is the path
// template, e.g. "/resources/v1/{id}"); ok is false for an unknown one.
func LookupOperation(method, route string) (op Operation, ok bool) {
	for _, o := range operations {
		if o.Method == method && o.Route == route {
			return o, true
		}
	}
	return Operation{}, false
}

// RequiredScope returns the least scope the operation method route needs
// ("invoices.readonly" for GET /billing/credit_notes/v1, "invoices" for POST
// /billing/credit_notes/v1, "events" for GET /events/v1/{id}), or "" for an
// unknown operation.
func RequiredScope(method, route string) string {
	o, ok := LookupOperation(method, route)
	if !ok {
		return ""
	}
	return o.RequiredScope()
}
