package restserver

import (
	"crypto/rand"
	"database/sql"
	"fmt"
	"math/big"
	"net/http"

	"github.com/workspacenet/facade/restclient"
)

// visitCode returns a random 6-digit access code.
func visitCode() string {
	n, _ := rand.Int(rand.Reader, big.NewInt(1000000))
	return fmt.Sprintf("%06d", n.Int64())
}

// createVisit is POST /visitors/visits/v1 (Bearer only). The caller's
// membership hosts the visit.
func (s *Server) createVisit(r *http.Request, c *caller) (int, any, error) {
	ctx := r.Context()
	var req restclient.VisitCreateRequest
	if err := decodeBody(r, "visit", &req); err != nil {
		return 0, nil, err
	}
	if req.Date == nil || req.Date.IsZero() {
		return 0, nil, invalidf("visit.date: is required")
	}
	locationID, err := refParam(req.LocationRef, "visit.locationRef")
	if err != nil {
		return 0, nil, err
	}
	if err := validVisitor(req.Visitor, "visit.visitor"); err != nil {
		return 0, nil, err
	}
	if err := maxLen(req.Comment, 2000, "visit.comment"); err != nil {
		return 0, nil, err
	}
	now := s.now().UTC()
	var v restclient.Visit
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		var loc restclient.VisitLocation
		if err := getDoc(ctx, tx, "locations", c.network, locationID, &loc); err != nil {
			return notFound(err, "visit.locationRef: location not found")
		}
		m, user, err := member(ctx, tx, c.network, c.membership)
		if err != nil {
			return err
		}
		v = restclient.Visit{
			ID: newID(), Code: new(visitCode()), Comment: req.Comment, CreateDate: restclient.NewTimestamp(now),
			Date: restclient.NewTimestamp(req.Date.UTC()), Location: &loc, LocationRef: new(locationID),
			MembershipRefHost: new(m.ID), UserHost: user, UserRefHost: new(user.ID), Visitor: req.Visitor,
		}
		return insert(ctx, tx, record{table: "visits", id: v.ID, network: c.network, createDate: now, doc: v,
			cols: map[string]any{"location_id": locationID}})
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"visit": v}, nil
}

// getVisit is GET /visitors/visits/v1/{id}.
func (s *Server) getVisit(r *http.Request, c *caller) (int, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	var v restclient.Visit
	if err := getDoc(r.Context(), s.db.read, "visits", c.network, id, &v); err != nil {
		return 0, nil, notFound(err, "visit not found")
	}
	return http.StatusOK, map[string]any{"visit": v}, nil
}

// updateVisit is PUT /visitors/visits/v1/{id}: date is required; comment,
// when sent, replaces the comment.
func (s *Server) updateVisit(r *http.Request, c *caller) (int, any, error) {
	ctx := r.Context()
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	var req restclient.VisitUpdateRequest
	if err := decodeBody(r, "visit", &req); err != nil {
		return 0, nil, err
	}
	if req.Date == nil || req.Date.IsZero() {
		return 0, nil, invalidf("visit.date: is required")
	}
	if err := maxLen(req.Comment, 2000, "visit.comment"); err != nil {
		return 0, nil, err
	}
	var v restclient.Visit
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		if err := getDoc(ctx, tx, "visits", c.network, id, &v); err != nil {
			return notFound(err, "visit not found")
		}
		v.Date = restclient.NewTimestamp(req.Date.UTC())
		if req.Comment != nil {
			v.Comment = req.Comment
		}
		return updateDoc(ctx, tx, "visits", c.network, id, v)
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"visit": v}, nil
}

// createVisitRequest is POST /visitors/requests/v1: a request to admit a
// visitor, hosted by the user userRefHost of the network.
func (s *Server) createVisitRequest(r *http.Request, c *caller) (int, any, error) {
	ctx := r.Context()
	var req restclient.VisitRequestCreateRequest
	if err := decodeBody(r, "request", &req); err != nil {
		return 0, nil, err
	}
	locationID, err := refParam(req.LocationRef, "request.locationRef")
	if err != nil {
		return 0, nil, err
	}
	hostID, err := refParam(req.UserRefHost, "request.userRefHost")
	if err != nil {
		return 0, nil, err
	}
	if err := validVisitor(req.Visitor, "request.visitor"); err != nil {
		return 0, nil, err
	}
	now := s.now().UTC()
	var vr restclient.VisitRequest
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		if ok, err := exists(ctx, tx, "locations", c.network, locationID); err != nil || !ok {
			return notFound(orNotFound(err), "request.locationRef: location not found")
		}
		var host restclient.User
		if err := getDoc(ctx, tx, "users", c.network, hostID, &host); err != nil {
			return notFound(err, "request.userRefHost: user not found")
		}
		mid, err := membershipOfUser(ctx, tx, c.network, hostID)
		if err != nil {
			return notFound(err, "request.userRefHost: user not found")
		}
		vr = restclient.VisitRequest{
			ID: newID(), CreateDate: restclient.NewTimestamp(now), LocationRef: new(locationID), MembershipRefHost: new(mid),
			UserHost: &host, UserRefHost: new(hostID), Visitor: req.Visitor,
		}
		return insert(ctx, tx, record{table: "visit_requests", id: vr.ID, network: c.network, createDate: now, doc: vr,
			cols: map[string]any{"location_id": locationID}})
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"request": vr}, nil
}

// orNotFound turns a nil error (a row that does not exist) into errNotFound.
func orNotFound(err error) error {
	if err == nil {
		return errNotFound
	}
	return err
}
