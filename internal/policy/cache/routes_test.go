package cache

import (
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/restclient"
)

func TestTagsOf(t *testing.T) {
	for _, tc := range []struct {
		route, path string
		want        []tag // nil: not cacheable
	}{
		{resRoute, "/resources/v1/res-1", []tag{{"id", "res-1"}}},
		{resRoute, "/resources/v1/a%2Fb%20c", []tag{{"id", "a/b c"}}},
		{resRoute, "/resources/v1/res-1?x=y", []tag{{"id", "res-1"}}},
		{resRoute, "/resources/v1/", nil},
		{resRoute, "/resources/v1/a/b", nil},
		{resRoute, "/resources/v2/res-1", nil},
		{resRoute, "/resources/v1/%zz", nil},
		{restclient.OpListInvoiceItems.Route, "/billing/invoices/v1/inv-1/items", []tag{{"id", "inv-1"}}},
		{restclient.OpListInvoiceItems.Route, "/billing/invoices/v1/inv-1/other", nil},
		{restclient.OpListComments.Route, "/feed/posts/v1/p-9/comments?limit=5", []tag{{"id", "p-9"}}},
		{restclient.OpGetProduct.Route, "/shop/products/v1/pr-1", []tag{{"productId", "pr-1"}}},
		{restclient.OpListProducts.Route, "/shop/products/v1?limit=25&locationRef=loc%201", []tag{{"locationRef", "loc 1"}}},
		{restclient.OpListProducts.Route, restclient.OpListProducts.Route, nil},
		{restclient.OpListProducts.Route, "/shop/products/v1/pr-1", nil},
		{notesRoute, notesRoute + "?invoiceRef=i&locationRef=l", []tag{{"invoiceRef", "i"}, {"locationRef", "l"}}},
		{notesRoute, notesRoute + "?limit=25", nil},
		{notesRoute, notesRoute + "?invoiceRef=%zz", nil},
		{restclient.OpListRedemptions.Route, "/discounts/redemptions/v1?couponRef=c", []tag{{"couponRef", "c"}}},
		{"/unknown/{id}", "/unknown/1", nil},
	} {
		got, ok := tagsOf(tc.route, tc.path)
		if ok != (tc.want != nil) || !reflect.DeepEqual(got, tc.want) && tc.want != nil {
			t.Errorf("tagsOf(%s, %s) = %v, %v; want %v", tc.route, tc.path, got, ok, tc.want)
		}
	}
}

// Every GET of the API has a route spec and exactly one TTL family; there is
// nothing else.
func TestRoutesCoverTheAPI(t *testing.T) {
	gets := map[string]bool{}
	for _, op := range restclient.Operations() {
		if op.Method == http.MethodGet {
			gets[op.Route] = true
		}
	}
	if len(gets) != len(routes) {
		t.Errorf("%d GET routes in the API, %d here", len(gets), len(routes))
	}
	inFamily := map[string]string{}
	for _, f := range families {
		for _, r := range f.routes {
			if prev, dup := inFamily[r]; dup {
				t.Errorf("%s in %s and %s", r, prev, f.name)
			}
			inFamily[r] = f.name
		}
	}
	for r := range gets {
		if routes[r] == nil || inFamily[r] == "" {
			t.Errorf("GET %s: spec %v, family %q", r, routes[r] != nil, inFamily[r])
		}
	}
	for r := range inFamily {
		if !gets[r] {
			t.Errorf("family route %s is not a GET of the API", r)
		}
	}
}

