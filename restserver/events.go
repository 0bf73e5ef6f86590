package restserver

import (
	"net/http"
)

// getEvent is GET /events/v1/{id} (service-network-id required even with
// Basic).
func (s *Server) getEvent(r *http.Request, c *caller) (int, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	e, err := s.db.event(r.Context(), c.network, id)
	if err != nil {
		return 0, nil, notFound(err, "event not found")
	}
	return http.StatusOK, map[string]any{"event": e}, nil
}
