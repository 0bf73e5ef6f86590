package restclient

import (
	"context"
	"errors"
	"net/http"
)

// The decoders of the operations' answers, made once.
var (
	parseVisit        = parseOne[Visit]("visit")
	parseVisitRequest = parseOne[VisitRequest]("request")
)

// VisitorsService covers the visitors area: visits and visit requests.
type VisitorsService service

// CreateVisit registers a visit. The upstream accepts bearer credentials only.
//
// REST: POST /visitors/visits/v1 with body {"visit": req}.
func (s *VisitorsService) CreateVisit(ctx context.Context, req *VisitCreateRequest) (*Visit, *Response, error) {
	if req == nil {
		return nil, nil, errors.New("restclient: CreateVisit: nil request")
	}
	return doOne[Visit](ctx, s.client, http.MethodPost, "/visitors/visits/v1", "",
		parseVisit, map[string]any{"visit": req})
}

// GetVisit returns one visit.
//
// REST: GET /visitors/visits/v1/{id}.
func (s *VisitorsService) GetVisit(ctx context.Context, id string) (*Visit, *Response, error) {
	seg, err := escapeID("GetVisit", id)
	if err != nil {
		return nil, nil, err
	}
	return doOne[Visit](ctx, s.client, http.MethodGet, "/visitors/visits/v1/{id}", seg, parseVisit, nil)
}

// UpdateVisit changes a visit's date and, when req.Comment is set, its comment.
//
// REST: PUT /visitors/visits/v1/{id} with body {"visit": req}.
func (s *VisitorsService) UpdateVisit(ctx context.Context, id string, req *VisitUpdateRequest) (*Visit, *Response, error) {
	seg, err := escapeID("UpdateVisit", id)
	if err != nil {
		return nil, nil, err
	}
	if req == nil {
		return nil, nil, errors.New("restclient: UpdateVisit: nil request")
	}
	return doOne[Visit](ctx, s.client, http.MethodPut, "/visitors/visits/v1/{id}", seg,
		parseVisit, map[string]any{"visit": req})
}

// CreateVisitRequest asks a host to admit a visitor.
//
// REST: POST /visitors/requests/v1 with body {"request": req}.
func (s *VisitorsService) CreateVisitRequest(ctx context.Context, req *VisitRequestCreateRequest) (*VisitRequest, *Response, error) {
	if req == nil {
		return nil, nil, errors.New("restclient: CreateVisitRequest: nil request")
	}
	return doOne[VisitRequest](ctx, s.client, http.MethodPost, "/visitors/requests/v1", "",
		parseVisitRequest, map[string]any{"request": req})
}
