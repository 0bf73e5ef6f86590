package cache

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/workspacenet/facade/restclient"
)

// routeSpec is what the cache knows of a GET route: its path template split
// into segments and the parameters that tag its entries for invalidation.
type routeSpec struct {
	segs    []string // template segments; "{name}" is a path parameter
	filters []string // list filter query parameters that tag entries
	params  []string // every parameter that tags entries (Operation.TagParams)
}

type family struct {
	name   string
	ttl    time.Duration // the default TTL
	routes []string
}

// routes are the API's GET routes (restclient's operation table). Every
// entry of a route is tagged by the values of its path parameters and of its
// CacheTags present in its query, so Invalidate(route, param, value) reaches
// it. families are the table's cache families, in its order (ParseTTLs'
// error messages and DefaultTTLSpec).
var routes, families = tableRoutes()

func tableRoutes() (map[string]*routeSpec, []family) {
	routes := map[string]*routeSpec{}
	var families []family
	for _, op := range restclient.Operations() {
		if op.Method != http.MethodGet {
			continue
		}
		routes[op.Route] = &routeSpec{segs: strings.Split(op.Route, "/"), filters: op.CacheTags, params: op.TagParams()}
		i := slices.IndexFunc(families, func(f family) bool { return f.name == op.CacheFamily })
		if i < 0 {
			families = append(families, family{name: op.CacheFamily, ttl: op.CacheTTL})
			i = len(families) - 1
		}
		families[i].routes = append(families[i].routes, op.Route)
	}
	return routes, families
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

// DefaultTTLSpec is DefaultTTLs as a ParseTTLs spec (a flag's default):
// each family with its CacheTTL in restclient's operation table (reference
// data, resources, events and products, for 30s; money and activity
// uncached).
var DefaultTTLSpec = defaultTTLSpec()

func defaultTTLSpec() string {
	var parts []string
	for _, f := range families {
		if f.ttl > 0 {
			parts = append(parts, f.name+"="+f.ttl.String())
		}
	}
	return strings.Join(parts, ",")
}

// DefaultTTLs returns ParseTTLs(DefaultTTLSpec), a fresh map.
func DefaultTTLs() map[string]time.Duration {
	m, err := ParseTTLs(DefaultTTLSpec)
	if err != nil {
		panic(err) // DefaultTTLSpec is made of the families' own names
	}
	return m
}

// ParseTTLs parses a comma-separated list of family=duration (e.g.
// "resources=30s,visits=0,creditNotes=5s") into a Config.TTL map keyed by
// "GET <route template>". The list is complete: a family it does not name is
// not cached, nor is one given 0 (it has no key in the map). The families are
// the CacheFamily names of restclient's operation table: creditNotes,
// invoices (invoice items), resources, visits, comments, transactions,
// products (the list and the single product), orders, redemptions and
// events. An unknown or repeated
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
