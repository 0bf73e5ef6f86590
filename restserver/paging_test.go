package restserver

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/restclient"
)

// page is a decoded list page: the ids of its items and its raw keys.
type page struct {
	ids             []string
	next, searchQry string
	hasNextKey      bool
}

func getPage(t *testing.T, ts *testServer, a auth, path, key string) page {
	t.Helper()
	var raw map[string]json.RawMessage
	ts.ok(t, a, 200, "GET", path, nil).json(t, &raw)
	var items []json.RawMessage
	if err := json.Unmarshal(raw[key], &items); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	p := page{}
	for _, it := range items {
		// Redemptions have no id: the whole item identifies them then.
		var v struct {
			ID string `json:"id"`
		}
		json.Unmarshal(it, &v)
		if v.ID == "" {
			v.ID = string(it)
		}
		p.ids = append(p.ids, v.ID)
	}
	if v, ok := raw["nextPageToken"]; ok {
		p.hasNextKey = true
		json.Unmarshal(v, &p.next)
	}
	if v, ok := raw["searchQueryNext"]; ok {
		json.Unmarshal(v, &p.searchQry)
	}
	return p
}

// walk pages through path (which ends in a query) with nextPageToken, calling
// between after each page, and returns every id in order.
func walk(t *testing.T, ts *testServer, path, key string, between func()) []string {
	t.Helper()
	var all []string
	p := getPage(t, ts, ts.basic(), path, key)
	for pages := 1; ; pages++ {
		all = append(all, p.ids...)
		if !p.hasNextKey {
			return all
		}
		if p.next == "" {
			t.Fatal("nextPageToken present but empty")
		}
		if pages > 100 {
			t.Fatal("too many pages")
		}
		if between != nil {
			between()
		}
		p = getPage(t, ts, ts.basic(), path+"&nextPageToken="+url.QueryEscape(p.next), key)
	}
}

func TestPagingIsStableUnderInserts(t *testing.T) {
	ts := newTestServer(t)
	loc := ts.Manifest.IDs["location"][0]
	path := "/transactions/money/v1?locationRef=" + loc
	snapshot := walk(t, ts, path+"&limit=100", "transactions", nil)
	if len(snapshot) < 150 {
		t.Fatalf("%d transactions", len(snapshot))
	}
	res := addResource(t, ts, 100, 0, 0, 0)
	start := time.Date(2032, 1, 1, 9, 0, 0, 0, time.UTC)
	inserts := 0
	got := walk(t, ts, path+"&limit=7", "transactions", func() {
		// Each booking adds a transaction to this location.
		ts.ok(t, ts.bearer(), 201, "POST", restclient.OpCreateBooking.Route, bookingBody(res, start.Add(time.Duration(inserts)*time.Hour), 60))
		inserts++
	})
	if inserts < 20 {
		t.Fatalf("only %d pages", inserts+1)
	}
	if strings.Join(got, ",") != strings.Join(snapshot, ",") {
		t.Fatalf("paging with inserts returned %d items, snapshot %d (or a different order)", len(got), len(snapshot))
	}
	// The inserted transactions are at the head of a new listing.
	fresh := getPage(t, ts, ts.basic(), path+"&limit=100", "transactions")
	if fresh.ids[inserts] != snapshot[0] {
		t.Fatal("new transactions are not listed first")
	}
}

