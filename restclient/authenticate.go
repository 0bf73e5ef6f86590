package restclient

import (
	"context"
	"errors"
	"net/http"
)

// ErrNoCredentials is Authenticate's answer for a context whose calls
// carry no credentials (and a client without fixed ones).
var ErrNoCredentials = errors.New("restclient: no credentials")

// The call Authenticate makes: a read every deployment serves (OpGetResource)
// of probeID, an id that cannot exist, so that any answer but a refusal of
// the credentials is a 404 (or a 403 for a scope they lack), given after the
// upstream authenticated them.
const probeID = "00000000-0000-0000-0000-000000000000"

// Authenticate proves the credentials of ctx's calls (its scope's, else
// the client's fixed ones) to the upstream, for a caller that must know
// before it holds anything for them (a live connection), at the cost of
// one call at most:
//
//   - nil when the authentication gate trusts them (a 2xx within
//     AuthGate.Trust), with no call; else after one GET of a resource that
//     cannot exist answered 2xx, 404, or 403 for a missing scope, which
//     makes them trusted as a 2xx does (the upstream authenticated them
//     before looking the id up). The call goes through ctx's hooks (the
//     rate budget among them), the gate (a probe of these credentials in
//     flight is waited for) and the breakers, never the response cache.
//   - a *RefusedCredentialsError, with no call, when the gate refused
//     them within AuthGate.RefusedTTL; the call's *ErrorResponse (or the
//     gate's error) when the upstream answers 401, or 403 naming the
//     network (IsNetworkMismatch).
//   - ErrNoCredentials when there are none.
//   - Any other error (5xx, 429, a timeout, an open breaker, ctx's end)
//     when the upstream could not tell: the credentials are neither proven
//     nor refused.
func (c *Client) Authenticate(ctx context.Context) error {
	creds := c.credentials(scopeOf(ctx))
	if creds.Authorization == "" {
		return ErrNoCredentials
	}
	if g := c.gate; g != nil {
		g.mu.Lock()
		now := g.now()
		if e, ok := g.refused.get(creds.id, now); ok {
			g.mu.Unlock()
			return refusedCall(call{method: OpGetResource.Method, route: OpGetResource.Route}, e)
		}
		_, ok := g.trusted.get(creds.id, now)
		g.mu.Unlock()
		if ok {
			return nil
		}
	}
	_, _, err := c.do(WithoutCacheReads(ctx), call{method: OpGetResource.Method, route: OpGetResource.Route, id: probeID})
	if err == nil {
		return nil
	}
	if _, refused := errors.AsType[*RefusedCredentialsError](err); refused || IsUnauthorized(err) || IsNetworkMismatch(err) {
		return err
	}
	if s := StatusCode(err); s == http.StatusNotFound || s == http.StatusForbidden {
		if g := c.gate; g != nil {
			g.mu.Lock()
			g.trusted.put(creds.id, g.now().Add(g.cfg.Trust), struct{}{})
			g.refused.remove(creds.id)
			g.mu.Unlock()
		}
		return nil
	}
	return err
}
