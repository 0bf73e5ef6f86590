package restserver

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"net/mail"
	"strings"

	"github.com/workspacenet/facade/restclient"
)

type restTimestamp = restclient.Timestamp

// membershipDoc is the stored form of a membership (not an API object).
type membershipDoc struct {
	ID     string `json:"id"`
	UserID string `json:"userId"`
}

// member loads a membership of network and its user; errNotFound when the
// membership is not in network.
func member(ctx context.Context, q querier, network, membershipID string) (*membershipDoc, *restclient.User, error) {
	var m membershipDoc
	if err := getDoc(ctx, q, "memberships", network, membershipID, &m); err != nil {
		return nil, nil, err
	}
	var u restclient.User
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

// round2 rounds an amount to cents.
func round2(x float64) float64 { return math.Round(x*100) / 100 }

// notFound maps errNotFound to a 404 with msg and passes other errors on.
func notFound(err error, msg string) error {
	if errors.Is(err, errNotFound) {
		return notFoundf("%s", msg)
	}
	return err
}

// validVisitor checks a visitor's required email and name.
func validVisitor(v *restclient.Visitor, field string) error {
	if v == nil {
		return invalidf("%s: is required", field)
	}
	if v.Email == nil || strings.TrimSpace(*v.Email) == "" {
		return invalidf("%s.email: is required", field)
	}
	if a, err := mail.ParseAddress(*v.Email); err != nil || a.Address != strings.TrimSpace(*v.Email) {
		return invalidf("%s.email: must be an email address", field)
	}
	if v.Name == nil || strings.TrimSpace(*v.Name) == "" {
		return invalidf("%s.name: is required", field)
	}
	if len(*v.Name) > 200 || v.Surname != nil && len(*v.Surname) > 200 {
		return invalidf("%s.name: at most 200 characters", field)
	}
	return nil
}

// maxLen checks an optional string's length.
func maxLen(v *string, n int, field string) error {
	if v != nil && len(*v) > n {
		return invalidf("%s: at most %d characters", field, n)
	}
	return nil
}
