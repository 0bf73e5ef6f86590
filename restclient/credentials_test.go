package restclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestCredentialsRedacted(t *testing.T) {
	cr := Credentials{Authorization: "Bearer " + testToken, NetworkID: testNetwork}
	basic := Credentials{Authorization: basicAuthorization("client-id-1", "hunter2-secret")}
	var logged bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, nil))
	log.Info("call", "creds", cr, "basic", basic)
	js, _ := json.Marshal(struct{ C Credentials }{cr})
	outs := []string{
		cr.String(), cr.GoString(), fmt.Sprintf("%v %+v %#v %s %q", cr, cr, cr, cr, cr),
		fmt.Sprintf("%v %#v", basic, basic), fmt.Sprintf("%+v", struct{ C Credentials }{cr}),
		logged.String(), string(js),
	}
	for _, out := range outs {
		for _, secret := range []string{testToken, testNetwork, "hunter2-secret", strings.TrimPrefix(basic.Authorization, "Basic ")} {
			if strings.Contains(out, secret) {
				t.Errorf("%q leaks %q", out, secret)
			}
		}
	}
	if cr.String() != "restclient.Credentials{Authorization: Bearer [REDACTED], NetworkID: [REDACTED]}" {
		t.Errorf("String() = %q", cr.String())
	}
	if got := (Credentials{}).String(); got != `restclient.Credentials{Authorization: "", NetworkID: ""}` {
		t.Errorf("empty: %q", got)
	}
	if got := (Credentials{Authorization: "Token abc"}).String(); strings.Contains(got, "abc") || strings.Contains(got, "Token") {
		t.Errorf("unknown scheme: %q", got)
	}
	if !strings.Contains(logged.String(), `"authorization":"Bearer [REDACTED]"`) {
		t.Errorf("slog output %s", logged.String())
	}
}

