package restclient_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/workspacenet/facade/restclient"
)

// TestFixedCredentialsAgainstTheService: against the local REST service, a
// client built with WithBasicAuth and the network id gets an event (GET
// /events/v1/{id} needs service-network-id even with Basic); built without
// it, the service refuses that call naming the header; WithBearerToken with
// the network id works, and without it is refused before any call.
func TestFixedCredentialsAgainstTheService(t *testing.T) {
	srv, url, m := demoService(t)
	pair, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(m.BasicAuth, "Basic "))
	if err != nil {
		t.Fatal(err)
	}
	id, secret, _ := strings.Cut(string(pair), ":")
	event := m.IDs["event"][0]
	getEvent := func(opt restclient.Option) error {
		t.Helper()
		c, err := restclient.NewClient(url, opt, restclient.WithRetry(restclient.RetryPolicy{}))
		if err != nil {
			t.Fatal(err)
		}
		e, _, err := c.Events.GetEvent(context.Background(), event)
		if err == nil && e.ID != event {
			t.Errorf("got event %s, want %s", e.ID, event)
		}
		return err
	}
	srv.Hooks().Reset()
	if err := getEvent(restclient.WithBasicAuth(id, secret, m.NetworkID)); err != nil {
		t.Errorf("Basic with the network id: %v", err)
	}
	err = getEvent(restclient.WithBasicAuth(id, secret, ""))
	if e, ok := err.(*restclient.ErrorResponse); !ok || !restclient.IsBadRequest(err) || !strings.Contains(e.Message, "service-network-id") {
		t.Errorf("Basic without the network id: %v, want the service's 400 naming service-network-id", err)
	}
	if err := getEvent(restclient.WithBearerToken(m.BearerToken, m.NetworkID)); err != nil {
		t.Errorf("Bearer with the network id: %v", err)
	}
	if _, err := restclient.NewClient(url, restclient.WithBearerToken(m.BearerToken, "")); err == nil {
		t.Error("WithBearerToken without a network id was accepted")
	}
	if got := srv.Hooks().Counts()[restclient.OpGetEvent.Pattern()]; got != 3 {
		t.Errorf("the service saw %d event calls, want 3 (none for the refused client)", got)
	}
}
