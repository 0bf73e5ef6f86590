package guard

import (
	"net/http"
	"strings"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/internal/base/ids"
	"github.com/workspacenet/facade/restclient"
)

// TraceHeader is the request header that asks for the upstream call report
// (extensions.upstream), when the endpoint allows it.
const TraceHeader = "X-Upstream-Trace"

// Credentials returns the credentials of headers h (nil without an
// Authorization header): Authorization and service-network-id, trimmed.
func Credentials(h http.Header) *restclient.Credentials {
	auth := strings.TrimSpace(h.Get("Authorization"))
	if auth == "" {
		return nil
	}
	return &restclient.Credentials{Authorization: auth, NetworkID: strings.TrimSpace(h.Get(NetworkIDHeader))}
}

// MaxCredentialHeaderBytes bounds the Authorization and service-network-id
// headers: real credentials are far shorter, and whatever the facade accepts
// it forwards on every upstream call of the request.
const MaxCredentialHeaderBytes = 4 << 10

// NetworkIDHeader is the service-network-id header, in the canonical form
// http.Header stores it in (looking a name up in another form costs an
// allocation).
const NetworkIDHeader = "Service-Network-Id"

// credentialHeaders are the headers CredentialHeaders bounds, canonical.
var credentialHeaders = [...]string{"Authorization", NetworkIDHeader}

// CredentialHeaders refuses, with 400 BAD_REQUEST, a request whose
// Authorization or service-network-id header is longer than
// MaxCredentialHeaderBytes (all its values together), or whose
// service-network-id is not a uuid: such credentials cannot be right, so no
// upstream call is made with them.
func CredentialHeaders(r *http.Request) *Refusal {
	for _, name := range credentialHeaders {
		n := 0
		for _, v := range r.Header.Values(name) {
			n += len(v)
		}
		if n > MaxCredentialHeaderBytes {
			if name == NetworkIDHeader {
				name = "service-network-id"
			}
			return &Refusal{Status: http.StatusBadRequest, Code: errcode.BadRequest,
				Message: "the " + name + " header is longer than 4 KiB; no credentials are that long"}
		}
	}
	if v := strings.TrimSpace(r.Header.Get(NetworkIDHeader)); v != "" && !ids.IsUUID(v) {
		return &Refusal{Status: http.StatusBadRequest, Code: errcode.BadRequest,
			Message: "the service-network-id header must be a uuid"}
	}
	return nil
}
