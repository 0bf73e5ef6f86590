package restserver

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/workspacenet/facade/restserver/wire"
)

// Visits and visit requests.

// createVisit stores the new visit v in network, hosted by membership,
// created at now: it loads the location of v.LocationRef (404) and the host,
// fills in v's location and host, and stores it, in one write transaction.
func (s *store) createVisit(ctx context.Context, network, membership string, now time.Time, v *wire.Visit) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var loc wire.VisitLocation
		if err := getDoc(ctx, tx, "locations", network, *v.LocationRef, &loc); err != nil {
			return notFound(err, "visit.locationRef: location not found")
		}
		m, user, err := member(ctx, tx, network, membership)
		if err != nil {
			return err
		}
		v.Location, v.MembershipRefHost, v.UserHost, v.UserRefHost = &loc, new(m.ID), user, new(user.ID)
		if v.UserRefVisitor, err = userByEmail(ctx, tx, network, v.Visitor.Email); err != nil {
			return err
		}
		return insert(ctx, tx, record{table: "visits", id: v.ID, network: network, createDate: now, doc: v,
			cols: map[string]any{"location_id": *v.LocationRef}})
	})
}

// updateVisit applies upd to visit id of network and stores it, in one write
// transaction; errNotFound when there is no such visit.
func (s *store) updateVisit(ctx context.Context, network, id string, upd visitUpdate) (*wire.Visit, error) {
	var v wire.Visit
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := getDoc(ctx, tx, "visits", network, id, &v); err != nil {
			return err
		}
		upd.apply(&v)
		return updateDoc(ctx, tx, "visits", network, id, v)
	})
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// createVisitRequest stores the new visit request vr in network, created at
// now: it checks its location (404), loads the host user of vr.UserRefHost
// and that user's membership (404), fills them in and stores vr, in one
// write transaction.
func (s *store) createVisitRequest(ctx context.Context, network string, now time.Time, vr *wire.VisitRequest) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := mustExist(ctx, tx, "locations", network, *vr.LocationRef); err != nil {
			return notFound(err, "request.locationRef: location not found")
		}
		var host wire.User
		if err := getDoc(ctx, tx, "users", network, *vr.UserRefHost, &host); err != nil {
			return notFound(err, "request.userRefHost: user not found")
		}
		mid, err := membershipOfUser(ctx, tx, network, *vr.UserRefHost)
		if err != nil {
			return notFound(err, "request.userRefHost: user not found")
		}
		vr.UserHost, vr.MembershipRefHost = &host, new(mid)
		if vr.UserRefVisitor, err = userByEmail(ctx, tx, network, vr.Visitor.Email); err != nil {
			return err
		}
		return insert(ctx, tx, record{table: "visit_requests", id: vr.ID, network: network, createDate: now, doc: vr,
			cols: map[string]any{"location_id": *vr.LocationRef}})
	})
}

// userCols are the columns of a users row besides its doc: the email,
// lowercased, to recognise a visitor who is a member (userByEmail).
func userCols(u wire.User) map[string]any {
	if u.Email == nil {
		return nil
	}
	return map[string]any{"email": strings.ToLower(*u.Email)}
}

// userByEmail returns the id of the user of network whose email is email
// (case-insensitive), nil when there is none: a visitor who is a member is
// named by the visit's userRefVisitor.
func userByEmail(ctx context.Context, q querier, network string, email *string) (*string, error) {
	if email == nil {
		return nil, nil
	}
	var id string
	err := q.QueryRowContext(ctx, `SELECT id FROM users WHERE network_id = ? AND email = ? ORDER BY rowid LIMIT 1`,
		network, strings.ToLower(strings.TrimSpace(*email))).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &id, nil
}
