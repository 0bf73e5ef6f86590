package restclient

import (
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"
)

// The operation table
//
// Each operation of the API is written once, as its row below: an *Op[T],
// T being the type of its answer (*Resource, []*Transaction). The row is
// what every layer takes as an argument: this client's methods call through
// it (get, query, write), the local REST service keys its handlers by it,
// the facade's loaders build a loader from it, the live sources and the
// tests name it. The route string of an operation appears in product code
// only in its row.

// Operation is one operation of the Workspace Network Service API and the
// authentication it requires (spec, Authentication; upstream-facts.md,
// "Scopes the spec does not show"). The rows of the table are *Op[T]; an
// Operation is a row's untyped part.
type Operation struct {
	// Method is the HTTP method, e.g. "GET".
	Method string
	// Route is the path template exactly as this client's calls name it in
	// errors and breakers, e.g. "/resources/v1/{id}".
	Route string
	// Key is the JSON name of what the answer holds ("resource",
	// "transactions"), and of the body of a write ({"booking": ...}).
	Key string
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
	// names the route in a TTL spec (internal/policy/cache.ParseTTLs; one family
	// may hold several routes), CacheTTL is the family's default TTL (0: not
	// cached unless configured), and CacheTags are the list filters whose
	// values tag the route's entries beside its path parameter, so that a
	// write can make them stale.
	CacheFamily string
	CacheTTL    time.Duration
	CacheTags   []string

	// Stale lists, for a write, the cached GET entries its success makes
	// stale, for every caller (the client invalidates them through its
	// ResponseCache once the write is answered 2xx), and the live sources
	// it makes stale for its caller (the facade polls them at once).
	// NothingStale is, for a write whose Stale is empty, why no GET of the
	// table reads what it changes. Every write has one of the two.
	Stale        []Stale
	NothingStale string

	index    int  // position in the table
	hasParam bool // Route has a {parameter}

	// The answer: its Go type (the T of the row's Op[T]) and shape, its
	// decoder into a T and the lazily decoding variant (lazy.go; nil: none).
	answer      reflect.Type
	shape       answerShape
	parse, lazy parseFunc
}

// answerShape is how an answer holds its value: one object under Key, a
// list under Key with the page tokens beside it, or the whole answer.
type answerShape int

const (
	oneObject answerShape = iota
	listOfObjects
	wholeAnswer
)

// Stale names cached entries a write makes stale: those of the GET Route
// whose Param (its path parameter, or one of its CacheTags) has the value
// From names: "{id}" is the write's own path parameter, AnyValue every
// value (the write's answer does not say which), anything else the JSON
// name of a string field of the write's answer ("invoiceRef").
type Stale struct {
	Route, Param, From string
}

// AnyValue, as a Stale's From and an Entry's Value, stands for every value
// of the Param: the write's answer does not name the one it changed. The
// response cache cannot drop such entries (they are left to their TTL);
// the write's caller's live sources of the Route are all polled.
const AnyValue = "*"

// Op is one row of the table: an operation whose answer decodes into a T.
// The rows are the package's Op... variables; treat them as read only.
type Op[T any] struct{ Operation }

// Row is any row of the table, whatever the type of its answer: every
// *Op[T] is one (through its Operation), and so is an *Operation.
type Row interface{ Row() *Operation }

// Row returns o.
func (o *Operation) Row() *Operation { return o }

// Answer returns the Go type of o's answer, the T of its row's Op[T]
// (*Resource, []*Transaction).
func (o *Operation) Answer() reflect.Type { return o.answer }

// Index returns o's position in the table (0 to len(Operations())-1): a
// key for per-operation state kept in an array.
func (o *Operation) Index() int { return o.index }

// Pattern returns "METHOD route", e.g. "GET /resources/v1/{id}" (the key of
// breakers, of the local service's routes and of its hooks).
func (o Operation) Pattern() string { return o.Method + " " + o.Route }

// String returns o's Pattern.
func (o Operation) String() string { return o.Pattern() }

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

// answer is how a row's answer decodes: the JSON name it is held under, its
// shape and the decoder that makes a T of it.
type answer[T any] struct {
	key   string
	shape answerShape
	parse parseFunc
}

