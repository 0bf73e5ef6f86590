package restserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/workspacenet/facade/internal/base/ids"
)

// ScopeFamilies are the scope families of the API; each has a ".readonly"
// twin that permits reads only.
var ScopeFamilies = []string{"events", "feed", "invoices", "resources", "shop", "transactions", "visitors"}

// AllScopes returns every scope: each family and its ".readonly" twin.
func AllScopes() []string {
	var s []string
	for _, f := range ScopeFamilies {
		s = append(s, f, f+".readonly")
	}
	return s
}

// ReadonlyScopes returns the ".readonly" scope of every family.
func ReadonlyScopes() []string {
	var s []string
	for _, f := range ScopeFamilies {
		s = append(s, f+".readonly")
	}
	return s
}

// tokenTTL is the life of an access token; refreshTTL of a refresh token.
const (
	tokenTTL   = time.Hour
	refreshTTL = 30 * 24 * time.Hour
)

// caller is the authenticated principal of a request.
type caller struct {
	network    string
	membership string
	scopes     []string
	bearer     bool
}

// has reports whether the caller holds scope.
func (c *caller) has(scope string) bool { return slices.Contains(c.scopes, scope) }

// hashSecret hashes an API client secret or a token. Secrets and tokens are
// random 256-bit values, so a fast hash is right here: there is nothing to
// brute-force that a slow password hash would protect.
func hashSecret(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// dummyHash is compared against when a client id is unknown, so an unknown
// id and a wrong secret take the same path.
var dummyHash = hashSecret("no such client")

// authenticate checks the Authorization header and the service-network-id
// header. requireNetwork makes service-network-id required even with Basic.
func (s *Server) authenticate(r *http.Request, requireNetwork bool) (*caller, error) {
	ctx := r.Context()
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, unauthorizedf("missing Authorization header")
	}
	scheme, cred, _ := strings.Cut(h, " ")
	cred = strings.TrimSpace(cred)
	var c *caller
	switch strings.ToLower(scheme) {
	case "basic":
		// Strict standard base64 only: one pair has one spelling, so the
		// rate limit (keyed by the spelling, internal/base/credkey) counts one
		// client where authentication sees one.
		raw, err := base64.StdEncoding.Strict().DecodeString(cred)
		if err != nil {
			return nil, unauthorizedf("malformed Basic credentials")
		}
		id, secret, ok := strings.Cut(string(raw), ":")
		if !ok || id == "" {
			return nil, unauthorizedf("malformed Basic credentials")
		}
		c, err = s.clientCaller(ctx, id, secret)
		if err != nil {
			return nil, err
		}
	case "bearer":
		if cred == "" {
			return nil, unauthorizedf("missing bearer token")
		}
		g, expires, err := s.db.token(ctx, "access", cred)
		if errors.Is(err, errNotFound) {
			return nil, unauthorizedf("invalid or expired bearer token")
		}
		if err != nil {
			return nil, err
		}
		if s.now().UnixMicro() >= expires {
			return nil, unauthorizedf("invalid or expired bearer token")
		}
		c = &caller{network: g.network, membership: g.membership, scopes: g.scopes, bearer: true}
	default:
		return nil, unauthorizedf("unsupported authorization scheme; use Basic or Bearer")
	}
	nh := r.Header.Get("service-network-id")
	switch {
	case nh == "" && (c.bearer || requireNetwork):
		return nil, invalidf("service-network-id: header is required")
	case nh == "":
	case !ids.IsUUID(nh):
		return nil, invalidf("service-network-id: must be a uuid")
	case !strings.EqualFold(nh, c.network):
		return nil, forbiddenf("service-network-id: the credentials do not give access to this network")
	}
	return c, nil
}

// clientCaller verifies an API client id and secret in constant time.
func (s *Server) clientCaller(ctx context.Context, id, secret string) (*caller, error) {
	g, stored, err := s.db.apiClient(ctx, id)
	found := err == nil
	if err != nil && !errors.Is(err, errNotFound) {
		return nil, err
	}
	if !found {
		stored = dummyHash
	}
	if subtle.ConstantTimeCompare(hashSecret(secret), stored) != 1 || !found {
		return nil, unauthorizedf("invalid client credentials")
	}
	return &caller{network: g.network, membership: g.membership, scopes: g.scopes}, nil
}

