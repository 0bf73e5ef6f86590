package restserver

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/workspacenet/facade/restclient"
	"github.com/workspacenet/facade/restserver/wire"
)

// invoiceIn inserts an issued invoice of one item (3 x 40) in a location of
// network, and returns the invoice's and the item's ids.
func invoiceIn(t *testing.T, ts *testServer, network, loc string) (string, string) {
	t.Helper()
	ctx := context.Background()
	inv, item := newID(), newID()
	it := wire.InvoiceItem{ID: item, InvoiceRef: new(inv), LocationRef: new(loc), Type: new("custom")}
	itemAmounts(&it, 40, 3, 0, 20)
	doc := wire.Invoice{ID: inv, Number: new("T-9"), Status: new("issued"), CurrencyCode: new("EUR"), LocationRef: new(loc),
		TotalAmount: new(120.0), AmountDue: new(120.0), AmountRemaining: new(120.0), AmountPaid: new(0.0)}
	err := ts.db.tx(ctx, func(tx *sql.Tx) error {
		if err := insert(ctx, tx, record{table: "invoices", id: inv, network: network, createDate: time.Now(),
			cols: map[string]any{"location_id": loc, "status": "issued"}, doc: doc}); err != nil {
			return err
		}
		return insert(ctx, tx, record{table: "invoice_items", id: item, network: network, createDate: time.Now(),
			cols: map[string]any{"location_id": loc, "invoice_id": inv, "position": 0}, doc: it})
	})
	if err != nil {
		t.Fatal(err)
	}
	return inv, item
}

// readableLayers returns what a client can read out of a token: the token,
// and every base64 decoding of it or of its '.'-separated parts.
func readableLayers(tok string) []string {
	out := []string{tok}
	for _, part := range append([]string{tok}, strings.Split(tok, ".")...) {
		for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.URLEncoding, base64.StdEncoding, base64.RawStdEncoding} {
			if b, err := enc.DecodeString(part); err == nil {
				out = append(out, string(b))
			}
		}
	}
	return out
}

var (
	numberRE = regexp.MustCompile(`\d{2,}`)
	// jsonKeyRE is a JSON object key, as in {"i":148}: random bytes
	// practically never hold one.
	jsonKeyRE = regexp.MustCompile(`"[A-Za-z_]{1,16}"\s*:`)
)

// TestPageTokensRevealNoCounter: a tenant's page tokens, taken around
// another tenant's writes, show nothing: no JSON, no number, no id, a fixed
// length, and a different ciphertext each time; the count of the other
// tenant's new credit notes cannot be read from them (it could: the token
// carried the table's global rowid).
func TestPageTokensRevealNoCounter(t *testing.T) {
	ts := newTestServer(t)
	other := ts.Manifest.OtherNetworks[0]
	mainInv, mainItem := invoiceIn(t, ts, ts.Manifest.NetworkID, ts.Manifest.IDs["location"][0])
	otherInv, otherItem := invoiceIn(t, ts, other.NetworkID, other.IDs["location"][0])
	note := func(a auth, inv, item string) {
		ts.ok(t, a, 201, "POST", restclient.OpListCreditNotes.Route, creditNoteBody(inv, "other", map[string]any{"invoiceItemRef": item, "amount": 1}))
	}
	list := "/billing/credit_notes/v1?invoiceRef=" + mainInv
	token := func(limit int) string {
		t.Helper()
		p := getPage(t, ts, ts.basic(), fmt.Sprintf("%s&limit=%d", list, limit), "creditNotes")
		if p.next == "" {
			t.Fatalf("limit %d: no nextPageToken", limit)
		}
		return p.next
	}

	note(ts.basic(), mainInv, mainItem) // A
	note(ts.basic(), mainInv, mainItem) // B
	afterB := token(1)
	afterBAgain := token(1)
	const others = 5
	for range others {
		note(ts.other(), otherInv, otherItem)
	}
	note(ts.basic(), mainInv, mainItem) // C
	afterC := token(1)
	afterBLater := token(2)

	// The attack, literally: the positions of B and C, read from the
	// tokens, differ by the other tenant's notes plus one.
	if b, c := oldTokenRowid(afterB), oldTokenRowid(afterC); b >= 0 && c >= 0 {
		t.Fatalf("tokens carry a global counter: %d then %d, so another tenant created %d credit notes in between", b, c, c-b-1)
	}
	toks := []string{afterB, afterBAgain, afterC, afterBLater}
	for _, tok := range toks {
		for _, l := range readableLayers(tok) {
			if json.Valid([]byte(l)) || jsonKeyRE.MatchString(l) {
				t.Fatalf("token %s decodes to readable JSON: %q", tok, l)
			}
			if l != tok && numberRE.MatchString(l) && strings.Trim(l, "0123456789") == "" {
				t.Fatalf("token %s decodes to a number: %q", tok, l)
			}
			for _, id := range []string{ts.Manifest.NetworkID, mainInv, mainItem} {
				if strings.Contains(l, id) {
					t.Fatalf("token %s reveals the id %s", tok, id)
				}
			}
		}
		if len(tok) != len(afterB) {
			t.Errorf("token lengths vary with the position: %d and %d", len(tok), len(afterB))
		}
	}
	// The same position gives unrelated ciphertexts, before and after the
	// other tenant's writes alike.
	if afterB == afterBAgain || afterB == afterBLater {
		t.Error("the same position gave the same token twice")
	}
	// Every one of them still resumes exactly after its item.
	full := getPage(t, ts, ts.basic(), list+"&limit=10", "creditNotes").ids // C, B, A
	if len(full) != 3 {
		t.Fatalf("%d notes on the invoice, want 3", len(full))
	}
	for tok, want := range map[string][]string{afterB: full[2:], afterBAgain: full[2:], afterBLater: full[2:], afterC: full[1:]} {
		got := getPage(t, ts, ts.basic(), list+"&limit=10&nextPageToken="+url.QueryEscape(tok), "creditNotes").ids
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("resuming gave %v, want %v", got, want)
		}
	}
}

