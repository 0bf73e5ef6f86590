package restclient

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"

	"github.com/workspacenet/facade/internal/base/credkey"
	"github.com/workspacenet/facade/internal/base/ids"
)

// Credentials are the two headers that authenticate a call upstream:
// Authorization is the whole header value ("Basic ..." or "Bearer ..."),
// NetworkID the service-network-id header (omitted when empty). They are
// forwarded in their normalised spelling (Normalized): the bytes the upstream
// authenticates are those that key rate budgets, in-flight bounds, breakers,
// shared calls and the response cache, so no caller is ever served an answer
// fetched with a spelling the upstream might have judged differently.
//
// Credentials never print their values: String, GoString and LogValue redact
// them, and JSON encoding drops them.
type Credentials struct {
	Authorization string `json:"-"`
	NetworkID     string `json:"-"`
}

const redacted = "[REDACTED]"

// scheme returns the authentication scheme of the Authorization value when it
// is one the API knows ("Basic" or "Bearer"), else "".
func (c Credentials) scheme() string {
	s, _, _ := strings.Cut(strings.TrimSpace(c.Authorization), " ")
	switch {
	case strings.EqualFold(s, "Basic"):
		return "Basic"
	case strings.EqualFold(s, "Bearer"):
		return "Bearer"
	}
	return ""
}

func (c Credentials) redactedAuthorization() string {
	switch {
	case c.Authorization == "":
		return `""`
	case c.scheme() != "":
		return c.scheme() + " " + redacted
	}
	return redacted
}

func (c Credentials) redactedNetworkID() string {
	if c.NetworkID == "" {
		return `""`
	}
	return redacted
}

// String describes c without revealing any secret: only the scheme of the
// Authorization value and whether a network id is set.
func (c Credentials) String() string {
	return "restclient.Credentials{Authorization: " + c.redactedAuthorization() +
		", NetworkID: " + c.redactedNetworkID() + "}"
}

// GoString is String, so %#v redacts too.
func (c Credentials) GoString() string { return c.String() }

// LogValue makes slog print the redacted form.
func (c Credentials) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("authorization", c.redactedAuthorization()),
		slog.String("networkID", c.redactedNetworkID()),
	)
}

// secrets lists the strings that must never appear in an error's text: the
// header value, its credential part and, for Basic, the decoded pair.
func (c Credentials) secrets() []string {
	var out []string
	add := func(s string) {
		if len(s) >= 4 { // shorter strings would redact innocent text
			out = append(out, s)
		}
	}
	auth := strings.TrimSpace(c.Authorization)
	add(auth)
	if _, cred, ok := strings.Cut(auth, " "); ok {
		cred = strings.TrimSpace(cred)
		add(cred)
		if c.scheme() == "Basic" {
			if dec, err := base64.StdEncoding.DecodeString(cred); err == nil {
				add(string(dec))
				if id, secret, ok := strings.Cut(string(dec), ":"); ok {
					add(secret)
					add(id)
				}
			}
		}
	}
	add(c.NetworkID)
	return out
}

// WithCredentials returns a context carrying c. Calls made with it send c's
// headers instead of the client's fixed credentials, even when c is empty
// (a caller without credentials is forwarded as such).
func WithCredentials(ctx context.Context, c Credentials) context.Context {
	return WithScope(ctx, Scope{Credentials: &c})
}

// CredentialsFromContext returns the credentials stored by WithCredentials
// (or WithScope).
func CredentialsFromContext(ctx context.Context) (Credentials, bool) {
	s := scopeOf(ctx)
	return s.who.Credentials, s.hasWho
}

// IdentityFromContext returns the Identity of the credentials stored by
// WithCredentials (or WithScope), computed once when they were stored (""
// without any).
func IdentityFromContext(ctx context.Context) string {
	return scopeOf(ctx).who.id
}

// who is credentials with their Identity, computed once (per request, or per
// client for fixed credentials) rather than for every call.
type who struct {
	Credentials
	id string
	// headerVals back the values of the Authorization and
	// service-network-id headers of every request made with them
	// (Client.setHeader).
	headerVals []string
}

func identify(c Credentials) who { return identifyIn(c, new([2]string)) }

// identifyIn is identify with buf, which the caller allocates anyway (a
// scope), as headerVals' backing array.
func identifyIn(c Credentials, buf *[2]string) who {
	c = c.Normalized()
	buf[0], buf[1] = c.Authorization, c.NetworkID
	return who{Credentials: c, id: c.identity(), headerVals: buf[:]}
}

// anonymous is who of no credentials.
var anonymous = identify(Credentials{})

// validHeaderValue reports whether v can be sent as an HTTP header value
// (no control characters other than tab).
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		b := v[i]
		if (b < 0x20 && b != '\t') || b == 0x7f {
			return false
		}
	}
	return true
}

