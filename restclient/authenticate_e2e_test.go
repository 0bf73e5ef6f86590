package restclient_test

import (
	"context"
	"errors"
	"testing"

	"github.com/workspacenet/facade/restclient"
)

// TestAuthenticate: against the local REST service, Authenticate proves a
// valid credential with one call (a 404), then trusts it with none; refuses
// a bad token with one call, then with none; refuses a token named with
// another network's id; and says ErrNoCredentials without any.
func TestAuthenticate(t *testing.T) {
	srv, url, m := demoService(t)
	c, err := restclient.NewClient(url, restclient.WithRetry(restclient.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	calls := func() int64 { return srv.Hooks().Counts()["GET /resources/v1/{id}"] }
	as := func(auth, network string) context.Context {
		return restclient.WithCredentials(context.Background(), restclient.Credentials{Authorization: auth, NetworkID: network})
	}
	srv.Hooks().Reset()
	for i, want := range []int64{1, 1} {
		if err := c.Authenticate(as("Bearer "+m.BearerToken, m.NetworkID)); err != nil {
			t.Fatalf("valid credential, #%d: %v", i+1, err)
		}
		if got := calls(); got != want {
			t.Fatalf("valid credential, #%d: %d calls in all, want %d", i+1, got, want)
		}
	}
	// Another spelling of the same credential is the same client.
	if err := c.Authenticate(as("bearer  "+m.BearerToken+" ", m.NetworkID)); err != nil || calls() != 1 {
		t.Fatalf("another spelling: %v, %d calls", err, calls())
	}
	for i, want := range []int64{2, 2} {
		err := c.Authenticate(as("Bearer not-a-token", m.NetworkID))
		if !restclient.IsUnauthorized(err) {
			t.Fatalf("bad token, #%d: %v, want a 401", i+1, err)
		}
		if got := calls(); got != want {
			t.Fatalf("bad token, #%d: %d calls in all, want %d", i+1, got, want)
		}
	}
	var refused *restclient.RefusedCredentialsError
	if err := c.Authenticate(as("Bearer not-a-token", m.NetworkID)); !errors.As(err, &refused) {
		t.Fatalf("bad token again: %v, want a refusal from the gate", err)
	}
	err = c.Authenticate(as("Bearer "+m.BearerToken, "00000000-0000-4000-8000-000000000001"))
	if !restclient.IsNetworkMismatch(err) {
		t.Fatalf("another network's id: %v, want the 403 naming service-network-id", err)
	}
	if err := c.Authenticate(context.Background()); !errors.Is(err, restclient.ErrNoCredentials) {
		t.Fatalf("no credentials: %v", err)
	}
	if err := c.Authenticate(as(m.BasicAuth, "")); err != nil {
		t.Fatalf("Basic credentials: %v", err)
	}
}
