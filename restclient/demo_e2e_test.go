package restclient_test

import (
	"net/http/httptest"
	"testing"

	"github.com/workspacenet/facade/restserver"
)

// demoService starts the local REST service on in-memory demo data for the
// test and returns it (its hooks count the calls), its URL and its demo
// manifest (credentials and ids).
func demoService(t *testing.T) (*restserver.Server, string, *restserver.DemoManifest) {
	t.Helper()
	srv, err := restserver.New(t.Context(), restserver.Config{DBPath: ":memory:", DemoScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	m, err := srv.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	return srv, hs.URL, m
}
