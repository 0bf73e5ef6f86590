package graph_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
)

const txPage = `query($l: ID!, $first: Int, $after: String, $status: TransactionStatus, $type: TransactionType, $from: DateTime, $to: DateTime) {
  transactions(locationId: $l, first: $first, after: $after, status: $status, type: $type, createDate: {gte: $from, lte: $to}) {
    edges { cursor node { id status type createDate } }
    nodes { id }
    pageInfo { hasNextPage endCursor }
  }
}`

func ids(v any, path string) []string {
	var out []string
	collect(v, path, func(x any) { out = append(out, str(x, "id")) })
	return out
}

func TestPaging(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	creds := env.Bearer()
	rc, ctx := env.REST(t, creds)
	loc := env.ID(t, "location", 0)

	var all []string
	for tx, err := range rc.Transactions.AllTransactions(ctx, &restclient.TransactionListOptions{LocationRef: loc}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, tx.ID)
	}
	if len(all) <= 150 {
		t.Fatalf("the demo location has %d transactions; the test needs more than 150", len(all))
	}

	t.Run("walk by endCursor", func(t *testing.T) {
		d := mustRun(t, env, creds, txPage, map[string]any{"l": loc, "first": 100})
		expectCalls(t, env, calls{restclient.OpListTransactions: 1})
		single := ids(d, "transactions.nodes.*")
		if !equalStrings(single, all[:100]) {
			t.Fatal("first: 100 differs from the REST order")
		}
		var walked []string
		seen := map[string]bool{}
		var after any
		for step := 0; ; step++ {
			if step > len(all) {
				t.Fatal("the walk does not end")
			}
			d := mustRun(t, env, creds, txPage, map[string]any{"l": loc, "first": 10, "after": after})
			_, n := env.Calls()
			// A page's last edge resumes at the start of the next page, so
			// each step is exactly one call.
			if n != 1 {
				t.Fatalf("step %d: %d upstream calls", step, n)
			}
			page := ids(d, "transactions.nodes.*")
			edges := ids(d, "transactions.edges.*.node")
			if !equalStrings(page, edges) {
				t.Fatalf("nodes and edges differ: %v %v", page, edges)
			}
			for _, id := range page {
				if seen[id] {
					t.Fatalf("step %d: %s seen twice", step, id)
				}
				seen[id] = true
			}
			walked = append(walked, page...)
			hasNext, _ := get(d, "transactions.pageInfo.hasNextPage").(bool)
			if str(d, "transactions.pageInfo.endCursor") != str(d, "transactions.edges.9.cursor") && hasNext {
				t.Fatalf("endCursor is not the last edge's cursor")
			}
			if !hasNext {
				if len(page) == 0 || len(page) > 10 {
					t.Fatalf("last page has %d items", len(page))
				}
				break
			}
			if len(page) != 10 {
				t.Fatalf("step %d: %d items with hasNextPage", step, len(page))
			}
			after = str(d, "transactions.pageInfo.endCursor")
		}
		if !equalStrings(walked, all) {
			t.Fatalf("walk saw %d items, REST has %d (or the order differs)", len(walked), len(all))
		}
		if !equalStrings(walked[:100], single) {
			t.Fatal("walk order differs from first: 100")
		}
	})

	// Relay's PageInfo: hasPreviousPage and startCursor on a first page, on
	// a following one (after the first page's endCursor, and after a cursor
	// in the middle of a page) and on an empty one past the end.
	t.Run("start of a page", func(t *testing.T) {
		const q = `query($l: ID!, $first: Int, $after: String) {
  transactions(locationId: $l, first: $first, after: $after) {
    edges { cursor node { id } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`
		check := func(d any, wantIDs []string, wantPrev, wantNext bool) {
			t.Helper()
			if got := ids(d, "transactions.edges.*.node"); !equalStrings(got, wantIDs) {
				t.Fatalf("edges %v, want %v", got, wantIDs)
			}
			info := get(d, "transactions.pageInfo")
			if get(info, "hasPreviousPage") != wantPrev || get(info, "hasNextPage") != wantNext {
				t.Fatalf("pageInfo %v: want hasPreviousPage %v, hasNextPage %v", pretty(info), wantPrev, wantNext)
			}
			n := len(wantIDs)
			if n == 0 {
				if get(info, "startCursor") != nil || get(info, "endCursor") != nil || !selected(info, "startCursor") {
					t.Fatalf("empty page: pageInfo %v, want null cursors", pretty(info))
				}
				return
			}
			if s := str(info, "startCursor"); s == "" || s != str(d, "transactions.edges.0.cursor") {
				t.Fatalf("startCursor %q is not the first edge's cursor", s)
			}
			if e := str(info, "endCursor"); e != str(d, "transactions.edges."+strconv.Itoa(n-1)+".cursor") {
				t.Fatalf("endCursor %q is not the last edge's cursor", e)
			}
		}
		first := mustRun(t, env, creds, q, map[string]any{"l": loc, "first": 5})
		expectCalls(t, env, calls{restclient.OpListTransactions: 1})
		check(first, all[:5], false, true)

		next := mustRun(t, env, creds, q, map[string]any{"l": loc, "first": 5, "after": str(first, "transactions.pageInfo.endCursor")})
		expectCalls(t, env, calls{restclient.OpListTransactions: 1})
		check(next, all[5:10], true, true)

		mid := mustRun(t, env, creds, q, map[string]any{"l": loc, "first": 3, "after": str(first, "transactions.edges.1.cursor")})
		check(mid, all[2:5], true, true)

		whole := mustRun(t, env, creds, q, map[string]any{"l": loc, "first": 500})
		check(whole, all, false, false)
		past := mustRun(t, env, creds, q, map[string]any{"l": loc, "first": 5, "after": str(whole, "transactions.pageInfo.endCursor")})
		check(past, nil, true, false)
	})

	t.Run("resume mid-page", func(t *testing.T) {
		d := mustRun(t, env, creds, txPage, map[string]any{"l": loc, "first": 10})
		c3 := str(d, "transactions.edges.3.cursor")
		d = mustRun(t, env, creds, txPage, map[string]any{"l": loc, "first": 5, "after": c3})
		expectCalls(t, env, calls{restclient.OpListTransactions: 1})
		if got := ids(d, "transactions.nodes.*"); !equalStrings(got, all[4:9]) {
			t.Fatalf("after edges[3]: %v, want %v", got, all[4:9])
		}
		// Across the page end: 4..13 needs the rest of that page and the next.
		d = mustRun(t, env, creds, txPage, map[string]any{"l": loc, "first": 10, "after": c3})
		expectCalls(t, env, calls{restclient.OpListTransactions: 2})
		if got := ids(d, "transactions.nodes.*"); !equalStrings(got, all[4:14]) {
			t.Fatalf("after edges[3]: %v, want %v", got, all[4:14])
		}
		if get(d, "transactions.pageInfo.hasNextPage") != true {
			t.Fatal("hasNextPage false in the middle")
		}
	})

	t.Run("first above 100", func(t *testing.T) {
		d := mustRun(t, env, creds, txPage, map[string]any{"l": loc, "first": 150})
		expectCalls(t, env, calls{restclient.OpListTransactions: 2}) // ceil(150/100)
		if got := ids(d, "transactions.nodes.*"); !equalStrings(got, all[:150]) {
			t.Fatalf("first: 150 gave %d items", len(got))
		}
		if get(d, "transactions.pageInfo.hasNextPage") != true {
			t.Fatal("hasNextPage false with items left")
		}
		d = mustRun(t, env, creds, txPage, map[string]any{"l": loc, "first": 500})
		expectCalls(t, env, calls{restclient.OpListTransactions: int64((len(all) + 99) / 100)})
		if got := ids(d, "transactions.nodes.*"); !equalStrings(got, all) {
			t.Fatalf("first: 500 gave %d items, want %d", len(got), len(all))
		}
		if get(d, "transactions.pageInfo.hasNextPage") != false {
			t.Fatal("hasNextPage true on the last page")
		}
	})

	t.Run("cursor of another list", func(t *testing.T) {
		d := mustRun(t, env, creds, txPage, map[string]any{"l": loc, "first": 3, "status": "SUCCEEDED"})
		c := str(d, "transactions.pageInfo.endCursor")
		cases := []struct {
			name  string
			query string
			vars  map[string]any
		}{
			{"other filter", txPage, map[string]any{"l": loc, "first": 3, "after": c}},
			{"other location", txPage, map[string]any{"l": env.ID(t, "location", 1), "first": 3, "after": c, "status": "SUCCEEDED"}},
			{"orders", `query($l: ID!, $a: String) { orders(locationId: $l, after: $a) { nodes { id } } }`, map[string]any{"l": loc, "a": c}},
			{"credit notes", `query($l: ID!, $a: String) { location(id: $l) { creditNotes(after: $a) { nodes { id } } } }`, map[string]any{"l": loc, "a": c}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := run(t, env, creds, tc.query, tc.vars)
				e := expectErr(t, r, "BAD_USER_INPUT")
				expectCalls(t, env, calls{})
				if e.Extensions["field"] != "after" {
					t.Errorf("field %v", e.Extensions["field"])
				}
			})
		}
		// The same list and filters accept it.
		d = mustRun(t, env, creds, txPage, map[string]any{"l": loc, "first": 3, "after": c, "status": "SUCCEEDED"})
		if len(list(d, "transactions.nodes")) != 3 {
			t.Fatalf("resume with the same filters: %s", pretty(d))
		}
		collect(d, "transactions.edges.*.node", func(n any) {
			if str(n, "status") != "SUCCEEDED" {
				t.Errorf("status %s", str(n, "status"))
			}
		})
	})

	t.Run("filters", func(t *testing.T) {
		from, to := "2025-11-01T00:00:00Z", "2025-12-15T00:00:00Z"
		fromT, _ := time.Parse(time.RFC3339, from)
		toT, _ := time.Parse(time.RFC3339, to)
		cases := []struct {
			vars  map[string]any
			rest  restclient.TransactionListOptions
			check func(n any) bool
		}{
			{map[string]any{"status": "SUCCEEDED"}, restclient.TransactionListOptions{Status: restclient.TransactionStatusSucceeded},
				func(n any) bool { return str(n, "status") == "SUCCEEDED" }},
			{map[string]any{"type": "CREDIT_PACKAGE"}, restclient.TransactionListOptions{Type: restclient.TransactionTypeCreditPackage},
				func(n any) bool { return str(n, "type") == "CREDIT_PACKAGE" }},
			{map[string]any{"status": "FAILED", "type": "BOOKING"}, restclient.TransactionListOptions{Status: restclient.TransactionStatusFailed, Type: restclient.TransactionTypeBooking},
				func(n any) bool { return str(n, "status") == "FAILED" && str(n, "type") == "BOOKING" }},
			{map[string]any{"from": from, "to": to}, restclient.TransactionListOptions{CreateDate: restclient.DateRange{GTE: fromT, LTE: toT}},
				func(n any) bool {
					c, err := time.Parse(time.RFC3339, str(n, "createDate"))
					return err == nil && !c.Before(fromT) && !c.After(toT)
				}},
		}
		for _, c := range cases {
			vars := map[string]any{"l": loc, "first": 500}
			for k, v := range c.vars {
				vars[k] = v
			}
			d := mustRun(t, env, creds, txPage, vars)
			nodes := list(d, "transactions.edges")
			if len(nodes) == 0 || len(nodes) == len(all) {
				t.Fatalf("filter %v: %d of %d transactions", c.vars, len(nodes), len(all))
			}
			for _, e := range nodes {
				if !c.check(get(e, "node")) {
					t.Errorf("filter %v let through %v", c.vars, get(e, "node"))
				}
			}
			opts := c.rest
			opts.LocationRef = loc
			var want []string
			for tx, err := range rc.Transactions.AllTransactions(ctx, &opts) {
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, tx.ID)
			}
			if got := ids(d, "transactions.nodes.*"); !equalStrings(got, want) {
				t.Errorf("filter %v: %d items, REST %d", c.vars, len(got), len(want))
			}
		}
		// One range written with other offsets is the same page: one call,
		// and the cursors of one list resume the other.
		d := mustRun(t, env, creds, `query($l: ID!, $from: DateTime, $to: DateTime, $from2: DateTime, $to2: DateTime) {
  a: transactions(locationId: $l, first: 5, createDate: {gte: $from, lte: $to}) { nodes { id } pageInfo { endCursor } }
  b: transactions(locationId: $l, first: 5, createDate: {gte: $from2, lte: $to2}) { nodes { id } }
}`, map[string]any{"l": loc, "from": from, "to": to, "from2": "2025-11-01T01:00:00+01:00", "to2": "2025-12-14T19:00:00.000-05:00"})
		expectCalls(t, env, calls{restclient.OpListTransactions: 1})
		if a, b := ids(d, "a.nodes.*"), ids(d, "b.nodes.*"); len(a) != 5 || !equalStrings(a, b) {
			t.Errorf("same range, other offsets: %v and %v", a, b)
		}
		ten := ids(mustRun(t, env, creds, txPage, map[string]any{"l": loc, "first": 10, "from": from, "to": to}), "transactions.nodes.*")
		next := mustRun(t, env, creds, txPage, map[string]any{"l": loc, "first": 5, "from": "2025-11-01T01:00:00+01:00", "to": "2025-12-14T19:00:00.000-05:00", "after": str(d, "a.pageInfo.endCursor")})
		if got := ids(next, "transactions.nodes.*"); len(ten) != 10 || !equalStrings(got, ten[5:]) {
			t.Errorf("resumed with other offsets: %v, want the second half of %v", got, ten)
		}
		// Orders by status.
		d = mustRun(t, env, creds, `query($l: ID!) { orders(locationId: $l, status: COMPLETED, first: 100) { nodes { id status } } }`, map[string]any{"l": loc})
		expectCalls(t, env, calls{restclient.OpListOrders: 1})
		nodes := list(d, "orders.nodes")
		if len(nodes) == 0 {
			t.Fatal("no completed orders")
		}
		for _, n := range nodes {
			if str(n, "status") != "COMPLETED" {
				t.Errorf("order status %s", str(n, "status"))
			}
		}
	})
}

