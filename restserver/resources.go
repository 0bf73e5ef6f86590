package restserver

import (
	"net/http"

	"github.com/workspacenet/facade/restserver/wire"
)

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