// object is an answer holding one T under key ({"resource": {...}}).
func object[T any](key string) answer[*T] { return answer[*T]{key, oneObject, parseOne[T](key)} }

// array is an answer holding a list of T under key, with the page tokens
// beside it ({"transactions": [...], "nextPageToken": "..."}).
func array[T any](key string) answer[[]*T] {
	return answer[[]*T]{key, listOfObjects, parseList[T](key)}
}

// whole is an answer that is a T as a whole, decoded by parse; key names
// its main object ({"invoice": {...}, "invoiceItems": [...]}).
func whole[T any](key string, parse parseFunc) answer[*T] { return answer[*T]{key, wholeAnswer, parse} }

// operations is the table, in the order its rows are initialised: their
// order below (a write names the GETs it makes stale, so it comes after
// them).
var operations []*Operation

// operation adds the row of the operation method route, which needs scope
// family scope itself and answers a; the methods below add the rest.
func operation[T any](method, route, scope string, a answer[T]) *Op[T] {
	o := &Op[T]{Operation{Method: method, Route: route, Key: a.key, Scope: scope,
		index: len(operations), hasParam: strings.Contains(route, "{"),
		answer: reflect.TypeFor[T](), shape: a.shape, parse: a.parse}}
	operations = append(operations, &o.Operation)
	return o
}

func (o *Op[T]) readOnlyOK() *Op[T] {
	o.ReadOnlyOK = true
	return o
}

func (o *Op[T]) bearerOnly() *Op[T] {
	o.BearerOnly = true
	return o
}

func (o *Op[T]) requireNetwork() *Op[T] {
	o.RequireNetwork = true
	return o
}

// cached puts a GET in cache family with its default TTL and the list
// filters that tag its entries.
func (o *Op[T]) cached(family string, ttl time.Duration, tags ...string) *Op[T] {
	o.CacheFamily, o.CacheTTL, o.CacheTags = family, ttl, tags
	return o
}

// stales says that the write o makes stale the entries of the GET get
// whose param has the value from names (Stale).
func (o *Op[T]) stales(get Row, param, from string) *Op[T] {
	o.Stale = append(o.Stale, Stale{get.Row().Route, param, from})
	return o
}

// staleNothing says why the write o makes no GET entry stale (NothingStale).
func (o *Op[T]) staleNothing(reason string) *Op[T] {
	o.NothingStale = reason
	return o
}

// lazily gives o a lazily decoding variant (lazy.go), made from o's row and
// its eager decoder.
func (o *Op[T]) lazily(parse func(op *Operation, eager parseFunc) parseFunc) *Op[T] {
	o.lazy = parse(&o.Operation, o.parse)
	return o
}

// referenceTTL is the default TTL of reference data (resources, events,
// products); money and activity are not cached by default.
const referenceTTL = 30 * time.Second

