package restserver

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"net/http"
	"net/mail"
	"strings"

	"github.com/workspacenet/facade/restserver/wire"
)

// visitCode returns a random 6-digit access code.
func visitCode() string {
	n, _ := rand.Int(rand.Reader, big.NewInt(1000000))
	return fmt.Sprintf("%06d", n.Int64())
}

// validVisitor checks a visitor's required email and name.
func validVisitor(v *wire.Visitor, field string) error {
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

// createVisit is POST /visitors/visits/v1 (Bearer only). The caller's
// membership hosts the visit.
func (s *Server) createVisit(r *http.Request, c *caller) (int, any, error) {
	var req wire.VisitCreateRequest
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
	v := &wire.Visit{
		ID: newID(), Code: new(visitCode()), Comment: req.Comment, CreateDate: wire.NewTimestamp(now),
		Date: wire.NewTimestamp(req.Date.UTC()), LocationRef: new(locationID), Visitor: req.Visitor,
	}
	if err := s.db.createVisit(r.Context(), c.network, c.membership, now, v); err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"visit": v}, nil
}

// visitUpdate is a validated PUT /visitors/visits/v1/{id} body.
type visitUpdate struct {
	date    *wire.Timestamp // replaces the date
	comment *string         // replaces the comment when not nil
}

// apply changes v as upd says.
func (upd visitUpdate) apply(v *wire.Visit) {
	v.Date = upd.date
	if upd.comment != nil {
		v.Comment = upd.comment
	}
}

// updateVisit is PUT /visitors/visits/v1/{id}: date is required; comment,
// when sent, replaces the comment.
func (s *Server) updateVisit(r *http.Request, c *caller) (int, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	var req wire.VisitUpdateRequest
	if err := decodeBody(r, "visit", &req); err != nil {
		return 0, nil, err
	}
	if req.Date == nil || req.Date.IsZero() {
		return 0, nil, invalidf("visit.date: is required")
	}
	if err := maxLen(req.Comment, 2000, "visit.comment"); err != nil {
		return 0, nil, err
	}
	v, err := s.db.updateVisit(r.Context(), c.network, id, visitUpdate{date: wire.NewTimestamp(req.Date.UTC()), comment: req.Comment})
	if err != nil {
		return 0, nil, notFound(err, "visit not found")
	}
	return http.StatusOK, map[string]any{"visit": v}, nil
}

// createVisitRequest is POST /visitors/requests/v1: a request to admit a
// visitor, hosted by the user userRefHost of the network.
func (s *Server) createVisitRequest(r *http.Request, c *caller) (int, any, error) {
	var req wire.VisitRequestCreateRequest
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
	vr := &wire.VisitRequest{
		ID: newID(), CreateDate: wire.NewTimestamp(now), LocationRef: new(locationID), UserRefHost: new(hostID), Visitor: req.Visitor,
	}
	if err := s.db.createVisitRequest(r.Context(), c.network, now, vr); err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"request": vr}, nil
}