// randomToken returns a new 256-bit random token, base64url-encoded.
func randomToken() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// renewDemoTokens extends the expiry of the demo tokens to now + 1 hour.
func (s *Server) renewDemoTokens(ctx context.Context) error {
	return s.db.renewTokens(ctx, s.now().Add(tokenTTL))
}

// tokenClient authenticates the client of a token request: Basic, or the
// client_id and client_secret form fields.
func (s *Server) tokenClient(r *http.Request) (string, *caller, error) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id == "" {
		return "", nil, unauthorizedf("client authentication is required")
	}
	c, err := s.clientCaller(r.Context(), id, secret)
	if err != nil {
		return "", nil, err
	}
	return id, c, nil
}

// tokenResponse is the body of a successful POST /oauth2/token.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	TokenType    string `json:"token_type"`
}

// handleToken is POST /oauth2/token (form-encoded). Grants:
//   - client_credentials: the client authenticates with Basic or with
//     client_id and client_secret form fields; scope (space-separated)
//     narrows the client's scopes, default all of them.
//   - refresh_token: the client authenticates as for client_credentials,
//     and refresh_token, which must have been issued to that client, is
//     exchanged for a new access token and a new refresh token (the old one
//     is revoked, once: of concurrent refreshes of one token one wins);
//     scope may narrow.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		return invalidf("malformed form body")
	}
	var requested []string
	if sc := r.PostForm.Get("scope"); sc != "" {
		requested = strings.Fields(sc)
	}
	// narrow applies the requested scopes to g.
	narrow := func(g grant) (grant, error) {
		if requested != nil {
			for _, sc := range requested {
				if !slices.Contains(g.scopes, sc) {
					return grant{}, invalidf("scope: %q is not granted to these credentials", sc)
				}
			}
			g.scopes = requested
		}
		return g, nil
	}
	var g grant
	access, refresh := randomToken(), randomToken()
	now := s.now()
	switch grantType := r.PostForm.Get("grant_type"); grantType {
	case "client_credentials":
		id, c, err := s.tokenClient(r)
		if err != nil {
			return err
		}
		if g, err = narrow(grant{network: c.network, membership: c.membership, clientID: id, scopes: c.scopes}); err != nil {
			return err
		}
		if err := s.db.issueTokens(ctx, g, access, refresh, now, now.Add(tokenTTL), now.Add(refreshTTL)); err != nil {
			return err
		}
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		if rt == "" {
			return invalidf("refresh_token: is required")
		}
		// A confidential client authenticates (RFC 6749 section 6), and
		// the refresh token must have been issued to it.
		id, _, err := s.tokenClient(r)
		if err != nil {
			return err
		}
		// The lookup, the checks, the revocation and the new pair are one
		// write transaction: of concurrent refreshes of one token, one wins.
		g, err = s.db.redeemRefreshToken(ctx, rt, func(stored grant, expires int64) (grant, error) {
			// Another client's token is answered as an unknown one and
			// stays valid for its client.
			if now.UnixMicro() >= expires || stored.clientID != id {
				return grant{}, errNotFound
			}
			return narrow(stored)
		}, access, refresh, now, now.Add(tokenTTL), now.Add(refreshTTL))
		if errors.Is(err, errNotFound) {
			return unauthorizedf("invalid or expired refresh token")
		}
		if err != nil {
			return err
		}
	case "":
		return invalidf("grant_type: is required")
	default:
		return invalidf("grant_type: unsupported grant type %q; use client_credentials or refresh_token", grantType)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, tokenResponse{
		AccessToken: access, ExpiresIn: int(tokenTTL / time.Second), RefreshToken: refresh,
		Scope: strings.Join(g.scopes, " "), TokenType: "Bearer",
	})
	return nil
}