func TestPagingFiltersAndSearchQueryNext(t *testing.T) {
	ts := newTestServer(t)
	loc := ts.Manifest.IDs["location"][0]
	// Filtered transactions: every item matches, no duplicates.
	for _, f := range []string{"&status=failed", "&type=eventTicket", "&createDate[gte]=2025-11-01T00:00:00Z&createDate[lte]=2025-12-15T00:00:00Z"} {
		ids := walk(t, ts, "/transactions/money/v1?limit=4&locationRef="+loc+f, "transactions", nil)
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("%s: %s twice", f, id)
			}
			seen[id] = true
			var status, typ string
			var created int64
			ts.db.read.QueryRow(`SELECT status, type, create_date FROM transactions WHERE id = ?`, id).Scan(&status, &typ, &created)
			switch {
			case strings.Contains(f, "status") && status != "failed",
				strings.Contains(f, "type") && typ != "eventTicket",
				strings.Contains(f, "createDate") && (created < time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC).UnixMicro() || created > time.Date(2025, 12, 15, 0, 0, 0, 0, time.UTC).UnixMicro()):
				t.Fatalf("%s: transaction %s %s %v", f, status, typ, time.UnixMicro(created))
			}
		}
		if len(ids) == 0 {
			t.Fatalf("%s: nothing", f)
		}
	}
	// Orders over several pages, by status.
	if n := len(walk(t, ts, "/shop/orders/v1?limit=5&locationRef="+loc, "orders", nil)); n != 30 {
		t.Fatalf("%d orders", n)
	}
	if n := len(walk(t, ts, "/shop/orders/v1?limit=3&status=new&locationRef="+loc, "orders", nil)); n == 0 || n >= 30 {
		t.Fatalf("%d new orders", n)
	}
	// Credit notes and redemptions: 2+ pages at the default limit, and
	// searchQueryNext is the query of the next page.
	for _, c := range []struct{ path, key string }{
		{"/billing/credit_notes/v1?locationRef=" + loc, "creditNotes"},
		{"/discounts/redemptions/v1?couponRef=" + ts.Manifest.IDs["coupon"][0], "redemptions"},
	} {
		p := getPage(t, ts, ts.basic(), c.path, c.key)
		if len(p.ids) != 25 || !p.hasNextKey || p.searchQry == "" {
			t.Fatalf("%s: %d items, next %q, searchQueryNext %q", c.path, len(p.ids), p.next, p.searchQry)
		}
		base, _, _ := strings.Cut(c.path, "?")
		p2 := getPage(t, ts, ts.basic(), base+"?"+p.searchQry, c.key)
		p3 := getPage(t, ts, ts.basic(), c.path+"&nextPageToken="+url.QueryEscape(p.next), c.key)
		if len(p2.ids) == 0 || strings.Join(p2.ids, ",") != strings.Join(p3.ids, ",") || p2.ids[0] == p.ids[0] {
			t.Fatalf("%s: searchQueryNext page differs: %q: %v vs %v", c.path, p.searchQry, p2.ids, p3.ids)
		}
		if p2.hasNextKey || p2.searchQry != "" {
			// 30 items: the second page is the last.
			t.Fatalf("%s: last page has nextPageToken", c.path)
		}
	}
}

func TestPageTokenTampering(t *testing.T) {
	ts := newTestServer(t)
	loc := ts.Manifest.IDs["location"][0]
	path := "/transactions/money/v1?limit=5&locationRef=" + loc
	p := getPage(t, ts, ts.basic(), path, "transactions")
	tok := p.next
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	for name, bad := range map[string]string{
		"payload":     flip(tok, 3),
		"tag":         flip(tok, len(tok)-5),
		"truncated":   tok[:len(tok)-4],
		"extended":    tok + "A",
		"with a dot":  tok + ".",
		"garbage":     "%%%",
		"long":        tok + tok,
		"other token": strings.Repeat("A", len(tok)),
	} {
		r := ts.do(t, ts.basic(), "GET", path+"&nextPageToken="+url.QueryEscape(bad), nil)
		r.wantError(t, 400, "invalid_request", "nextPageToken")
		_ = name
	}
	// Valid token, other filters / other list / other network.
	ts.do(t, ts.basic(), "GET", path+"&status=failed&nextPageToken="+url.QueryEscape(tok), nil).wantError(t, 400, "invalid_request", "other filters")
	ts.do(t, ts.basic(), "GET", "/shop/orders/v1?locationRef="+loc+"&nextPageToken="+url.QueryEscape(tok), nil).wantError(t, 400, "invalid_request", "nextPageToken")
	ts.do(t, ts.other(), "GET", path+"&nextPageToken="+url.QueryEscape(tok), nil).wantError(t, 400, "invalid_request", "nextPageToken")
	// A different limit with the same token is fine.
	ts.ok(t, ts.basic(), 200, "GET", "/transactions/money/v1?limit=9&locationRef="+loc+"&nextPageToken="+url.QueryEscape(tok), nil)
}
