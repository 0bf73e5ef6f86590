package restserver

import (
	"net/url"
	"sync"
	"testing"
)

// clientCredentialsToken gets a token pair for the client of basic.
func clientCredentialsToken(t *testing.T, ts *testServer, basic string) tokenResponse {
	t.Helper()
	r := postForm(t, ts, basic, url.Values{"grant_type": {"client_credentials"}})
	if r.status != 200 {
		t.Fatalf("client_credentials: %d %s", r.status, r.body)
	}
	var tok tokenResponse
	r.json(t, &tok)
	return tok
}

// TestRefreshTokenIsRedeemedOnce sends eight concurrent refreshes of one
// refresh token, several rounds: exactly one may succeed, the others are
// answered as for a used token, and only the winner's new tokens work.
func TestRefreshTokenIsRedeemedOnce(t *testing.T) {
	ts := newTestServer(t)
	net := ts.Manifest.NetworkID
	res := "/resources/v1/" + ts.Manifest.IDs["resource"][0]
	const parallel, rounds = 8, 5
	for round := range rounds {
		tok := clientCredentialsToken(t, ts, ts.Manifest.BasicAuth)
		var (
			start   = make(chan struct{})
			wg      sync.WaitGroup
			results [parallel]response
		)
		for i := range parallel {
			wg.Go(func() {
				<-start
				results[i] = postForm(t, ts, ts.Manifest.BasicAuth, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}})
			})
		}
		close(start)
		wg.Wait()
		var winners []tokenResponse
		for _, r := range results {
			switch r.status {
			case 200:
				var w tokenResponse
				r.json(t, &w)
				winners = append(winners, w)
			default:
				r.wantError(t, 401, "unauthorized", "refresh token")
			}
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %d of %d concurrent refreshes of one refresh token succeeded, want exactly 1", round, len(winners), parallel)
		}
		w := winners[0]
		ts.ok(t, auth{"Bearer " + w.AccessToken, net}, 200, "GET", res, nil)
		// The winner's refresh token works once more; the used one does not.
		postForm(t, ts, ts.Manifest.BasicAuth, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}).
			wantError(t, 401, "unauthorized", "refresh token")
		if r := postForm(t, ts, ts.Manifest.BasicAuth, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {w.RefreshToken}}); r.status != 200 {
			t.Fatalf("round %d: the winner's refresh token: %d %s", round, r.status, r.body)
		}
	}
}

// TestRefreshRequiresItsClient: a refresh without client authentication is
// 401, a refresh with another client's credentials (valid ones) is refused,
// and neither revokes the token: its own client can still redeem it.
func TestRefreshRequiresItsClient(t *testing.T) {
	ts := newTestServer(t)
	other := ts.Manifest.OtherNetworks[0]
	tok := clientCredentialsToken(t, ts, ts.Manifest.BasicAuth)
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}

	r := postForm(t, ts, "", form)
	r.wantError(t, 401, "unauthorized", "client authentication is required")
	if r.header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	wrong := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {DemoClientID}, "client_secret": {"wrong"}}
	postForm(t, ts, "", wrong).wantError(t, 401, "unauthorized", "invalid client credentials")

	// Another network's client, authenticated with its own valid secret.
	if got := clientCredentialsToken(t, ts, other.BasicAuth); got.AccessToken == "" {
		t.Fatal("the other client's credentials do not work")
	}
	postForm(t, ts, other.BasicAuth, form).wantError(t, 401, "unauthorized", "refresh token")

	// Its own client, Basic or form fields, may.
	r = postForm(t, ts, ts.Manifest.BasicAuth, form)
	if r.status != 200 {
		t.Fatalf("refresh by its client: %d %s", r.status, r.body)
	}
	var tok2 tokenResponse
	r.json(t, &tok2)
	r = postForm(t, ts, "", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok2.RefreshToken},
		"client_id": {DemoClientID}, "client_secret": {DemoClientSecret}})
	if r.status != 200 {
		t.Fatalf("refresh by its client (form credentials): %d %s", r.status, r.body)
	}
}
