package restserver

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/workspacenet/facade/restclient"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sample is one request per operation, valid for the demo network.
type sample struct {
	route, method, path string
	body                any
	family              string // scope family
	write               bool   // needs the full scope
}

func samples(ts *testServer) []sample {
	ids := ts.Manifest.IDs
	loc := ids["location"][0]
	visit := map[string]any{"visit": map[string]any{"date": "2026-02-01T10:00:00Z", "locationRef": loc, "visitor": map[string]any{"email": "a@example.com", "name": "A"}}}
	return []sample{
		{restclient.OpCreateCreditNote.Pattern(), "POST", restclient.OpListCreditNotes.Route, map[string]any{"creditNote": map[string]any{"invoiceRef": ids["invoice"][0], "reason": "other",
			"lines": []any{map[string]any{"invoiceItemRef": ids["invoiceItem"][0], "amount": 0.01}}}}, "invoices", true},
		{restclient.OpListCreditNotes.Pattern(), "GET", "/billing/credit_notes/v1?locationRef=" + loc, nil, "invoices", false},
		{restclient.OpListInvoiceItems.Pattern(), "GET", "/billing/invoices/v1/" + ids["invoice"][0] + "/items", nil, "invoices", false},
		{restclient.OpCreateBooking.Pattern(), "POST", restclient.OpCreateBooking.Route, map[string]any{"booking": map[string]any{"resourceRef": ids["resource"][2],
			"startDate": "2028-01-01T10:00:00Z", "endDate": "2028-01-01T11:00:00Z"}}, "resources", true},
		{restclient.OpGetResource.Pattern(), "GET", "/resources/v1/" + ids["resource"][0], nil, "resources", false},
		{restclient.OpCreateVisit.Pattern(), "POST", restclient.OpCreateVisit.Route, visit, "visitors", true},
		{restclient.OpGetVisit.Pattern(), "GET", "/visitors/visits/v1/" + ids["visit"][0], nil, "visitors", false},
		{restclient.OpUpdateVisit.Pattern(), "PUT", "/visitors/visits/v1/" + ids["visit"][0], map[string]any{"visit": map[string]any{"date": "2026-02-01T10:00:00Z"}}, "visitors", true},
		{restclient.OpCreateVisitRequest.Pattern(), "POST", restclient.OpCreateVisitRequest.Route, map[string]any{"request": map[string]any{"locationRef": loc, "userRefHost": ids["user"][0],
			"visitor": map[string]any{"email": "a@example.com", "name": "A"}}}, "visitors", true},
		{restclient.OpCreatePost.Pattern(), "POST", restclient.OpCreatePost.Route, map[string]any{"post": map[string]any{"locationRef": loc, "text": "x"}}, "feed", true},
		{restclient.OpUpdatePost.Pattern(), "PUT", "/feed/posts/v1/" + ids["post"][0], map[string]any{"post": map[string]any{"text": "y"}}, "feed", true},
		{restclient.OpListComments.Pattern(), "GET", "/feed/posts/v1/" + ids["post"][0] + "/comments", nil, "feed", false},
		{restclient.OpListTransactions.Pattern(), "GET", "/transactions/money/v1?locationRef=" + loc, nil, "transactions", false},
		{restclient.OpListProducts.Pattern(), "GET", "/shop/products/v1?locationRef=" + loc, nil, "shop", false},
		{restclient.OpGetProduct.Pattern(), "GET", "/shop/products/v1/" + ids["product"][0], nil, "shop", true},
		{restclient.OpListOrders.Pattern(), "GET", "/shop/orders/v1?locationRef=" + loc, nil, "shop", false},
		{restclient.OpListRedemptions.Pattern(), "GET", "/discounts/redemptions/v1?couponRef=" + ids["coupon"][0], nil, "invoices", false},
		{restclient.OpGetEvent.Pattern(), "GET", "/events/v1/" + ids["event"][0], nil, "events", true},
	}
}

func wantStatus(method string) int {
	if method == "POST" {
		return http.StatusCreated
	}
	return http.StatusOK
}

