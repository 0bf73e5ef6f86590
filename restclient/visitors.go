package restclient

import (
	"context"
)

// VisitorsService covers the visitors area: visits and visit requests.
type VisitorsService service

// CreateVisit registers a visit (OpCreateVisit). The upstream accepts bearer
// credentials only.
func (s *VisitorsService) CreateVisit(ctx context.Context, req *VisitCreateRequest) (*Visit, *Response, error) {
	return write(ctx, s.client, OpCreateVisit, "", req)
}

// GetVisit returns one visit (OpGetVisit).
func (s *VisitorsService) GetVisit(ctx context.Context, id string) (*Visit, *Response, error) {
	return get(ctx, s.client, OpGetVisit, id)
}

// UpdateVisit changes a visit's date and, when req.Comment is set, its
// comment (OpUpdateVisit).
func (s *VisitorsService) UpdateVisit(ctx context.Context, id string, req *VisitUpdateRequest) (*Visit, *Response, error) {
	return write(ctx, s.client, OpUpdateVisit, id, req)
}

// CreateVisitRequest asks a host to admit a visitor (OpCreateVisitRequest).
func (s *VisitorsService) CreateVisitRequest(ctx context.Context, req *VisitRequestCreateRequest) (*VisitRequest, *Response, error) {
	return write(ctx, s.client, OpCreateVisitRequest, "", req)
}
