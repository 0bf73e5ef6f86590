package graph_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/stack"
)

// rewriteCreateDates wraps the local REST service: in its answers to the
// transaction list, the createDate of the i-th transaction becomes
// forms[i](the date it sent), while forms is set.
type rewriteCreateDates struct {
	forms atomic.Pointer[[]func(string) string]
}

func (rw *rewriteCreateDates) middleware(next http.Handler) http.Handler {
	return rewriteTransactionPages(next, func(txs []any) bool {
		forms := rw.forms.Load()
		if forms == nil {
			return false
		}
		for i, f := range *forms {
			if i < len(txs) {
				tx := txs[i].(map[string]any)
				tx["createDate"] = f(tx["createDate"].(string))
			}
		}
		return true
	})
}

// TestTimestampsReadLeniently: the upstream's timestamps in any of the ISO
// 8601 forms are read, and one unreadable timestamp costs only its own
// field: null with UPSTREAM_INVALID on its path, the rest of the page intact.
func TestTimestampsReadLeniently(t *testing.T) {
	rw := &rewriteCreateDates{}
	env := testenv.New(t, testenv.Options{Config: func(c *stack.Config) { c.UpstreamMiddleware = rw.middleware }})
	creds := env.Bearer()
	loc := env.ID(t, "location", 0)
	rc, ctx := env.REST(t, creds)
	want, _, err := rc.Transactions.ListTransactions(ctx, &restclient.TransactionListOptions{LocationRef: loc, ListOptions: restclient.ListOptions{Limit: 6}})
	if err != nil || len(want) != 6 {
		t.Fatalf("REST page: %d transactions, %v", len(want), err)
	}
	utc := func(tx *restclient.Transaction) string { return tx.CreateDate.UTC().Format(time.RFC3339Nano) }
	for _, tx := range want {
		// The rewrites below start from the service's own form.
		if !strings.HasSuffix(utc(tx), "Z") || strings.Contains(utc(tx), ".") {
			t.Fatalf("createDate %s: the test expects whole seconds in Z form", utc(tx))
		}
	}
	day := want[4].CreateDate.UTC().Format(time.DateOnly)
	rw.forms.Store(&[]func(string) string{
		func(s string) string { return strings.TrimSuffix(s, "Z") + "+0000" },
		func(string) string { return "last tuesday" },
		func(s string) string { return strings.TrimSuffix(s, "Z") + ".123456789012+00:00" },
		func(s string) string { return strings.ToLower(s) },
		func(s string) string { return s[:len(time.DateOnly)] },
		func(s string) string { return strings.TrimSuffix(s, "Z") }, // no zone: UTC
	})

	r := run(t, env, creds, `query($l: ID!) { transactions(locationId: $l, first: 6) {
  nodes { id amount status createDate }
  pageInfo { hasNextPage }
} }`, map[string]any{"l": loc})
	expectCalls(t, env, calls{restclient.OpListTransactions: 1})
	var d any
	if err := json.Unmarshal(r.Data, &d); err != nil {
		t.Fatal(err)
	}
	nodes := list(d, "transactions.nodes")
	if len(nodes) != 6 || get(d, "transactions.pageInfo.hasNextPage") != true {
		t.Fatalf("the page is not whole: %s", pretty(d))
	}
	wantDates := []any{
		utc(want[0]), nil, strings.TrimSuffix(utc(want[2]), "Z") + ".123456789Z",
		utc(want[3]), day + "T00:00:00Z", utc(want[5]),
	}
	for i, n := range nodes {
		if str(n, "id") != want[i].ID || get(n, "amount") != *want[i].Amount || str(n, "status") == "" {
			t.Errorf("node %d: %v, want transaction %s intact", i, n, want[i].ID)
		}
		if got := get(n, "createDate"); got != wantDates[i] {
			t.Errorf("node %d: createDate %v, want %v", i, got, wantDates[i])
		}
	}
	e := expectErr(t, r, errcode.UpstreamInvalid)
	if path, _ := json.Marshal(e.Path); string(path) != `["transactions","nodes",1,"createDate"]` {
		t.Errorf("error path %s, want the one unreadable field", path)
	}
	if strings.Contains(e.Message, "tuesday") {
		t.Errorf("the message shows the upstream's value: %q", e.Message)
	}
}