// TestPageInfoOfEveryConnection: every connection (credit notes, orders,
// transactions, redemptions) answers Relay's pageInfo, on a first page and
// on the page after its endCursor.
func TestPageInfoOfEveryConnection(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	creds := env.Bearer()
	const sel = `{ edges { cursor } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }`
	const q = `query($l: ID!, $c: ID!, $a1: String, $a2: String, $a3: String, $a4: String) {
  location(id: $l) {
    creditNotes(first: 2, after: $a1) ` + sel + `
    orders(first: 2, after: $a2) ` + sel + `
    transactions(first: 2, after: $a3) ` + sel + `
  }
  redemptions(couponId: $c, first: 2, after: $a4) ` + sel + `
}`
	paths := []string{"location.creditNotes", "location.orders", "location.transactions", "redemptions"}
	vars := map[string]any{"l": env.ID(t, "location", 0), "c": env.ID(t, "coupon", 0)}
	for _, page := range []string{"first", "second"} {
		d := mustRun(t, env, creds, q, vars)
		expectCalls(t, env, calls{restclient.OpListCreditNotes: 1, restclient.OpListOrders: 1, restclient.OpListTransactions: 1, restclient.OpListRedemptions: 1})
		for i, p := range paths {
			info := get(d, p+".pageInfo")
			if len(list(d, p+".edges")) != 2 || get(info, "hasNextPage") != true {
				t.Fatalf("%s page of %s: %s (the demo data has more than 4 of each)", page, p, pretty(get(d, p)))
			}
			if get(info, "hasPreviousPage") != (page == "second") {
				t.Errorf("%s page of %s: hasPreviousPage %v", page, p, get(info, "hasPreviousPage"))
			}
			if str(info, "startCursor") != str(d, p+".edges.0.cursor") || str(info, "endCursor") != str(d, p+".edges.1.cursor") {
				t.Errorf("%s page of %s: cursors %s", page, p, pretty(get(d, p)))
			}
			vars["a"+strconv.Itoa(i+1)] = str(info, "endCursor")
		}
	}
}

