package restclient

import (
	"net/http"
	"testing"
)

func TestGetEvent(t *testing.T) {
	u := newUpstream(t)
	e := fixture(t, "event.json")
	// Basic credentials: the network id still travels (required by GET
	// /events), given once to WithBasicAuth.
	c, err := NewClient(u.srv.URL+basePath, WithBasicAuth("client-1", "s3cr3t-basic", testNetwork))
	if err != nil {
		t.Fatal(err)
	}
	u.serveJSON(OpGetEvent.Pattern(), wantRequest{
		method: "GET", path: "/events/v1/e-1",
		auth: basicAuthorization("client-1", "s3cr3t-basic"), netID: testNetwork,
	}, http.StatusOK, `{"event":`+e+`}`)
	got, _, err := c.Events.GetEvent(ctxT(t), "e-1")
	if err != nil {
		t.Fatal(err)
	}
	assertComplete(t, got, nil)
	assertRoundTrip(t, got, e)
	if _, _, err := c.Events.GetEvent(ctxT(t), ""); err == nil {
		t.Error("empty id accepted")
	}
}

// TestGetEventPerCallCredentials: the facade's path, per-call Basic
// credentials with the caller's network id, wins over the fixed ones and is
// forwarded as given (the network id is not checked client-side).
func TestGetEventPerCallCredentials(t *testing.T) {
	u := newUpstream(t)
	e := fixture(t, "event.json")
	c := u.client()
	u.serveJSON(OpGetEvent.Pattern(), wantRequest{
		method: "GET", path: "/events/v1/e-1",
		auth: basicAuthorization("client-1", "s3cr3t-basic"), netID: "net-9",
	}, http.StatusOK, `{"event":`+e+`}`)
	ctx := WithCredentials(ctxT(t), Credentials{Authorization: basicAuthorization("client-1", "s3cr3t-basic"), NetworkID: "net-9"})
	if _, _, err := c.Events.GetEvent(ctx, "e-1"); err != nil {
		t.Fatal(err)
	}
}
