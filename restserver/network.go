package restserver

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/workspacenet/facade/restclient"
)

// Credentials are the credentials of a network made by CreateNetwork.
type Credentials struct {
	NetworkID    string
	LocationID   string // the network's first location
	UserID       string // the owner's user
	MembershipID string // the owner's membership, the caller of every credential below
	ClientID     string
	ClientSecret string
	BasicAuth    string // whole Authorization header value "Basic ..."
	BearerToken  string // access token with the given scopes, valid for one hour
}

// CreateNetwork creates a network with one location, an owner user and
// membership, an API client and a bearer token, both with scopes (nil = every
// scope). It is a helper for tests that need a second tenant.
func (s *Server) CreateNetwork(ctx context.Context, name string, scopes []string) (*Credentials, error) {
	if scopes == nil {
		scopes = AllScopes()
	}
	now := s.now().UTC()
	cr := &Credentials{NetworkID: newID(), LocationID: newID(), UserID: newID(), MembershipID: newID(),
		ClientID: "client-" + newID(), ClientSecret: randomToken(), BearerToken: randomToken()}
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		loc := restclient.VisitLocation{ID: cr.LocationID, Title: new(name + " HQ"), Address: new("1 Main Street"), TimezoneID: new("UTC")}
		user := restclient.User{ID: cr.UserID, Name: new("Owner"), Surname: new(name), Email: new("owner@" + strings.ReplaceAll(strings.ToLower(name), " ", "-") + ".example")}
		if err := createNetworkTx(ctx, tx, cr.NetworkID, name, now, loc, user, cr.MembershipID); err != nil {
			return err
		}
		if err := putClient(ctx, tx, cr.ClientID, cr.ClientSecret, cr.NetworkID, cr.MembershipID, scopes, now); err != nil {
			return err
		}
		return putToken(ctx, tx, cr.BearerToken, "access", cr.NetworkID, cr.ClientID, cr.MembershipID, scopes, now.Add(tokenTTL), false)
	})
	if err != nil {
		return nil, err
	}
	cr.BasicAuth = basicHeader(cr.ClientID, cr.ClientSecret)
	return cr, nil
}

// IssueToken stores a new access token for the membership of network with
// scopes, expiring at expires, and returns it.
func (s *Server) IssueToken(ctx context.Context, networkID, membershipID string, scopes []string, expires time.Time) (string, error) {
	tok := randomToken()
	err := s.db.tx(ctx, func(tx *sql.Tx) error {
		return putToken(ctx, tx, tok, "access", networkID, "", membershipID, scopes, expires, false)
	})
	return tok, err
}

func basicHeader(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))
}

// createNetworkTx inserts a network with one location and its owner.
func createNetworkTx(ctx context.Context, tx *sql.Tx, id, name string, now time.Time, loc restclient.VisitLocation, owner restclient.User, membershipID string) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO networks (id, name, create_date) VALUES (?, ?, ?)`, id, name, micros(now)); err != nil {
		return err
	}
	if err := insert(ctx, tx, record{table: "locations", id: loc.ID, network: id, createDate: now, doc: loc}); err != nil {
		return err
	}
	if err := insert(ctx, tx, record{table: "users", id: owner.ID, network: id, createDate: now, doc: owner}); err != nil {
		return err
	}
	return insert(ctx, tx, record{table: "memberships", id: membershipID, network: id, createDate: now,
		cols: map[string]any{"user_id": owner.ID}, doc: membershipDoc{ID: membershipID, UserID: owner.ID}})
}

// putClient stores an API client with its hashed secret.
func putClient(ctx context.Context, q querier, id, secret, network, membership string, scopes []string, now time.Time) error {
	_, err := q.ExecContext(ctx, `INSERT INTO api_clients (id, network_id, secret_hash, scopes, membership_id, create_date) VALUES (?, ?, ?, ?, ?, ?)`,
		id, network, hashSecret(secret), strings.Join(scopes, " "), membership, micros(now))
	return err
}

// DemoManifest lists the demo credentials and the ids of the demo data.
type DemoManifest struct {
	NetworkID           string              `json:"networkId"`
	BasicAuth           string              `json:"basicAuth"`           // whole header value "Basic ..."
	BearerToken         string              `json:"bearerToken"`         // every scope
	ReadonlyBearerToken string              `json:"readonlyBearerToken"` // only .readonly scopes
	IDs                 map[string][]string `json:"ids"`                 // kind -> ids, in creation order
	OtherNetworks       []DemoManifest      `json:"otherNetworks,omitempty"`
}

// manifestKinds maps each manifest kind to its table.
var manifestKinds = map[string]string{
	"location": "locations", "resource": "resources", "booking": "bookings", "invoice": "invoices",
	"invoiceItem": "invoice_items", "creditNote": "credit_notes", "transaction": "transactions", "product": "products",
	"order": "orders", "coupon": "coupons", "promocode": "promocodes", "event": "events", "post": "posts",
	"comment": "comments", "visit": "visits", "visitRequest": "visit_requests", "user": "users", "membership": "memberships",
}

// demoNetworkCreds is the stored record of a demo network's credentials.
type demoNetworkCreds struct {
	NetworkID    string `json:"networkId"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
	Bearer       string `json:"bearer"`
	Readonly     string `json:"readonly"`
}

// Manifest returns the demo credentials and ids (an error when the database
// holds no demo data). The first network is the main demo network; the
// others are in OtherNetworks.
func (s *Server) Manifest() (*DemoManifest, error) {
	ctx := context.Background()
	var raw []byte
	err := s.db.read.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = 'demo'`).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errors.New("restserver: the database holds no demo data")
	}
	if err != nil {
		return nil, err
	}
	var nets []demoNetworkCreds
	if err := json.Unmarshal(raw, &nets); err != nil {
		return nil, err
	}
	var out []DemoManifest
	for _, n := range nets {
		m := DemoManifest{NetworkID: n.NetworkID, BasicAuth: basicHeader(n.ClientID, n.ClientSecret),
			BearerToken: n.Bearer, ReadonlyBearerToken: n.Readonly, IDs: map[string][]string{}}
		for kind, table := range manifestKinds {
			rows, err := s.db.read.QueryContext(ctx, "SELECT id FROM "+table+" WHERE network_id = ? ORDER BY rowid", n.NetworkID)
			if err != nil {
				return nil, err
			}
			ids := []string{}
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return nil, err
				}
				ids = append(ids, id)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, err
			}
			m.IDs[kind] = ids
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, errors.New("restserver: the database holds no demo data")
	}
	main := out[0]
	main.OtherNetworks = out[1:]
	return &main, nil
}
