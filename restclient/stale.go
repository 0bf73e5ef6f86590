package restclient

import (
	"context"
	"net/url"
	"reflect"
	"strings"
)

// invalidate drops the cache entries a successful write made stale (its
// operation's Stale, the table in operations.go): the value of each comes
// from the write's path parameter (id, escaped as sent) or from a string
// field of its answer v, by JSON name. A value that is absent or empty
// makes nothing stale. Invalidate's error is not the write's: every Stale
// of the table is one the cache can invalidate (internal/cache's
// TestStaleEntriesAreInvalidatable), and a cache whose store fails counts
// it itself.
func (c *Client) invalidate(ctx context.Context, method, route, id string, v any) {
	op, ok := LookupOperation(method, route)
	if !ok || len(op.Stale) == 0 {
		return
	}
	for _, s := range op.Stale {
		var value string
		if s.From == "{id}" {
			value, _ = url.PathUnescape(id)
		} else {
			value = jsonString(v, s.From)
		}
		if value == "" {
			continue
		}
		_ = c.cache.Invalidate(ctx, s.Route, s.Param, value)
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