func TestEveryRouteIsCountedAndAuthenticated(t *testing.T) {
	ts := newTestServer(t)
	ss := samples(ts)
	if len(ss) != 18 {
		t.Fatalf("%d samples, want 18", len(ss))
	}
	ts.Hooks().Reset()
	for _, s := range ss {
		ts.do(t, auth{}, s.method, s.path, s.body).wantError(t, 401, "unauthorized", "Authorization")
		ts.do(t, auth{header: "Basic " + base64.StdEncoding.EncodeToString([]byte("demo-client:wrong-secret"))}, s.method, s.path, s.body).
			wantError(t, 401, "unauthorized", "invalid client credentials")
		ts.do(t, auth{"Bearer not-a-token", ts.Manifest.NetworkID}, s.method, s.path, s.body).wantError(t, 401, "unauthorized", "bearer token")
		ts.ok(t, ts.bearer(), wantStatus(s.method), s.method, s.path, s.body)
	}
	counts := ts.Hooks().Counts()
	for _, s := range ss {
		if counts[s.route] != 4 {
			t.Errorf("count of %q = %d, want 4", s.route, counts[s.route])
		}
	}
	if ts.Hooks().Total() != 18*4 {
		t.Errorf("total = %d", ts.Hooks().Total())
	}
}

func TestScopes(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	net := ts.Manifest.NetworkID
	owner := ts.Manifest.IDs["membership"][0]
	for _, s := range samples(ts) {
		// Every scope but the operation's family.
		var others []string
		for _, sc := range AllScopes() {
			if strings.TrimSuffix(sc, ".readonly") != s.family {
				others = append(others, sc)
			}
		}
		tok, err := ts.IssueToken(ctx, net, owner, others, time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		ts.do(t, auth{"Bearer " + tok, net}, s.method, s.path, s.body).wantError(t, 403, "forbidden", s.family)

		// The read-only scope permits reads only.
		r := ts.do(t, ts.readonly(), s.method, s.path, s.body)
		if s.write {
			r.wantError(t, 403, "forbidden", "missing scope: "+s.family)
		} else if r.status != 200 {
			t.Errorf("%s with readonly scope: %d %s", s.route, r.status, r.body)
		}
	}
}

func TestBearerOnlyAndNetworkHeader(t *testing.T) {
	ts := newTestServer(t)
	ss := samples(ts)
	for _, s := range ss {
		if s.route == restclient.OpCreateVisit.Pattern() || s.route == restclient.OpCreatePost.Pattern() {
			ts.do(t, ts.basic(), s.method, s.path, s.body).wantError(t, 401, "unauthorized", "Bearer")
		}
	}
	res := "/resources/v1/" + ts.Manifest.IDs["resource"][0]
	ts.do(t, auth{"Bearer " + ts.Manifest.BearerToken, ""}, "GET", res, nil).wantError(t, 400, "invalid_request", "service-network-id")
	ts.do(t, auth{"Bearer " + ts.Manifest.BearerToken, "nope"}, "GET", res, nil).wantError(t, 400, "invalid_request", "service-network-id")
	ts.do(t, auth{"Bearer " + ts.Manifest.BearerToken, ts.Manifest.OtherNetworks[0].NetworkID}, "GET", res, nil).wantError(t, 403, "forbidden", "service-network-id")
	ts.do(t, auth{ts.Manifest.BasicAuth, ts.Manifest.OtherNetworks[0].NetworkID}, "GET", res, nil).wantError(t, 403, "forbidden", "service-network-id")
	ts.ok(t, auth{ts.Manifest.BasicAuth, ts.Manifest.NetworkID}, 200, "GET", res, nil)
	// GET /events/v1/{id} needs service-network-id even with Basic.
	ev := "/events/v1/" + ts.Manifest.IDs["event"][0]
	ts.do(t, ts.basic(), "GET", ev, nil).wantError(t, 400, "invalid_request", "service-network-id")
	ts.ok(t, auth{ts.Manifest.BasicAuth, ts.Manifest.NetworkID}, 200, "GET", ev, nil)
}

func TestExpiredTokenAndSecretNotEchoed(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	net, owner := ts.Manifest.NetworkID, ts.Manifest.IDs["membership"][0]
	tok, err := ts.IssueToken(ctx, net, owner, AllScopes(), time.Now().Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	res := "/resources/v1/" + ts.Manifest.IDs["resource"][0]
	r := ts.do(t, auth{"Bearer " + tok, net}, "GET", res, nil)
	r.wantError(t, 401, "unauthorized", "expired")
	if strings.Contains(string(r.body), tok) {
		t.Fatal("401 body echoes the token")
	}
	secret := "s3cr3t-value"
	r = ts.do(t, auth{header: "Basic " + base64.StdEncoding.EncodeToString([]byte("demo-client:"+secret))}, "GET", res, nil)
	if r.status != 401 || strings.Contains(string(r.body), secret) || strings.Contains(string(r.body), "demo-client") {
		t.Fatalf("401 body %s", r.body)
	}
	// Secrets and tokens are stored hashed.
	var n int
	ts.db.read.QueryRow(`SELECT count(*) FROM api_clients WHERE secret_hash = ?`, []byte(DemoClientSecret)).Scan(&n)
	ts.db.read.QueryRow(`SELECT count(*) FROM tokens WHERE hash = ?`, []byte(DemoBearerToken)).Scan(&n)
	if n != 0 {
		t.Fatal("a secret is stored in clear")
	}
}

func postForm(t *testing.T, ts *testServer, basic string, form url.Values) response {
	t.Helper()
	req, _ := http.NewRequest("POST", ts.URL+"/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic != "" {
		req.Header.Set("Authorization", basic)
	}
	res, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return response{status: res.StatusCode, header: res.Header, body: []byte(b.String())}
}

func TestTokenEndpoint(t *testing.T) {
	ts := newTestServer(t)
	net := ts.Manifest.NetworkID
	res := "/resources/v1/" + ts.Manifest.IDs["resource"][0]

	r := postForm(t, ts, ts.Manifest.BasicAuth, url.Values{"grant_type": {"client_credentials"}, "scope": {"resources.readonly"}})
	if r.status != 200 {
		t.Fatalf("token: %d %s", r.status, r.body)
	}
	var tok tokenResponse
	r.json(t, &tok)
	if tok.ExpiresIn != 3600 || tok.TokenType != "Bearer" || tok.Scope != "resources.readonly" || tok.AccessToken == "" || tok.RefreshToken == "" {
		t.Fatalf("token = %+v", tok)
	}
	ts.ok(t, auth{"Bearer " + tok.AccessToken, net}, 200, "GET", res, nil)
	ts.do(t, auth{"Bearer " + tok.AccessToken, net}, "GET", "/shop/products/v1?locationRef="+ts.Manifest.IDs["location"][0], nil).wantError(t, 403, "forbidden", "shop")

	// Refresh: a new pair; the old refresh token is revoked.
	r = postForm(t, ts, ts.Manifest.BasicAuth, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}})
	if r.status != 200 {
		t.Fatalf("refresh: %d %s", r.status, r.body)
	}
	var tok2 tokenResponse
	r.json(t, &tok2)
	if tok2.AccessToken == tok.AccessToken || tok2.Scope != "resources.readonly" {
		t.Fatalf("refreshed = %+v", tok2)
	}
	ts.ok(t, auth{"Bearer " + tok2.AccessToken, net}, 200, "GET", res, nil)
	postForm(t, ts, ts.Manifest.BasicAuth, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}).wantError(t, 401, "unauthorized", "refresh token")

	// Form credentials, scope beyond the client's, bad grants.
	r = postForm(t, ts, "", url.Values{"grant_type": {"client_credentials"}, "client_id": {DemoClientID}, "client_secret": {DemoClientSecret}})
	r.json(t, &tok)
	if r.status != 200 || !slices.Equal(strings.Fields(tok.Scope), AllScopes()) {
		t.Fatalf("form credentials: %d %s", r.status, r.body)
	}
	postForm(t, ts, ts.Manifest.BasicAuth, url.Values{"grant_type": {"client_credentials"}, "scope": {"admin"}}).wantError(t, 400, "invalid_request", "admin")
	postForm(t, ts, "", url.Values{"grant_type": {"client_credentials"}, "client_id": {DemoClientID}, "client_secret": {"x"}}).wantError(t, 401, "unauthorized", "client")
	postForm(t, ts, ts.Manifest.BasicAuth, url.Values{"grant_type": {"authorization_code"}}).wantError(t, 400, "invalid_request", "grant_type")
	postForm(t, ts, ts.Manifest.BasicAuth, url.Values{}).wantError(t, 400, "invalid_request", "grant_type")
}

func TestDemoTokensAreRenewed(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	ts := newTestServerConfig(t, Config{DBPath: ":memory:", DemoScale: 1, Now: func() time.Time { return clock() }})
	var exp int64
	ts.db.read.QueryRow(`SELECT expires_at FROM tokens WHERE hash = ?`, hashSecret(DemoBearerToken)).Scan(&exp)
	if got := time.UnixMicro(exp); !got.Equal(now.Add(time.Hour).Truncate(time.Microsecond)) {
		t.Fatalf("demo token expires at %v, want %v", got, now.Add(time.Hour))
	}
}
