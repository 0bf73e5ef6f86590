package restclient

import (
	"context"
	"net/url"
	"reflect"
	"strings"
)

// Entry names cached GET entries: those of Route whose Param (its path
// parameter or one of its CacheTags) has Value; ResponseCache.Invalidate's
// arguments.
type Entry struct{ Route, Param, Value string }

// TagParams returns the parameters whose values tag the cached entries of
// GET operation o: its path parameters, then its CacheTags.
func (o Operation) TagParams() []string {
	var out []string
	for seg := range strings.SplitSeq(o.Route, "/") {
		if len(seg) > 2 && seg[0] == '{' && seg[len(seg)-1] == '}' {
			out = append(out, seg[1:len(seg)-1])
		}
	}
	return append(out, o.CacheTags...)
}

// Entries returns the cached entries of GET operation o that values name,
// keyed by parameter name ("id", "locationRef"): one for each of its
// TagParams with a non-empty value, in that order. Other values (filters
// that tag nothing) are ignored.
func (o Operation) Entries(values map[string]string) []Entry {
	var out []Entry
	for _, p := range o.TagParams() {
		if v := values[p]; v != "" {
			out = append(out, Entry{o.Route, p, v})
		}
	}
	return out
}

// StaleAfter returns the cached entries the success of the write method
// route makes stale (its operation's Stale, the table in operations.go):
// the value of each comes from the write's path parameter (id, escaped as
// sent) or from a string field of its answer v, by JSON name. A value that
// is absent or empty makes nothing stale; a From of AnyValue gives an Entry
// whose Value is AnyValue. A poll that sees what a write
// created (a new credit note) makes the same entries stale.
func StaleAfter(method, route, id string, v any) []Entry {
	op, ok := LookupOperation(method, route)
	if !ok {
		return nil
	}
	var out []Entry
	for _, s := range op.Stale {
		var value string
		switch s.From {
		case "{id}":
			value, _ = url.PathUnescape(id)
		case AnyValue:
			value = AnyValue
		default:
			value = jsonString(v, s.From)
		}
		if value != "" {
			out = append(out, Entry{s.Route, s.Param, value})
		}
	}
	return out
}

// invalidate drops the cache entries a successful write made stale
// (StaleAfter). Invalidate's error is not the write's: every Stale of the
// table is one the cache can invalidate (internal/policy/cache's
// TestStaleEntriesAreInvalidatable), and a cache whose store fails counts
// it itself.
func (c *Client) invalidate(ctx context.Context, method, route, id string, v any) {
	for _, e := range StaleAfter(method, route, id, v) {
		if e.Value == AnyValue {
			continue // left to the entries' TTL (AnyValue)
		}
		_ = c.cache.Invalidate(ctx, e.Route, e.Param, e.Value)
	}
}

// jsonString returns the string (or *string) field of the struct v points
// to whose JSON name is name, "" when there is none.
func jsonString(v any, name string) string {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return ""
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return ""
	}
	t := rv.Type()
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if tag != name {
			continue
		}
		f := rv.Field(i)
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				return ""
			}
			f = f.Elem()
		}
		if f.Kind() == reflect.String {
			return f.String()
		}
		return ""
	}
	return ""
}