func (c Credentials) validate() error {
	if !validHeaderValue(c.Authorization) {
		return errors.New("restclient: Authorization credential contains invalid characters")
	}
	if !validHeaderValue(c.NetworkID) {
		return errors.New("restclient: service-network-id credential contains invalid characters")
	}
	return nil
}

// Check reports why c cannot authenticate a call as the API defines
// credentials: an Authorization that is not "Basic ..." or "Bearer ..." with
// a credential, a Bearer token without a network id (the API requires
// service-network-id with Bearer), a network id that is not a uuid, or a
// header value with control characters. Basic credentials without a network
// id pass: they name their network themselves, except on GET /events/v1/{id},
// which needs the header (GetEvent fails without it).
//
// The fixed credentials of WithBasicAuth and WithBearerToken are checked at
// construction. Per-call credentials (WithCredentials) are forwarded
// normalised but unchecked, so the upstream judges a caller's headers itself.
func (c Credentials) Check() error {
	if err := c.validate(); err != nil {
		return err
	}
	_, cred, _ := strings.Cut(strings.TrimSpace(c.Authorization), " ")
	switch {
	case c.scheme() == "":
		return errors.New(`restclient: Authorization must be "Basic <credentials>" or "Bearer <token>"`)
	case strings.TrimSpace(cred) == "":
		return errors.New("restclient: Authorization has no credential after its scheme")
	case c.scheme() == "Bearer" && c.NetworkID == "":
		return errors.New("restclient: a Bearer token needs a network id (the service-network-id header)")
	case c.NetworkID != "" && !ids.IsUUID(c.NetworkID):
		return errors.New("restclient: the network id (service-network-id) must be a uuid")
	}
	return nil
}

// WithBasicAuth sends Authorization: Basic base64(clientID:clientSecret), and
// service-network-id: networkID when networkID is not empty, on calls whose
// context carries no Credentials. The network id may be empty for every
// operation but GET /events/v1/{id} (Events.GetEvent), which requires it even
// with Basic; when set it must be a uuid.
func WithBasicAuth(clientID, clientSecret, networkID string) Option {
	return func(c *Client) error {
		if clientID == "" || strings.Contains(clientID, ":") {
			return errors.New("restclient: WithBasicAuth: client id must be non-empty and without ':'")
		}
		return c.setFixed("WithBasicAuth", Credentials{Authorization: basicAuthorization(clientID, clientSecret), NetworkID: networkID})
	}
}

// WithBearerToken sends Authorization: Bearer token and service-network-id:
// networkID on calls whose context carries no Credentials. Both are
// required, as the API requires the network id with a Bearer token: an empty
// token, or a network id that is empty or not a uuid, fails NewClient.
func WithBearerToken(token, networkID string) Option {
	return func(c *Client) error {
		if token == "" {
			return errors.New("restclient: WithBearerToken: empty token")
		}
		return c.setFixed("WithBearerToken", Credentials{Authorization: "Bearer " + token, NetworkID: networkID})
	}
}

// setFixed makes cr the client's fixed credentials once cr.Check passes.
func (c *Client) setFixed(option string, cr Credentials) error {
	if err := cr.Check(); err != nil {
		return errors.New(strings.Replace(err.Error(), "restclient: ", "restclient: "+option+": ", 1))
	}
	w := identify(cr)
	c.fixed = &w
	return nil
}

func basicAuthorization(clientID, clientSecret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(clientID+":"+clientSecret))
}

// Normalized returns c in the one spelling of the upstream client it names
// (internal/base/credkey): the Authorization scheme as "Basic" or "Bearer"
// whatever its case, blanks trimmed and collapsed, a Basic credential's
// base64 decoded and encoded again in standard padded form (kept as given
// when it does not decode), the network id trimmed and, when a uuid, lower
// case. Spellings the upstream takes for one client normalise to one value.
func (c Credentials) Normalized() Credentials {
	return Credentials{Authorization: credkey.Authorization(c.Authorization), NetworkID: credkey.NetworkID(c.NetworkID)}
}

// Identity names the upstream client c authenticates as, without revealing
// it: a hash of the normalised (Normalized) Authorization value and network
// id, so every spelling of one client has one Identity. Rate budgets,
// in-flight bounds, per-client circuit breakers, shared calls and the
// response cache are keyed by it.
func (c Credentials) Identity() string { return c.Normalized().identity() }

// identity is Identity of credentials already normalised.
func (c Credentials) identity() string {
	// sha256(Authorization 0 NetworkID), its first 16 bytes in hex; the
	// input is built on the stack when short, so the string is the only
	// allocation.
	var buf [256]byte
	sum := sha256.Sum256(append(append(append(buf[:0], c.Authorization...), 0), c.NetworkID...))
	var out [32]byte
	hex.Encode(out[:], sum[:16])
	return string(out[:])
}
