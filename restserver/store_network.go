package restserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/workspacenet/facade/restserver/wire"
)

// Networks, their members and the demo settings.

// membershipDoc is the stored form of a membership (not an API object).
type membershipDoc struct {
	ID     string `json:"id"`
	UserID string `json:"userId"`
}

// insertNetwork stores a network row.
func insertNetwork(ctx context.Context, q querier, id, name string, created time.Time) error {
	_, err := q.ExecContext(ctx, `INSERT INTO networks (id, name, create_date) VALUES (?, ?, ?)`, id, name, micros(created))
	return err
}

// countNetworks returns the number of networks.
func countNetworks(ctx context.Context, q querier) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM networks`).Scan(&n)
	return n, err
}

// createNetwork stores, in one transaction, a network with one location and
// its owner (user and membership), an API client with scopes and an access
// token with the same scopes, expiring at expires.
func (s *store) createNetwork(ctx context.Context, cr *Credentials, name string, now time.Time, loc wire.VisitLocation,
	owner wire.User, scopes []string, expires time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := insertNetwork(ctx, tx, cr.NetworkID, name, now); err != nil {
			return err
		}
		if err := insert(ctx, tx, record{table: "locations", id: loc.ID, network: cr.NetworkID, createDate: now, doc: loc}); err != nil {
			return err
		}
		if err := insert(ctx, tx, record{table: "users", id: owner.ID, network: cr.NetworkID, createDate: now, cols: userCols(owner), doc: owner}); err != nil {
			return err
		}
		if err := insert(ctx, tx, record{table: "memberships", id: cr.MembershipID, network: cr.NetworkID, createDate: now,
			cols: map[string]any{"user_id": owner.ID}, doc: membershipDoc{ID: cr.MembershipID, UserID: owner.ID}}); err != nil {
			return err
		}
		if err := putClient(ctx, tx, cr.ClientID, cr.ClientSecret, cr.NetworkID, cr.MembershipID, scopes, now); err != nil {
			return err
		}
		return putToken(ctx, tx, cr.BearerToken, "access", cr.NetworkID, cr.ClientID, cr.MembershipID, scopes, expires, false)
	})
}

// member loads a membership of network and its user; errNotFound when the
// membership is not in network.
func member(ctx context.Context, q querier, network, membershipID string) (*membershipDoc, *wire.User, error) {
	var m membershipDoc
	if err := getDoc(ctx, q, "memberships", network, membershipID, &m); err != nil {
		return nil, nil, err
	}
	var u wire.User
	if err := getDoc(ctx, q, "users", network, m.UserID, &u); err != nil {
		return nil, nil, err
	}
	return &m, &u, nil
}

// membershipOfUser returns the membership id of a user of network.
func membershipOfUser(ctx context.Context, q querier, network, userID string) (string, error) {
	var id string
	err := q.QueryRowContext(ctx, `SELECT id FROM memberships WHERE network_id = ? AND user_id = ? ORDER BY rowid LIMIT 1`, network, userID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", errNotFound
	}
	return id, err
}

// putDemoNetworks records the credentials of the demo networks.
func putDemoNetworks(ctx context.Context, q querier, nets []demoNetworkCreds) error {
	b, _ := json.Marshal(nets)
	_, err := q.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ('demo', ?)`, b)
	return err
}

// demoNetworks returns the credentials of the demo networks, the main one
// first; errNotFound when the database holds no demo data.
func (s *store) demoNetworks(ctx context.Context) ([]demoNetworkCreds, error) {
	var raw []byte
	err := s.read.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = 'demo'`).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, err
	}
	var nets []demoNetworkCreds
	if err := json.Unmarshal(raw, &nets); err != nil {
		return nil, err
	}
	return nets, nil
}

// recordIDs returns the ids of the records of table in network, in creation
// order.
func (s *store) recordIDs(ctx context.Context, table, network string) ([]string, error) {
	rows, err := s.read.QueryContext(ctx, "SELECT id FROM "+table+" WHERE network_id = ? ORDER BY rowid", network)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
