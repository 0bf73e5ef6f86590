package restserver

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// API clients and tokens. Secrets and tokens are stored as hashes
// (hashSecret), scopes as one space-separated string.

// grant is what a stored client or token grants: a membership of a network
// with scopes.
type grant struct {
	network    string
	membership string
	clientID   string // "" when the token has no client (IssueToken)
	scopes     []string
}

// putClient stores an API client with its hashed secret.
func putClient(ctx context.Context, q querier, id, secret, network, membership string, scopes []string, now time.Time) error {
	_, err := q.ExecContext(ctx, `INSERT INTO api_clients (id, network_id, secret_hash, scopes, membership_id, create_date) VALUES (?, ?, ?, ?, ?, ?)`,
		id, network, hashSecret(secret), strings.Join(scopes, " "), membership, micros(now))
	return err
}

// apiClient returns what client id grants and its stored secret hash;
// errNotFound when there is no such client.
func (s *store) apiClient(ctx context.Context, id string) (grant, []byte, error) {
	var (
		g      = grant{clientID: id}
		scopes string
		hash   []byte
	)
	err := s.read.QueryRowContext(ctx, `SELECT network_id, membership_id, scopes, secret_hash FROM api_clients WHERE id = ?`, id).
		Scan(&g.network, &g.membership, &scopes, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return grant{}, nil, errNotFound
	}
	if err != nil {
		return grant{}, nil, err
	}
	g.scopes = strings.Fields(scopes)
	return g, hash, nil
}

// putToken stores a token (by hash). renew marks the well-known demo tokens
// whose expiry the server extends while it runs.
func putToken(ctx context.Context, q querier, token, kind, network, clientID, membership string, scopes []string, expires time.Time, renew bool) error {
	_, err := q.ExecContext(ctx, `INSERT INTO tokens (hash, kind, network_id, client_id, membership_id, scopes, expires_at, renew)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (hash) DO UPDATE SET expires_at = excluded.expires_at, scopes = excluded.scopes`,
		hashSecret(token), kind, network, clientID, membership, strings.Join(scopes, " "), micros(expires), renew)
	return err
}

// putAccessToken stores an access token of membership in network with
// scopes, expiring at expires.
func (s *store) putAccessToken(ctx context.Context, token, network, membership string, scopes []string, expires time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return putToken(ctx, tx, token, "access", network, "", membership, scopes, expires, false)
	})
}

// token returns what the token of kind ("access" or "refresh") grants and
// when it expires (Unix microseconds); errNotFound when there is no such
// token, expired or not.
func (s *store) token(ctx context.Context, kind, token string) (grant, int64, error) {
	return tokenGrant(ctx, s.read, kind, token)
}

// tokenGrant is token on q.
func tokenGrant(ctx context.Context, q querier, kind, token string) (grant, int64, error) {
	var (
		g       grant
		scopes  string
		client  sql.NullString
		expires int64
	)
	err := q.QueryRowContext(ctx, `SELECT network_id, membership_id, client_id, scopes, expires_at FROM tokens WHERE hash = ? AND kind = ?`,
		hashSecret(token), kind).Scan(&g.network, &g.membership, &client, &scopes, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return grant{}, 0, errNotFound
	}
	if err != nil {
		return grant{}, 0, err
	}
	g.clientID, g.scopes = client.String, strings.Fields(scopes)
	return g, expires, nil
}

// issueTokens stores, in one transaction, a new access token and a new
// refresh token for g (expiring at accessExpires and refreshExpires) and
// deletes the tokens that expired before now (but not the renewed demo
// tokens).
func (s *store) issueTokens(ctx context.Context, g grant, access, refresh string, now, accessExpires, refreshExpires time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return putTokenPair(ctx, tx, g, access, refresh, now, accessExpires, refreshExpires)
	})
}

// redeemRefreshToken exchanges the refresh token old for a new pair in one
// write transaction (write transactions are serialized), so a refresh token
// is redeemed at most once however many requests race for it: it looks old
// up (errNotFound when there is none), passes its grant and expiry to check,
// which returns the grant of the new pair or an error that aborts, deletes
// old and stores the new pair as issueTokens does.
func (s *store) redeemRefreshToken(ctx context.Context, old string, check func(g grant, expires int64) (grant, error),
	access, refresh string, now, accessExpires, refreshExpires time.Time) (grant, error) {
	var g grant
	err := s.tx(ctx, func(tx *sql.Tx) error {
		stored, expires, err := tokenGrant(ctx, tx, "refresh", old)
		if err != nil {
			return err
		}
		if g, err = check(stored, expires); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM tokens WHERE hash = ? AND kind = 'refresh'`, hashSecret(old))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			return errNotFound
		}
		return putTokenPair(ctx, tx, g, access, refresh, now, accessExpires, refreshExpires)
	})
	return g, err
}

// putTokenPair stores an access and a refresh token for g and deletes the
// tokens that expired before now (but not the renewed demo tokens).
func putTokenPair(ctx context.Context, tx *sql.Tx, g grant, access, refresh string, now, accessExpires, refreshExpires time.Time) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM tokens WHERE expires_at < ? AND renew = 0`, micros(now)); err != nil {
		return err
	}
	if err := putToken(ctx, tx, access, "access", g.network, g.clientID, g.membership, g.scopes, accessExpires, false); err != nil {
		return err
	}
	return putToken(ctx, tx, refresh, "refresh", g.network, g.clientID, g.membership, g.scopes, refreshExpires, false)
}

// renewTokens extends the expiry of the demo tokens (renew = 1) to expires.
func (s *store) renewTokens(ctx context.Context, expires time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE tokens SET expires_at = ? WHERE renew = 1`, micros(expires))
		return err
	})
}

// expireToken makes the token of kind expire at when (a revocation when
// when is now); errNotFound when there is no such token.
func (s *store) expireToken(ctx context.Context, kind, token string, when time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE tokens SET expires_at = ?, renew = 0 WHERE hash = ? AND kind = ?`, micros(when), hashSecret(token), kind)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return errNotFound
		}
		return err
	})
}
