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

// GetResourceLazily is GetResource for callers that seldom read more than a
// resource's scalars (lazy.go): its objects (image, autoRelease, checkIn,
// confirmationEmail, credits, money, dynamicPricing, duration,
// externalCalendar, plans, schedule) are validated, left nil, and decoded
// by Complete.
//
// REST: GET /resources/v1/{id}.
func (s *ResourcesService) GetResourceLazily(ctx context.Context, id string) (*Resource, *Response, error) {
	seg, err := escapeID("GetResourceLazily", id)
	if err != nil {
		return nil, nil, err
	}
	return doOne[Resource](ctx, s.client, http.MethodGet, "/resources/v1/{id}", seg, parseResourceLazy, nil)
}

// parseResourceLazy is GetResourceLazily's parseFunc.
var parseResourceLazy parseFunc = func(data []byte) (any, pageInfo, error) {
	v, err := parseResourceLazily(data, http.MethodGet, "/resources/v1/{id}")
	return v, pageInfo{}, err
}

// parseResourceLazily decodes {"resource": {...}} with the lazy decoder.
func parseResourceLazily(data []byte, method, route string) (*Resource, error) {
	v, deferred, err := (*Resource)(nil).parseOneLazy("resource", data)
	if err != nil {
		return nil, err
	}
	if deferred {
		v.lazy = &lazyDoc[Resource]{body: data, method: method, route: route, whole: wholeResource}
	}
	return v, nil
}

// wholeResource decodes data as GetResource does.
func wholeResource(data []byte) (*Resource, error) {
	v, _, err := parseResource(data)
	if err != nil {
		return nil, err
	}
	return v.(*Resource), nil
}

// Complete returns v with every field decoded: v itself unless
// GetResourceLazily left fields undecoded, else the resource of the whole
// body, decoded once for every caller (safe for concurrent use; v is not
// modified). Read a resource's objects through it.
func (v *Resource) Complete() (*Resource, error) {
	if v.lazy == nil {
		return v, nil
	}
	return v.lazy.decoded()
}
