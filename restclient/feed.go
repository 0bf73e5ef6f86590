package restclient

import (
	"context"
	"errors"
	"net/http"
)

// The decoders of the operations' answers, made once.
var (
	parseCommentList = parseList[Comment]("comments")
	parsePost        = parseOne[Post]("post")
)

// FeedService covers the feed area: posts and their comments.
type FeedService service

// CreatePost publishes a feed post. The upstream accepts bearer credentials only.
//
// REST: POST /feed/posts/v1 with body {"post": req}.
func (s *FeedService) CreatePost(ctx context.Context, req *PostCreateRequest) (*Post, *Response, error) {
	if req == nil {
		return nil, nil, errors.New("restclient: CreatePost: nil request")
	}
	return doOne[Post](ctx, s.client, http.MethodPost, "/feed/posts/v1", "",
		parsePost, map[string]any{"post": req})
}

// UpdatePost changes a post's text, media or link preview; nil fields of req
// are left unchanged.
//
// REST: PUT /feed/posts/v1/{id} with body {"post": req}.
func (s *FeedService) UpdatePost(ctx context.Context, id string, req *PostUpdateRequest) (*Post, *Response, error) {
	seg, err := escapeID("UpdatePost", id)
	if err != nil {
		return nil, nil, err
	}
	if req == nil {
		return nil, nil, errors.New("restclient: UpdatePost: nil request")
	}
	return doOne[Post](ctx, s.client, http.MethodPut, "/feed/posts/v1/{id}", seg,
		parsePost, map[string]any{"post": req})
}

// ListComments returns every comment of a post (the list is not paged).
//
// REST: GET /feed/posts/v1/{id}/comments.
func (s *FeedService) ListComments(ctx context.Context, postID string) ([]*Comment, *Response, error) {
	seg, err := escapeID("ListComments", postID)
	if err != nil {
		return nil, nil, err
	}
	return doList[Comment](ctx, s.client, "/feed/posts/v1/{id}/comments", seg, nil, parseCommentList)
}
