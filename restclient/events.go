package restclient

import (
	"context"
	"net/http"
)

// The decoders of the operations' answers, made once.
var (
	parseEvent = parseOne[Event]("event")
)

// EventsService covers the events area: events people attend.
type EventsService service

// GetEvent returns one event. The upstream requires service-network-id even
// with Basic credentials.
//
// REST: GET /events/v1/{id}.
func (s *EventsService) GetEvent(ctx context.Context, id string) (*Event, *Response, error) {
	seg, err := escapeID("GetEvent", id)
	if err != nil {
		return nil, nil, err
	}
	return doOne[Event](ctx, s.client, http.MethodGet, "/events/v1/{id}", seg, parseEvent, nil)
}