// TestCursorsShownThroughFragmentsAndDirectives: a connection's cursors are
// sealed only when the query selects edges or pageInfo; selected through a
// fragment, an inline fragment or under a directive they are still there
// and resume the list.
func TestCursorsShownThroughFragmentsAndDirectives(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	creds := env.Bearer()
	loc := env.ID(t, "location", 0)
	all := ids(mustRun(t, env, creds, `query($l: ID!) { transactions(locationId: $l, first: 3) { nodes { id } } }`,
		map[string]any{"l": loc}), "transactions.nodes.*")
	if len(all) != 3 {
		t.Fatalf("%d transactions, want 3", len(all))
	}
	for name, q := range map[string]string{
		"inline fragment": `query($l: ID!) { transactions(locationId: $l, first: 2) { nodes { id } ... on TransactionConnection { pageInfo { endCursor } } } }`,
		"named fragment":  `query($l: ID!) { transactions(locationId: $l, first: 2) { nodes { id } ...P } } fragment P on TransactionConnection { pageInfo { endCursor } }`,
		"directive":       `query($l: ID!) { transactions(locationId: $l, first: 2) { nodes { id } pageInfo @include(if: true) { endCursor } } }`,
		"edges":           `query($l: ID!) { transactions(locationId: $l, first: 2) { nodes { id } edges { cursor } pageInfo { endCursor } } }`,
	} {
		d := mustRun(t, env, creds, q, map[string]any{"l": loc})
		end := str(d, "transactions.pageInfo.endCursor")
		if end == "" || (name == "edges" && str(d, "transactions.edges.1.cursor") != end) {
			t.Fatalf("%s: %s", name, pretty(d))
		}
		next := mustRun(t, env, creds, `query($l: ID!, $a: String) { transactions(locationId: $l, first: 1, after: $a) { nodes { id } } }`,
			map[string]any{"l": loc, "a": end})
		if got := ids(next, "transactions.nodes.*"); len(got) != 1 || got[0] != all[2] {
			t.Errorf("%s: after endCursor %v, want [%s]", name, got, all[2])
		}
	}
}
