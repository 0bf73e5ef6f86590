package restclient

import (
	"context"
	"errors"
	"net/http"
)

// The decoders of the operations' answers, made once.
var (
	parseBooking  = parseOne[Booking]("booking")
	parseResource = parseOne[Resource]("resource")
)

// ResourcesService covers the resources area: bookable resources and bookings.
type ResourcesService service

// CreateBooking books a resource.
//
// REST: POST /resources/bookings/v1 with body {"booking": req}.
func (s *ResourcesService) CreateBooking(ctx context.Context, req *BookingCreateRequest) (*Booking, *Response, error) {
	if req == nil {
		return nil, nil, errors.New("restclient: CreateBooking: nil request")
	}
	return doOne[Booking](ctx, s.client, http.MethodPost, "/resources/bookings/v1", "",
		parseBooking, map[string]any{"booking": req})
}

// GetResource returns one bookable resource.
//
// REST: GET /resources/v1/{id}.
func (s *ResourcesService) GetResource(ctx context.Context, id string) (*Resource, *Response, error) {
	seg, err := escapeID("GetResource", id)
	if err != nil {
		return nil, nil, err
	}
	return doOne[Resource](ctx, s.client, http.MethodGet, "/resources/v1/{id}", seg, parseResource, nil)
}
