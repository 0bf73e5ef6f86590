package restclient

import (
	"context"
)

// ResourcesService covers the resources area: bookable resources and bookings.
type ResourcesService service

// CreateBooking books a resource (OpCreateBooking).
func (s *ResourcesService) CreateBooking(ctx context.Context, req *BookingCreateRequest) (*Booking, *Response, error) {
	return write(ctx, s.client, OpCreateBooking, "", req)
}

// GetResource returns one bookable resource (OpGetResource).
func (s *ResourcesService) GetResource(ctx context.Context, id string) (*Resource, *Response, error) {
	return get(ctx, s.client, OpGetResource, id)
}

// GetResourceLazily is GetResource for callers that seldom read more than a
// resource's scalars (lazy.go): its objects (image, autoRelease, checkIn,
// confirmationEmail, credits, money, dynamicPricing, duration,
// externalCalendar, plans, schedule) are validated, left nil, and decoded
// by Complete.
func (s *ResourcesService) GetResourceLazily(ctx context.Context, id string) (*Resource, *Response, error) {
	return invoke(ctx, s.client, OpGetResource, id, nil, nil, OpGetResource.lazy)
}

// resourceLazily returns GetResourceLazily's decoder for op, whose eager
// decoder (GetResource's) is eager: it decodes {"resource": {...}} with the
// lazy decoder, and Complete decodes the whole body with eager.
func resourceLazily(op *Operation, eager parseFunc) parseFunc {
	whole := func(data []byte) (*Resource, error) {
		v, _, err := eager(data)
		if err != nil {
			return nil, err
		}
		return v.(*Resource), nil
	}
	return func(data []byte) (any, pageInfo, error) {
		v, deferred, err := (*Resource)(nil).parseOneLazy(op.Key, data)
		if err != nil {
			return nil, pageInfo{}, err
		}
		if deferred {
			v.lazy = &lazyDoc[Resource]{body: data, method: op.Method, route: op.Route, whole: whole}
		}
		return v, pageInfo{}, nil
	}
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
