package restclient

import (
	"context"
)

// FeedService covers the feed area: posts and their comments.
type FeedService service

// CreatePost publishes a feed post (OpCreatePost). The upstream accepts
// bearer credentials only.
func (s *FeedService) CreatePost(ctx context.Context, req *PostCreateRequest) (*Post, *Response, error) {
	return write(ctx, s.client, OpCreatePost, "", req)
}

// UpdatePost changes a post's text, media or link preview (OpUpdatePost);
// nil fields of req are left unchanged.
func (s *FeedService) UpdatePost(ctx context.Context, id string, req *PostUpdateRequest) (*Post, *Response, error) {
	return write(ctx, s.client, OpUpdatePost, id, req)
}

// ListComments returns every comment of a post (OpListComments; the list is
// not paged).
func (s *FeedService) ListComments(ctx context.Context, postID string) ([]*Comment, *Response, error) {
	return get(ctx, s.client, OpListComments, postID)
}
