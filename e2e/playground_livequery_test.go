package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/internal/testsupport/queries"
	"github.com/workspacenet/facade/restclient"
)

// TestBrowserPlaygroundLiveQuery: in chromium at 1280x800, the playground
// runs the README dashboard marked @live over its WebSocket; a status
// change of one order made on the local REST service reaches the page as
// revision 2, the result pane shows the first result with the patch
// applied (equal to a fresh query's), and the Upstream calls panel lists
// the runs as parts named by revision, newest first: revision 2 with the
// order poll that saw the change, then revision 1, each row marked with
// its revision, and no part named by a string (where @defer labels go).
// $PLAYGROUND_SCREENSHOT, when set, is where the screenshot is kept.
func TestBrowserPlaygroundLiveQuery(t *testing.T) {
	node := requireBrowser(t)
	d := startLiveDemo(t)
	base, st, creds, loc, order, status := d.base, d.st, d.creds, d.loc, d.order, d.status
	query := strings.NewReplacer("query Dashboard($locationId: ID!) {", "query Dashboard @live {", "$locationId", `"`+loc+`"`).Replace(queries.Dashboard)
	if !strings.Contains(query, "@live") {
		t.Fatal("queries.Dashboard's first line changed: mark it @live here")
	}

	// Once the page's live query watches its sources, each polled once,
	// change one order (the page waits for it).
	ctx, cancel := context.WithCancel(t.Context())
	changed := make(chan bool, 1)
	go func() {
		for ctx.Err() == nil {
			if s := st.Live.Stats(); s.Subscriptions > 0 && s.Pollers > 0 && s.Ready == s.Pollers {
				if err := setOrder(st.UpstreamURL, order.ID, string(status)); err != nil {
					t.Error(err)
				}
				changed <- true
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		changed <- false
	}()
	shot := os.Getenv("PLAYGROUND_SCREENSHOT") // where to keep it, else a temp dir
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "playground-live.png")
	}
	var got struct {
		browserErrors
		Pane struct {
			Data      json.RawMessage
			Errors    []any
			Revision  int
			LiveQuery struct {
				UpdatesReceived int
				LastPatch       []map[string]any
			}
		}
		Operation string
		Revisions []struct{ Revision, Polls, Calls, CacheHits int }
		Rows      []struct {
			Route, Part string
			Revision    int
			Cached      bool
		}
		DeferParts []string
	}
	runNodeJSON(t, node, "playground_livequery.mjs", &got, base+"/", query, shot)
	cancel()
	if !<-changed {
		t.Fatal("the live query's sources were never all polled")
	}
	got.browserErrors.check(t)
	checkScreenshot(t, shot, 1280, 800)

	p := got.Pane
	if p.Revision != 2 || p.LiveQuery.UpdatesReceived != 1 || len(p.LiveQuery.LastPatch) == 0 || len(p.Errors) != 0 {
		t.Errorf("the result pane: revision %d, %d updates, last patch %v, errors %v; want revision 2 from one patch", p.Revision, p.LiveQuery.UpdatesReceived, p.LiveQuery.LastPatch, p.Errors)
	}
	shown := withoutCursors(decode(t, p.Data))
	if fresh := withoutCursors(freshData(t, base, creds, queries.Dashboard, map[string]any{"locationId": loc})); !reflect.DeepEqual(shown, fresh) {
		t.Errorf("the result pane's data differs from a fresh query's:\npane  %s\nfresh %s", mustJSON(shown), mustJSON(fresh))
	}
	if s := orderStatus(shown, order.ID); s != strings.ToUpper(string(status)) {
		t.Errorf("order %s is %q in the pane, want %q", order.ID, s, strings.ToUpper(string(status)))
	}
	if !strings.Contains(got.Operation, "(live, revision 2)") {
		t.Errorf("the panel's operation line %q", got.Operation)
	}

	// The runs, newest first; each run's rows are its polls, then its calls
	// (those the REST service answered and those the cache did).
	if len(got.Revisions) != 2 || got.Revisions[0].Revision != 2 || got.Revisions[1].Revision != 1 {
		t.Fatalf("the panel's parts %+v, want revision 2, then revision 1", got.Revisions)
	}
	polls, runRows := map[int][]string{}, map[int]int{}
	for _, r := range got.Rows {
		switch {
		case r.Revision == 0:
			t.Errorf("row %+v belongs to no revision", r)
		case r.Part == "poll":
			polls[r.Revision] = append(polls[r.Revision], r.Route)
		default:
			runRows[r.Revision]++
		}
	}
	for _, rev := range got.Revisions {
		if len(polls[rev.Revision]) != rev.Polls || runRows[rev.Revision] != rev.Calls+rev.CacheHits {
			t.Errorf("revision %d: %d poll rows and %d call rows drawn, the part says %d polls, %d calls and %d cache hits",
				rev.Revision, len(polls[rev.Revision]), runRows[rev.Revision], rev.Polls, rev.Calls, rev.CacheHits)
		}
	}
	if r1 := got.Revisions[1]; r1.Polls != 0 || r1.Calls == 0 {
		t.Errorf("revision 1 %+v, want the first run's calls and no poll", r1)
	}
	if !reflect.DeepEqual(polls[2], []string{"GET " + restclient.OpListOrders.Route}) {
		t.Errorf("revision 2's polls %v, want the orders' poll that saw the change", polls[2])
	}
	if len(got.DeferParts) != 0 {
		t.Errorf("parts named by a string %v: a live query's parts are its revisions", got.DeferParts)
	}
}
