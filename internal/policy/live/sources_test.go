package live

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/workspacenet/facade/restclient"
)

// TestSourcesFollowTheOperationTable: every source polls a GET of
// restclient's operation table, and a change makes stale at least the
// entries of its own route its filter names, each one the table's cache
// can invalidate (the route's path parameter or one of its CacheTags).
func TestSourcesFollowTheOperationTable(t *testing.T) {
	c, err := restclient.NewClient("http://upstream.invalid")
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]Source{
		"transactions": Transactions(c, "l1", "", ""),
		"orders":       Orders(c, "l1", ""),
		"credit notes": CreditNotes(c, "i1", ""),
		"redemptions":  Redemptions(c, "", "p1"),
		"comments":     Comments(c, "post1"),
		"visit":        Visit(c, "v1"),
		"resource":     Resource(c, "r1"),
		"event":        EventSource(c, "e1"),
		"product":      Product(c, "p1"),
	}
	for name, s := range sources {
		op, ok := restclient.LookupOperation(http.MethodGet, s.Route)
		if !ok {
			t.Errorf("%s: %s is not a GET of the operation table", name, s.Route)
			continue
		}
		if !strings.HasPrefix(s.Key, s.Route+"?") {
			t.Errorf("%s: key %q does not name its route %s", name, s.Key, s.Route)
		}
		stale := s.Stale(nil)
		if !slices.ContainsFunc(stale, func(e restclient.Entry) bool { return e.Route == s.Route }) {
			t.Errorf("%s: a change makes no entry of its own route stale: %v", name, stale)
		}
		for _, e := range stale {
			if !strings.Contains(e.Route, "{"+e.Param+"}") && !slices.Contains(op.CacheTags, e.Param) && e.Route == s.Route {
				t.Errorf("%s: stale %v names neither a path parameter nor a CacheTag", name, e)
			}
		}
	}
}
