package restserver

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/workspacenet/facade/restserver/wire"
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
	loc := wire.VisitLocation{ID: cr.LocationID, Title: new(name + " HQ"), Address: new("1 Main Street"), TimezoneID: new("UTC")}
	user := wire.User{ID: cr.UserID, Name: new("Owner"), Surname: new(name), Email: new("owner@" + strings.ReplaceAll(strings.ToLower(name), " ", "-") + ".example")}
	if err := s.db.createNetwork(ctx, cr, name, now, loc, user, scopes, now.Add(tokenTTL)); err != nil {
		return nil, err
	}
	cr.BasicAuth = basicHeader(cr.ClientID, cr.ClientSecret)
	return cr, nil
}

// IssueToken stores a new access token for the membership of network with
// scopes, expiring at expires, and returns it.
func (s *Server) IssueToken(ctx context.Context, networkID, membershipID string, scopes []string, expires time.Time) (string, error) {
	tok := randomToken()
	return tok, s.db.putAccessToken(ctx, tok, networkID, membershipID, scopes, expires)
}

// RevokeToken ends the access token tok now: from then on the service
// answers it 401, as after a revocation. An unknown token is an error.
func (s *Server) RevokeToken(ctx context.Context, tok string) error {
	return s.db.expireToken(ctx, "access", tok, s.now())
}

func basicHeader(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))
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
	nets, err := s.db.demoNetworks(ctx)
	if errors.Is(err, errNotFound) {
		return nil, errors.New("restserver: the database holds no demo data")
	}
	if err != nil {
		return nil, err
	}
	var out []DemoManifest
	for _, n := range nets {
		m := DemoManifest{NetworkID: n.NetworkID, BasicAuth: basicHeader(n.ClientID, n.ClientSecret),
			BearerToken: n.Bearer, ReadonlyBearerToken: n.Readonly, IDs: map[string][]string{}}
		for kind, table := range manifestKinds {
			ids, err := s.db.recordIDs(ctx, table, n.NetworkID)
			if err != nil {
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
