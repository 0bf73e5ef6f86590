package restserver

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver/wire"
)

func TestDataSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rs.db")
	cfg := Config{DBPath: path, DemoScale: 1}

	ts := newTestServerConfig(t, cfg)
	var out struct{ Visit wire.Visit }
	ts.ok(t, ts.bearer(), 201, "POST", restclient.OpCreateVisit.Route, map[string]any{"visit": map[string]any{
		"date": "2026-03-01T10:00:00Z", "locationRef": ts.Manifest.IDs["location"][0], "visitor": map[string]any{"email": "p@example.com", "name": "P"}}}).json(t, &out)
	loc := ts.Manifest.IDs["location"][0]
	p := getPage(t, ts, ts.basic(), "/transactions/money/v1?limit=10&locationRef="+loc, "transactions")
	second := getPage(t, ts, ts.basic(), "/transactions/money/v1?limit=10&locationRef="+loc+"&nextPageToken="+url.QueryEscape(p.next), "transactions")
	m1 := ts.Manifest
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}

	ts2 := newTestServerConfig(t, cfg)
	var got struct{ Visit wire.Visit }
	ts2.ok(t, ts2.bearer(), 200, "GET", "/visitors/visits/v1/"+out.Visit.ID, nil).json(t, &got)
	if !reflect.DeepEqual(got.Visit.Visitor, out.Visit.Visitor) || *got.Visit.Code != *out.Visit.Code {
		t.Fatalf("visit after restart = %+v", got.Visit)
	}
	// The demo data is not generated twice, and a page token from before
	// the restart still works (the paging secret is stored).
	if ts2.Manifest.NetworkID != m1.NetworkID || !reflect.DeepEqual(ts2.Manifest.IDs["transaction"], m1.IDs["transaction"]) ||
		len(ts2.Manifest.IDs["visit"]) != len(m1.IDs["visit"])+1 {
		t.Fatal("demo data changed across a restart")
	}
	again := getPage(t, ts2, ts2.basic(), "/transactions/money/v1?limit=10&locationRef="+loc+"&nextPageToken="+url.QueryEscape(p.next), "transactions")
	if !reflect.DeepEqual(again.ids, second.ids) {
		t.Fatal("page token gives another page after a restart")
	}
	var journal string
	ts2.db.read.QueryRow(`PRAGMA journal_mode`).Scan(&journal)
	if journal != "wal" {
		t.Fatalf("journal_mode = %q", journal)
	}
}

func TestDemoDataIsDeterministic(t *testing.T) {
	a, err := New(context.Background(), Config{DBPath: ":memory:", DemoScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := New(context.Background(), Config{DBPath: ":memory:", DemoScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ma, _ := a.Manifest()
	mb, _ := b.Manifest()
	if !reflect.DeepEqual(ma, mb) {
		t.Fatal("two demo databases differ")
	}
	var da, db string
	a.db.read.QueryRow(`SELECT group_concat(doc) FROM (SELECT doc FROM transactions ORDER BY rowid)`).Scan(&da)
	b.db.read.QueryRow(`SELECT group_concat(doc) FROM (SELECT doc FROM transactions ORDER BY rowid)`).Scan(&db)
	if da != db || da == "" {
		t.Fatal("transactions differ")
	}
	if got := ma.NetworkID; got != "fc37738e-179d-443d-bd55-efaaaae9e4ec" {
		t.Fatalf("demo network id %s changed; update the README if this is intended", got)
	}
	if len(ma.IDs["location"]) != 3 || len(ma.OtherNetworks) != 1 || len(ma.OtherNetworks[0].IDs["location"]) != 1 {
		t.Fatalf("locations: %d, other networks %d", len(ma.IDs["location"]), len(ma.OtherNetworks))
	}
	// Scale multiplies the data.
	c, err := New(context.Background(), Config{DBPath: ":memory:", DemoScale: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mc, _ := c.Manifest()
	if len(mc.IDs["transaction"]) < 2*len(ma.IDs["transaction"])-20 {
		t.Fatalf("scale 2: %d transactions, scale 1: %d", len(mc.IDs["transaction"]), len(ma.IDs["transaction"]))
	}
}

func TestManifestWithoutDemo(t *testing.T) {
	s, err := New(context.Background(), Config{DBPath: ":memory:"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Manifest(); err == nil {
		t.Fatal("Manifest without demo data succeeded")
	}
}

// TestMigrationBackfillsUserEmail: a database made before migration 002
// (users without the email column) gets the column filled from each user's
// doc when it is opened, so its members are recognised as visitors.
func TestMigrationBackfillsUserEmail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rs.db")
	cfg := Config{DBPath: path, DemoScale: 1}
	ts := newTestServerConfig(t, cfg)
	var visit struct {
		Visit struct {
			UserRefHost string `json:"userRefHost"`
			UserHost    struct {
				Email string `json:"email"`
			} `json:"userHost"`
		} `json:"visit"`
	}
	ts.ok(t, ts.basic(), 200, "GET", "/visitors/visits/v1/"+ts.Manifest.IDs["visit"][0], nil).json(t, &visit)
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	// Back to the schema before 002.
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`DROP INDEX users_email`, `ALTER TABLE users DROP COLUMN email`, `DELETE FROM schema_version WHERE version = 2`} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	db.Close()

	ts2 := newTestServerConfig(t, cfg)
	var out struct {
		Request wire.VisitRequest `json:"request"`
	}
	ts2.ok(t, ts2.basic(), 201, "POST", restclient.OpCreateVisitRequest.Route, map[string]any{"request": map[string]any{
		"locationRef": ts2.Manifest.IDs["location"][0], "userRefHost": ts2.Manifest.IDs["user"][0],
		"visitor": map[string]any{"email": strings.ToUpper(visit.Visit.UserHost.Email), "name": "Member"}}}).json(t, &out)
	if out.Request.UserRefVisitor == nil || *out.Request.UserRefVisitor != visit.Visit.UserRefHost {
		t.Fatalf("userRefVisitor = %v, want %s (the user whose email the visitor gave)", out.Request.UserRefVisitor, visit.Visit.UserRefHost)
	}
	var stranger struct {
		Request wire.VisitRequest `json:"request"`
	}
	ts2.ok(t, ts2.basic(), 201, "POST", restclient.OpCreateVisitRequest.Route, map[string]any{"request": map[string]any{
		"locationRef": ts2.Manifest.IDs["location"][0], "userRefHost": ts2.Manifest.IDs["user"][0],
		"visitor": map[string]any{"email": "stranger@example.com", "name": "Stranger"}}}).json(t, &stranger)
	if stranger.Request.ID == "" || stranger.Request.UserRefVisitor != nil {
		t.Fatalf("a visitor who is no user: %+v", stranger.Request)
	}
}