func TestParseTTLs(t *testing.T) {
	got, err := ParseTTLs(" resources=30s, events=30s,products=1m30s,visits=0,creditNotes=5s ")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{
		restclient.OpGetResource.Pattern():     30 * time.Second,
		restclient.OpGetEvent.Pattern():        30 * time.Second,
		restclient.OpListProducts.Pattern():    90 * time.Second,
		restclient.OpGetProduct.Pattern():      90 * time.Second,
		restclient.OpListCreditNotes.Pattern(): 5 * time.Second,
	}
	if !maps.Equal(got, want) {
		t.Errorf("ParseTTLs = %v", got)
	}
	if _, err := New(Config{Secret: testSecret, TTL: got, Store: NewMemoryStore(0)}); err != nil {
		t.Errorf("New with parsed TTLs: %v", err)
	}
	if m, err := ParseTTLs(""); err != nil || len(m) != 0 {
		t.Errorf(`ParseTTLs("") = %v, %v`, m, err)
	}
	// The families, in the table's order.
	var families []string
	for _, op := range restclient.Operations() {
		if op.CacheFamily != "" && !slices.Contains(families, op.CacheFamily) {
			families = append(families, op.CacheFamily)
		}
	}
	for spec, want := range map[string]string{
		"resources=30s,nosuchfamily=5s": `unknown TTL family "nosuchfamily" (known: ` + strings.Join(families, ", ") + ")",
		"Resources=30s":                 `unknown TTL family "Resources"`,
		"resources":                     "want family=duration",
		"=5s":                           "want family=duration",
		"resources=30":                  "missing unit",
		"resources=-1s":                 "negative",
		"resources=1s,resources=2s":     "given twice",
		"resources=30s,,events=30s,":    "want family=duration",
	} {
		if _, err := ParseTTLs(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTTLs(%q) = %v; want an error with %q", spec, err, want)
		}
	}
}

func TestDefaultTTLs(t *testing.T) {
	// Every GET whose row gives a default TTL; reference data (resources)
	// is cached for 30 s.
	want := map[string]time.Duration{}
	for _, op := range restclient.Operations() {
		if op.CacheTTL > 0 {
			want[op.Pattern()] = op.CacheTTL
		}
	}
	d := DefaultTTLs()
	if d[restclient.OpGetResource.Pattern()] != 30*time.Second {
		t.Errorf("resources are cached %v by default, want 30s", d[restclient.OpGetResource.Pattern()])
	}
	if !maps.Equal(d, want) {
		t.Errorf("DefaultTTLs = %v", d)
	}
	d[restclient.OpListTransactions.Pattern()] = time.Hour
	if _, ok := DefaultTTLs()[restclient.OpListTransactions.Pattern()]; ok {
		t.Error("DefaultTTLs shares its map")
	}
}

func TestNewValidates(t *testing.T) {
	ok := Config{Secret: testSecret, TTL: testTTLs(), Store: NewMemoryStore(0)}
	if _, err := New(ok); err != nil {
		t.Fatal(err)
	}
	for want, edit := range map[string]func(*Config){
		"at least 32":                     func(c *Config) { c.Secret = testSecret[:31] },
		"no Store":                        func(c *Config) { c.Store = nil },
		"negative MaxBytes":               func(c *Config) { c.MaxBytes = -1 },
		`"POST /billing/credit_notes/v1"`: func(c *Config) { c.TTL = map[string]time.Duration{"POST " + notesRoute: time.Second} },
		`"/resources/v1/{id}": not a GET`: func(c *Config) { c.TTL = map[string]time.Duration{resRoute: time.Second} },
		`"GET /resources/v1/{ID}"`:        func(c *Config) { c.TTL = map[string]time.Duration{"GET /resources/v1/{ID}": time.Second} },
		"negative duration":               func(c *Config) { c.TTL = map[string]time.Duration{"GET " + resRoute: -time.Second} },
	} {
		cfg := ok
		edit(&cfg)
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New: %v; want an error with %q", err, want)
		}
	}
}

// TestStaleEntriesAreInvalidatable: every entry the operation table says a
// write makes stale is one Invalidate accepts (restclient ignores its error
// on that promise).
func TestStaleEntriesAreInvalidatable(t *testing.T) {
	c, err := New(Config{Secret: testSecret, TTL: testTTLs(), Store: NewMemoryStore(0)})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, op := range restclient.Operations() {
		for _, s := range op.Stale {
			n++
			if err := c.Invalidate(t.Context(), s.Route, s.Param, "x"); err != nil {
				t.Errorf("%s makes %s %s stale: %v", op.Pattern(), s.Route, s.Param, err)
			}
		}
	}
	if n == 0 {
		t.Error("the table makes nothing stale")
	}
}
