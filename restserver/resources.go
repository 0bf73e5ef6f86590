package restserver

import (
	"net/http"

	"github.com/workspacenet/facade/restserver/wire"
)

// getResource is GET /resources/v1/{id}.
func (s *Server) getResource(r *http.Request, c *caller) (int, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	res, err := s.db.resource(r.Context(), c.network, id)
	if err != nil {
		return 0, nil, notFound(err, "resource not found")
	}
	return http.StatusOK, map[string]any{"resource": res}, nil
}

// createBooking is POST /resources/bookings/v1. The store checks the
// resource's rules (booking.go) and stores the booking in one write
// transaction.
func (s *Server) createBooking(r *http.Request, c *caller) (int, any, error) {
	var req wire.BookingCreateRequest
	if err := decodeBody(r, "booking", &req); err != nil {
		return 0, nil, err
	}
	in, err := validateBooking(&req, c.membership)
	if err != nil {
		return 0, nil, err
	}
	b, err := s.db.createBooking(r.Context(), c.network, s.now().UTC(), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"booking": b}, nil
}
