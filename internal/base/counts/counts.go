// Package counts renders counters keyed by name (upstream routes, error
// codes) in a stable order, for reports and failure messages.
package counts

import (
	"fmt"
	"slices"
	"strings"
)

// Format renders m sorted by key, each entry with format (one %s for the
// key, one %d for the count) and the entries joined by sep; "" when m is
// empty.
func Format[V ~int | ~int64](m map[string]V, format, sep string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf(format, k, m[k])
	}
	return strings.Join(parts, sep)
}
