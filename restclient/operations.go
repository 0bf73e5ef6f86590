package restclient

import "net/http"

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

// operations is the API, in the spec's order. GET /shop/products/v1/{productId}
// and GET /events/v1/{id} are reads that the spec and the public reference
// give the full scope only.
var operations = [...]Operation{
	operation(http.MethodPost, "/billing/credit_notes/v1", "invoices"),
	operation(http.MethodGet, "/billing/credit_notes/v1", "invoices").readOnlyOK(),
	operation(http.MethodGet, "/billing/invoices/v1/{id}/items", "invoices").readOnlyOK(),
	operation(http.MethodPost, "/resources/bookings/v1", "resources"),
	operation(http.MethodGet, "/resources/v1/{id}", "resources").readOnlyOK(),
	operation(http.MethodPost, "/visitors/visits/v1", "visitors").bearerOnly(),
	operation(http.MethodGet, "/visitors/visits/v1/{id}", "visitors").readOnlyOK(),
	operation(http.MethodPut, "/visitors/visits/v1/{id}", "visitors"),
	operation(http.MethodPost, "/visitors/requests/v1", "visitors"),
	operation(http.MethodPost, "/feed/posts/v1", "feed").bearerOnly(),
	operation(http.MethodPut, "/feed/posts/v1/{id}", "feed"),
	operation(http.MethodGet, "/feed/posts/v1/{id}/comments", "feed").readOnlyOK(),
	operation(http.MethodGet, "/transactions/money/v1", "transactions").readOnlyOK(),
	operation(http.MethodGet, "/shop/products/v1", "shop").readOnlyOK(),
	operation(http.MethodGet, "/shop/products/v1/{productId}", "shop"),
	operation(http.MethodGet, "/shop/orders/v1", "shop").readOnlyOK(),
	operation(http.MethodGet, "/discounts/redemptions/v1", "invoices").readOnlyOK(),
	operation(http.MethodGet, "/events/v1/{id}", "events").requireNetwork(),
}

// Operations returns the API's 18 operations in the spec's order. The slice
// is a fresh copy: changing it changes nothing else.
func Operations() []Operation { return append([]Operation(nil), operations[:]...) }

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