// TestNoCredentialInErrors drives every kind of error with an upstream that
// echoes the credentials it received, and checks no error text shows them.
func TestNoCredentialInErrors(t *testing.T) {
	const id, secret = "client-7781", "s3cr3t-pa55"
	basicValue := basicAuthorization(id, secret)
	secrets := []string{testToken, secret, strings.TrimPrefix(basicValue, "Basic "), id + ":" + secret}

	u := newUpstream(t)
	echo := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			auth := r.Header.Get("Authorization")
			dec, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(auth, "Basic "))
			w.WriteHeader(status)
			json.NewEncoder(w).Encode(map[string]string{
				"message": "bad credentials " + auth + " / " + string(dec) + " / " + strings.TrimPrefix(auth, "Bearer "),
				"type":    "unauthorized:" + auth,
			})
		}
	}
	u.handle(OpGetEvent.Pattern(), echo(401))
	u.handle(OpGetResource.Pattern(), echo(403))
	u.handle(OpGetProduct.Pattern(), echo(503))
	u.handle(OpCreatePost.Pattern(), echo(400))
	u.handle(OpGetVisit.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"visit":{"comment":` + r.Header.Get("Authorization") + `}}`)) // not JSON
	})

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()

	bearer := u.client()
	basic, err := NewClient(u.srv.URL+basePath, WithBasicAuth(id, secret, ""))
	if err != nil {
		t.Fatal(err)
	}
	deadClient, _ := NewClient("http://"+dead, WithBearerToken(testToken, testNetwork), WithRetry(RetryPolicy{MaxRetries: 0}))

	perCall := WithCredentials(ctxT(t), Credentials{Authorization: basicValue, NetworkID: testNetwork})
	var errs []error
	collect := func(_ any, _ *Response, err error) { errs = append(errs, err) }
	for _, c := range []*Client{bearer, basic} {
		collect(c.Events.GetEvent(ctxT(t), "e"))
		collect(c.Resources.GetResource(ctxT(t), "r"))
		collect(c.Shop.GetProduct(ctxT(t), "p"))
		collect(c.Feed.CreatePost(ctxT(t), &PostCreateRequest{}))
		collect(c.Visitors.GetVisit(ctxT(t), "v"))
		collect(c.Events.GetEvent(perCall, "e"))
	}
	collect(deadClient.Events.GetEvent(ctxT(t), "e"))
	collect(bearer.Events.GetEvent(WithCredentials(ctxT(t), Credentials{Authorization: "Bearer " + testToken + "\n"}), "e"))
	cancelled, cancel := context.WithCancel(WithCredentials(ctxT(t), Credentials{Authorization: basicValue}))
	cancel()
	collect(basic.Events.GetEvent(cancelled, "e"))

	for i, err := range errs {
		if err == nil {
			t.Fatalf("call %d succeeded", i)
		}
		text := err.Error() + fmt.Sprintf(" %v %+v", err, err)
		var e *ErrorResponse
		if errors.As(err, &e) {
			text += e.Message + e.Type
		}
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("error %d leaks %q: %s", i, s, text)
			}
		}
	}
	if e, ok := asErrorResponse(errs[0]); !ok || !strings.Contains(e.Message, redacted) {
		t.Errorf("echoed credentials not redacted: %v", errs[0])
	}
}

func TestIdentityFromContext(t *testing.T) {
	c := Credentials{Authorization: "Bearer x", NetworkID: "n"}
	if got := IdentityFromContext(WithCredentials(t.Context(), c)); got != c.Identity() || got == "" {
		t.Errorf("IdentityFromContext = %q, want %q", got, c.Identity())
	}
	if got := IdentityFromContext(t.Context()); got != "" {
		t.Errorf("without credentials: %q", got)
	}
}

// Identity is sha256(Authorization, 0, NetworkID) of the normalised
// credentials, first 16 bytes in hex: replicas of different builds share
// budgets and caches keyed by it.
func TestIdentityValue(t *testing.T) {
	for _, c := range []Credentials{{}, {Authorization: "Bearer x", NetworkID: "n"}, {Authorization: "Basic " + strings.Repeat("a", 400), NetworkID: "fc37738e-179d-443d-bd55-efaaaae9e4ec"}} {
		sum := sha256.Sum256([]byte(c.Authorization + "\x00" + c.NetworkID))
		if got, want := c.Identity(), hex.EncodeToString(sum[:16]); got != want {
			t.Errorf("Identity of %.20q = %q, want %q", c.Authorization, got, want)
		}
	}
}

// TestIdentityOfSpellings: the spellings the upstream takes for one client
// (scheme case, blanks, network id case) have one Identity and one
// normalised form, the one forwarded; another token, however spelled, has
// another, and so has a Basic credential in another base64 spelling (the
// upstream decodes strict standard base64 only).
func TestIdentityOfSpellings(t *testing.T) {
	const net = "fc37738e-179d-443d-bd55-efaaaae9e4ec"
	pair := []byte("client-9:s3cr3t??>>") // its standard base64 has padding and a '+'
	for _, group := range [][]Credentials{
		{
			{Authorization: "Bearer tok", NetworkID: net},
			{Authorization: "bearer tok", NetworkID: net},
			{Authorization: "BEARER  tok ", NetworkID: strings.ToUpper(net)},
			{Authorization: " Bearer\ttok", NetworkID: " " + net + " "},
		},
		{
			{Authorization: "Basic " + base64.StdEncoding.EncodeToString(pair)},
			{Authorization: "basic " + base64.StdEncoding.EncodeToString(pair)},
			{Authorization: "BASIC  " + base64.StdEncoding.EncodeToString(pair) + " "},
		},
	} {
		want := group[0]
		for _, c := range group {
			if c.Identity() != want.Identity() || c.Normalized() != want {
				t.Errorf("%q %q: Identity %s, normalised %q %q; want %s, %q %q", c.Authorization, c.NetworkID,
					c.Identity(), c.Normalized().Authorization, c.Normalized().NetworkID, want.Identity(), want.Authorization, want.NetworkID)
			}
		}
	}
	if a, b := (Credentials{Authorization: "Bearer tok"}), (Credentials{Authorization: "Bearer TOK"}); a.Identity() == b.Identity() {
		t.Error("tokens differing in case share an Identity: a Bearer token is case-sensitive")
	}
	std := Credentials{Authorization: "Basic " + base64.StdEncoding.EncodeToString(pair)}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		c := Credentials{Authorization: "Basic " + enc.EncodeToString(pair)}
		if c.Identity() == std.Identity() || c.Normalized() != c {
			t.Errorf("%q shares the standard spelling's Identity, or is re-encoded (%q)", c.Authorization, c.Normalized().Authorization)
		}
	}
}

// BenchmarkIdentity hashes a bearer token and network id.
func BenchmarkIdentity(b *testing.B) {
	c := Credentials{Authorization: "Bearer demo-all-scopes-token", NetworkID: "fc37738e-179d-443d-bd55-efaaaae9e4ec"}
	b.ReportAllocs()
	for b.Loop() {
		_ = c.Identity()
	}
}

// TestFixedCredentialsHeaders: WithBasicAuth sends the network id it is
// given, and none when given none; WithBearerToken always sends its own.
func TestFixedCredentialsHeaders(t *testing.T) {
	u := newUpstream(t)
	var got []string
	u.handle(OpGetResource.Pattern(), func(w http.ResponseWriter, r *http.Request) {
		_, has := r.Header["Service-Network-Id"]
		got = append(got, fmt.Sprintf("%s|%v|%s", r.Header.Get("Authorization"), has, r.Header.Get("service-network-id")))
		w.Write([]byte(`{"resource":{"id":"r"}}`))
	})
	basic := basicAuthorization("client-1", "s3cr3t")
	for _, o := range []Option{
		WithBasicAuth("client-1", "s3cr3t", testNetwork),
		WithBasicAuth("client-1", "s3cr3t", ""),
		WithBearerToken(testToken, testNetwork),
	} {
		c, err := NewClient(u.srv.URL+basePath, o)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Resources.GetResource(ctxT(t), "r"); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{basic + "|true|" + testNetwork, basic + "|false|", "Bearer " + testToken + "|true|" + testNetwork}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("headers sent:\n got %q\nwant %q", got, want)
	}
}

func TestCredentialsCheck(t *testing.T) {
	basic := basicAuthorization("client-1", "s3cr3t")
	for _, c := range []Credentials{
		{Authorization: basic},
		{Authorization: basic, NetworkID: testNetwork},
		{Authorization: "Bearer " + testToken, NetworkID: testNetwork},
		{Authorization: "bearer " + testToken, NetworkID: strings.ToUpper(testNetwork)},
	} {
		if err := c.Check(); err != nil {
			t.Errorf("%v: %v", c, err)
		}
	}
	for c, want := range map[Credentials]string{
		{}:                                       "must be",
		{Authorization: "Token abc"}:             "must be",
		{Authorization: "Bearer "}:               "no credential",
		{Authorization: "Bearer " + testToken}:   "needs a network id",
		{Authorization: basic, NetworkID: "n-1"}: "must be a uuid",
		{Authorization: "Bearer x\x00", NetworkID: testNetwork}: "invalid characters",
	} {
		err := c.Check()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: Check() = %v, want an error saying %q", c, err, want)
		}
	}
	_, err := NewClient("http://h", WithBearerToken(testToken, ""))
	if err == nil || err.Error() != "restclient: WithBearerToken: a Bearer token needs a network id (the service-network-id header)" {
		t.Errorf("NewClient(WithBearerToken(token, \"\")) = %v", err)
	}
}