// oldTokenRowid reads the rowid out of a token of the former format
// (base64url(JSON) "." signature), -1 when it has none.
func oldTokenRowid(tok string) int64 {
	body, _, _ := strings.Cut(tok, ".")
	b, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return -1
	}
	var p struct {
		I *int64 `json:"i"`
	}
	if json.Unmarshal(b, &p) != nil || p.I == nil {
		return -1
	}
	return *p.I
}

// TestPageTokenAlteredOrForgedIs400: every character of a token changed,
// every byte it encodes with a bit flipped, or a token made up, is a 400.
func TestPageTokenAlteredOrForgedIs400(t *testing.T) {
	ts := newTestServer(t)
	loc := ts.Manifest.IDs["location"][0]
	list := "/billing/credit_notes/v1?limit=3&locationRef=" + loc
	tok := getPage(t, ts, ts.basic(), list, "creditNotes").next
	if tok == "" {
		t.Fatal("no nextPageToken")
	}
	get := func(bad string) response {
		return ts.do(t, ts.basic(), "GET", list+"&nextPageToken="+url.QueryEscape(bad), nil)
	}
	for i := range len(tok) {
		b := []byte(tok)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		get(string(b)).wantError(t, 400, "invalid_request", "nextPageToken")
	}
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		t.Fatalf("token %q is not one base64url string: %v", tok, err)
	}
	for i := range raw {
		b := []byte(string(raw))
		b[i] ^= 1 << (i % 8)
		get(base64.RawURLEncoding.EncodeToString(b)).wantError(t, 400, "invalid_request", "nextPageToken")
	}
	// Made up: a position the client would like, in the old format and as
	// random bytes of the right length.
	forged := base64.RawURLEncoding.EncodeToString([]byte(`{"r":"GET /billing/credit_notes/v1","n":"`+ts.Manifest.NetworkID+`","f":"locationRef=`+loc+`","d":1,"i":1}`)) + ".AAAA"
	get(forged).wantError(t, 400, "invalid_request", "nextPageToken")
	get(strings.Repeat("A", len(tok))).wantError(t, 400, "invalid_request", "nextPageToken")
	// The genuine token still works.
	ts.ok(t, ts.basic(), 200, "GET", list+"&nextPageToken="+url.QueryEscape(tok), nil)
}

// TestPagingTieBreakUnchanged: items of equal create_date keep the list
// order (create_date DESC, rowid DESC) though tokens name the last item by
// its id, which sorts otherwise: every limit walks the SQL order, once each.
func TestPagingTieBreakUnchanged(t *testing.T) {
	ts := newTestServer(t)
	inv, item := invoiceIn(t, ts, ts.Manifest.NetworkID, ts.Manifest.IDs["location"][0])
	var out struct{ CreditNote map[string]any }
	ts.ok(t, ts.basic(), 201, "POST", restclient.OpListCreditNotes.Route, creditNoteBody(inv, "other", map[string]any{"invoiceItemRef": item, "amount": 1})).json(t, &out)
	same := time.Date(2031, 3, 4, 5, 6, 7, 0, time.UTC)
	ctx := context.Background()
	for range 8 {
		doc := out.CreditNote
		doc["id"] = newID()
		err := ts.db.tx(ctx, func(tx *sql.Tx) error {
			return insert(ctx, tx, record{table: "credit_notes", id: doc["id"].(string), network: ts.Manifest.NetworkID, createDate: same,
				cols: map[string]any{"location_id": ts.Manifest.IDs["location"][0], "invoice_id": inv}, doc: doc})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	rows, err := ts.db.read.Query(`SELECT id FROM credit_notes WHERE network_id = ? AND invoice_id = ? ORDER BY create_date DESC, rowid DESC`, ts.Manifest.NetworkID, inv)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for rows.Next() {
		var id string
		rows.Scan(&id)
		want = append(want, id)
	}
	rows.Close()
	if len(want) != 9 {
		t.Fatalf("%d notes", len(want))
	}
	for _, limit := range []int{1, 2, 3, 4, 100} {
		got := walk(t, ts, fmt.Sprintf("/billing/credit_notes/v1?invoiceRef=%s&limit=%d", inv, limit), "creditNotes", nil)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("limit %d: walked %v, want %v", limit, got, want)
		}
	}
}