// The rows. GET /shop/products/v1/{productId} and GET /events/v1/{id} are
// reads that the spec and the public reference give the full scope only.
var (
	OpListCreditNotes  = operation(http.MethodGet, "/billing/credit_notes/v1", "invoices", array[CreditNote]("creditNotes")).readOnlyOK().cached("creditNotes", 0, "invoiceRef", "locationRef")
	OpListInvoiceItems = operation(http.MethodGet, "/billing/invoices/v1/{id}/items", "invoices", whole[InvoiceItems]("invoice", parseInvoiceItems)).readOnlyOK().cached("invoices", 0).lazily(invoiceItemsLazily)
	// The invoice (its amounts and credit notes) and the credit-note lists
	// of that invoice and of its location.
	OpCreateCreditNote = operation(http.MethodPost, "/billing/credit_notes/v1", "invoices", object[CreditNote]("creditNote")).stales(OpListInvoiceItems, "id", "invoiceRef").stales(OpListCreditNotes, "invoiceRef", "invoiceRef").stales(OpListCreditNotes, "locationRef", "locationRef")
	OpListTransactions = operation(http.MethodGet, "/transactions/money/v1", "transactions", array[Transaction]("transactions")).readOnlyOK().cached("transactions", 0, "locationRef")
	// A booking creates a transaction of its resource's location, which its
	// answer does not name: every transaction list of the caller.
	OpCreateBooking = operation(http.MethodPost, "/resources/bookings/v1", "resources", object[Booking]("booking")).stales(OpListTransactions, "locationRef", AnyValue)
	OpGetResource   = operation(http.MethodGet, "/resources/v1/{id}", "resources", object[Resource]("resource")).readOnlyOK().cached("resources", referenceTTL).lazily(resourceLazily)
	OpGetVisit      = operation(http.MethodGet, "/visitors/visits/v1/{id}", "visitors", object[Visit]("visit")).readOnlyOK().cached("visits", 0)
	// The new visit's own entry (a read of it made before it existed).
	OpCreateVisit = operation(http.MethodPost, "/visitors/visits/v1", "visitors", object[Visit]("visit")).bearerOnly().stales(OpGetVisit, "id", "id")
	OpUpdateVisit = operation(http.MethodPut, "/visitors/visits/v1/{id}", "visitors", object[Visit]("visit")).stales(OpGetVisit, "id", "{id}")
	// No operation of the API reads visit requests or posts (a post's
	// comments do not hold the post).
	OpCreateVisitRequest = operation(http.MethodPost, "/visitors/requests/v1", "visitors", object[VisitRequest]("request")).staleNothing("no read of the API returns visit requests")
	OpCreatePost         = operation(http.MethodPost, "/feed/posts/v1", "feed", object[Post]("post")).bearerOnly().staleNothing("no read of the API returns posts; a new post has no comments")
	OpUpdatePost         = operation(http.MethodPut, "/feed/posts/v1/{id}", "feed", object[Post]("post")).staleNothing("no read of the API returns posts; a post's comments do not hold it")
	OpListComments       = operation(http.MethodGet, "/feed/posts/v1/{id}/comments", "feed", array[Comment]("comments")).readOnlyOK().cached("comments", 0)
	OpListProducts       = operation(http.MethodGet, "/shop/products/v1", "shop", array[Product]("products")).readOnlyOK().cached("products", referenceTTL, "locationRef")
	OpGetProduct         = operation(http.MethodGet, "/shop/products/v1/{productId}", "shop", object[Product]("product")).cached("products", referenceTTL)
	OpListOrders         = operation(http.MethodGet, "/shop/orders/v1", "shop", array[Order]("orders")).readOnlyOK().cached("orders", 0, "locationRef")
	OpListRedemptions    = operation(http.MethodGet, "/discounts/redemptions/v1", "invoices", array[Redemption]("redemptions")).readOnlyOK().cached("redemptions", 0, "couponRef", "promocodeRef")
	OpGetEvent           = operation(http.MethodGet, "/events/v1/{id}", "events", object[Event]("event")).requireNetwork().cached("events", referenceTTL)
)

// Operations returns the API's operations, the rows of the table in its
// order. The slice and the slices in it are fresh copies: changing them
// changes nothing else.
func Operations() []Operation {
	out := make([]Operation, len(operations))
	for i, o := range operations {
		out[i] = *o
		out[i].CacheTags = slices.Clone(o.CacheTags)
		out[i].Stale = slices.Clone(o.Stale)
	}
	return out
}

// LookupOperation returns the operation method route (route is the path
// template, e.g. "/resources/v1/{id}"); ok is false for an unknown one.
func LookupOperation(method, route string) (op Operation, ok bool) {
	if o := lookup(method, route); o != nil {
		return *o, true
	}
	return Operation{}, false
}

// lookup returns the row of method route, nil for an unknown one.
func lookup(method, route string) *Operation {
	for _, o := range operations {
		if o.Method == method && o.Route == route {
			return o
		}
	}
	return nil
}

// RequiredScope returns the least scope the operation method route needs
// ("invoices.readonly" for the list of credit notes, "invoices" for
// creating one, "events" for an event), or "" for an unknown operation.
func RequiredScope(method, route string) string {
	o, ok := LookupOperation(method, route)
	if !ok {
		return ""
	}
	return o.RequiredScope()
}
