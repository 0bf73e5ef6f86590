package graph_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/internal/testsupport/testenv"
)

// TestBasicSpellingsForwardedAsSent: a Basic credential in a base64
// spelling other than the strict standard one (unpadded, URL alphabet,
// non-zero padding bits) is another credential to the upstream: the facade
// forwards each as sent, never re-encoded into the standard one, and each
// is its own credential to the authentication gate (one refused call each).
func TestBasicSpellingsForwardedAsSent(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	env := testenv.New(t, testenv.Options{OnUpstreamRequest: func(r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
	}})
	basic := env.Basic()
	// A pair whose standard base64 has padding and a '+' (the demo's own
	// has neither, so it has no other spelling).
	pair := []byte("client-x:s3cr3t??>>")
	std := base64.StdEncoding.EncodeToString(pair)
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	bits := []byte(std) // the character before the padding with its unused low bits set
	i := strings.IndexByte(std, '=')
	bits[i-1] = alphabet[strings.IndexByte(alphabet, bits[i-1])+1]
	variants := []string{std, base64.RawStdEncoding.EncodeToString(pair), base64.URLEncoding.EncodeToString(pair), string(bits)}
	for _, v := range variants {
		mu.Lock()
		seen = nil
		mu.Unlock()
		c := testenv.Creds{Authorization: "basic  " + v, NetworkID: basic.NetworkID}
		r := env.Query(t, c, `query($id: ID!) { resource(id: $id) { id } }`, map[string]any{"id": env.ID(t, "resource", 0)})
		if len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != errcode.Unauthenticated {
			t.Errorf("%q: %s, want UNAUTHENTICATED (an unknown client)", v, r.Raw)
		}
		mu.Lock()
		if len(seen) != 1 || seen[0] != "Basic "+v {
			t.Errorf("sent %q, the upstream received %q", "Basic "+v, seen)
		}
		mu.Unlock()
	}
}
