package restclient

import (
	"context"
)

// EventsService covers the events area: events people attend.
type EventsService service

// GetEvent returns one event (OpGetEvent). The upstream requires
// service-network-id even with Basic credentials.
func (s *EventsService) GetEvent(ctx context.Context, id string) (*Event, *Response, error) {
	return get(ctx, s.client, OpGetEvent, id)
}
