package cache

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"
)

// routeSpec is what the cache knows of a GET route: its path template split
// into segments and the parameters that tag its entries for invalidation.
type routeSpec struct {
	segs    []string // template segments; "{name}" is a path parameter
	filters []string // list filter query parameters that tag entries
}

// routes are the API's GET routes. Every entry of a route is tagged by the
// values of its path parameters and of the filters below present in its
// query, so Invalidate(route, param, value) reaches it.
var routes = map[string]*routeSpec{
	"/resources/v1/{id}":              {},
	"/events/v1/{id}":                 {},
	"/shop/products/v1/{productId}":   {},
	"/visitors/visits/v1/{id}":        {},
	"/billing/invoices/v1/{id}/items": {},
	"/feed/posts/v1/{id}/comments":    {},
	"/billing/credit_notes/v1":        {filters: []string{"invoiceRef", "locationRef"}},
	"/transactions/money/v1":          {filters: []string{"locationRef"}},
	"/shop/products/v1":               {filters: []string{"locationRef"}},
	"/shop/orders/v1":                 {filters: []string{"locationRef"}},
	"/discounts/redemptions/v1":       {filters: []string{"couponRef", "promocodeRef"}},
}

func init() {
	for route, s := range routes {
		s.segs = strings.Split(route, "/")
	}
}

// params returns the parameters that tag entries of s: path parameters, then
// filters.
func (s *routeSpec) params() []string {
	var out []string
	for _, seg := range s.segs {
		if name, ok := pathParam(seg); ok {
			out = append(out, name)
		}
	}
	return append(out, s.filters...)
}

func pathParam(seg string) (string, bool) {
	if len(seg) > 2 && seg[0] == '{' && seg[len(seg)-1] == '}' {
		return seg[1 : len(seg)-1], true
	}
	return "", false
}

// tag is one identifying value of an entry: a path parameter or a filter.
type tag struct{ param, value string }

// tagsOf returns the tags of the GET of path (below the base URL, query
// included) on route. ok is false when route is unknown, path does not match
// its template, or the entry would have no tag (no Invalidate could reach
// it): such a GET is not cached.
func tagsOf(route, path string) (tags []tag, ok bool) {
	s := routes[route]
	if s == nil {
		return nil, false
	}
	p, rawQuery, _ := strings.Cut(path, "?")
	n := 0
	for seg := range strings.SplitSeq(p, "/") {
		if n >= len(s.segs) {
			return nil, false
		}
		if name, isParam := pathParam(s.segs[n]); isParam {
			v, err := url.PathUnescape(seg)
			if err != nil || v == "" {
				return nil, false
			}
			tags = append(tags, tag{name, v})
		} else if seg != s.segs[n] {
			return nil, false
		}
		n++
	}
	if n != len(s.segs) {
		return nil, false
	}
	if len(s.filters) > 0 && rawQuery != "" {
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return nil, false
		}
		for _, f := range s.filters {
			for _, v := range q[f] {
				tags = append(tags, tag{f, v})
			}
		}
	}
	return tags, len(tags) > 0
}

type family struct {
	name   string
	routes []string
}

// families name the GET routes for ParseTTLs, in the order of its error
// messages.
var families = []family{
	{"resources", []string{"/resources/v1/{id}"}},
	{"events", []string{"/events/v1/{id}"}},
	{"products", []string{"/shop/products/v1", "/shop/products/v1/{productId}"}},
	{"visits", []string{"/visitors/visits/v1/{id}"}},
	{"invoices", []string{"/billing/invoices/v1/{id}/items"}},
	{"creditNotes", []string{"/billing/credit_notes/v1"}},
	{"transactions", []string{"/transactions/money/v1"}},
	{"orders", []string{"/shop/orders/v1"}},
	{"redemptions", []string{"/discounts/redemptions/v1"}},
	{"comments", []string{"/feed/posts/v1/{id}/comments"}},
}

// DefaultTTLSpec is DefaultTTLs as a ParseTTLs spec (a flag's default):
// reference data for 30s; money and activity (transactions, orders, credit
// notes, invoices, redemptions, comments, visits) uncached.
const DefaultTTLSpec = "resources=30s,events=30s,products=30s"

// DefaultTTLs returns ParseTTLs(DefaultTTLSpec), a fresh map.
func DefaultTTLs() map[string]time.Duration {
	m, err := ParseTTLs(DefaultTTLSpec)
	if err != nil {
		panic(err) // DefaultTTLSpec is a constant that parses
	}
	return m
}

// ParseTTLs parses a comma-separated list of family=duration (e.g.
// "resources=30s,visits=0,creditNotes=5s") into a Config.TTL map keyed by
// "GET <route template>". The list is complete: a family it does not name is
// not cached, nor is one given 0 (it has no key in the map). The families are
// resources (GET /resources/v1/{id}), events, products (the list and the
// single product), visits, invoices (invoice items), creditNotes,
// transactions, orders, redemptions and comments. An unknown or repeated
// family, or a negative or malformed duration, is an error; "" caches
// nothing.
func ParseTTLs(spec string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	seen := map[string]bool{}
	if strings.TrimSpace(spec) == "" {
		return out, nil
	}
	for item := range strings.SplitSeq(spec, ",") {
		name, d, ok := strings.Cut(item, "=")
		name, d = strings.TrimSpace(name), strings.TrimSpace(d)
		if !ok || name == "" {
			return nil, fmt.Errorf("cache: TTL %q: want family=duration", strings.TrimSpace(item))
		}
		i := slices.IndexFunc(families, func(f family) bool { return f.name == name })
		if i < 0 {
			return nil, fmt.Errorf("cache: unknown TTL family %q (known: %s)", name, strings.Join(familyNames(), ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("cache: TTL family %q given twice", name)
		}
		seen[name] = true
		ttl, err := time.ParseDuration(d)
		if err != nil {
			return nil, fmt.Errorf("cache: TTL of %s: %w", name, err)
		}
		if ttl < 0 {
			return nil, fmt.Errorf("cache: TTL of %s: negative duration %s", name, d)
		}
		if ttl == 0 {
			continue
		}
		for _, r := range families[i].routes {
			out["GET "+r] = ttl
		}
	}
	return out, nil
}

// familyOf returns the family of route (a GET route template), "" for none.
func familyOf(route string) string {
	for _, f := range families {
		if slices.Contains(f.routes, route) {
			return f.name
		}
	}
	return ""
}

func familyNames() []string {
	out := make([]string, len(families))
	for i, f := range families {
		out[i] = f.name
	}
	return out
}

// knownRoutes returns the GET routes the cache knows, sorted (for errors).
func knownRoutes() []string {
	return slices.Sorted(maps.Keys(routes))
}
