package restserver

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/workspacenet/facade/restserver/wire"
)

// mediaBaseURL is where stored media keys are served from.
const mediaBaseURL = "https://media.workspace.example/"

// postMedia validates media inputs and turns them into post media.
func postMedia(in []wire.MediaInput, field string) ([]wire.PostMedia, error) {
	if len(in) > 20 {
		return nil, invalidf("%s: at most 20 items", field)
	}
	out := make([]wire.PostMedia, 0, len(in))
	for i, m := range in {
		if m.Key == nil || strings.TrimSpace(*m.Key) == "" {
			return nil, invalidf("%s[%d].key: is required", field, i)
		}
		if len(*m.Key) > 500 {
			return nil, invalidf("%s[%d].key: at most 500 characters", field, i)
		}
		mime := "application/octet-stream"
		switch strings.ToLower(path.Ext(*m.Key)) {
		case ".jpg", ".jpeg":
			mime = "image/jpeg"
		case ".png":
			mime = "image/png"
		case ".gif":
			mime = "image/gif"
		case ".webp":
			mime = "image/webp"
		case ".mp4":
			mime = "video/mp4"
		}
		out = append(out, wire.PostMedia{ID: newID(), Key: m.Key, Mime: new(mime), URL: new(mediaBaseURL + url.PathEscape(*m.Key))})
	}
	return out, nil
}

// postOG validates a link preview; its url is required and must be http(s).
func postOG(og *wire.PostOG, field string) (json.RawMessage, error) {
	if og == nil {
		return nil, nil
	}
	if og.URL == nil || *og.URL == "" {
		return nil, invalidf("%s.url: is required when og is sent", field)
	}
	if u, err := url.Parse(*og.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, invalidf("%s.url: must be an http or https URL", field)
	}
	return json.Marshal(og)
}

// createPost is POST /feed/posts/v1 (Bearer only); the caller's membership
// is the author. A post needs text or media.
func (s *Server) createPost(r *http.Request, c *caller) (int, any, error) {
	var req wire.PostCreateRequest
	if err := decodeBody(r, "post", &req); err != nil {
		return 0, nil, err
	}
	locationID, err := refParam(req.LocationRef, "post.locationRef")
	if err != nil {
		return 0, nil, err
	}
	if err := maxLen(req.Text, 10000, "post.text"); err != nil {
		return 0, nil, err
	}
	media, err := postMedia(req.Media, "post.media")
	if err != nil {
		return 0, nil, err
	}
	if (req.Text == nil || strings.TrimSpace(*req.Text) == "") && len(media) == 0 {
		return 0, nil, invalidf("post.text: a post needs text or media")
	}
	og, err := postOG(req.Og, "post.og")
	if err != nil {
		return 0, nil, err
	}
	now := s.now().UTC()
	p := &wire.Post{
		ID: newID(), Comments: new(0.0), CreateDate: wire.NewTimestamp(now), Liked: new(false), Likes: new(0.0),
		Locale: new("en"), LocationRef: new(locationID), Media: media, Og: og, Pinned: new(false), Text: req.Text,
	}
	if err := s.db.createPost(r.Context(), c.network, c.membership, now, p); err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"post": p}, nil
}

// postUpdate is a validated PUT /feed/posts/v1/{id} body: each field
// replaces the post's when set.
type postUpdate struct {
	text     *string
	media    []wire.PostMedia
	setMedia bool // media was sent (an empty list clears the media)
	og       json.RawMessage
}

// apply changes p as upd says; the result still needs text or media (400).
func (upd postUpdate) apply(p *wire.Post) error {
	if upd.text != nil {
		p.Text = upd.text
	}
	if upd.setMedia {
		p.Media = upd.media
	}
	if upd.og != nil {
		p.Og = upd.og
	}
	if (p.Text == nil || strings.TrimSpace(*p.Text) == "") && len(p.Media) == 0 {
		return invalidf("post.text: a post needs text or media")
	}
	return nil
}

// updatePost is PUT /feed/posts/v1/{id}: text, media and og replace the
// post's when sent; an empty media list clears the media.
func (s *Server) updatePost(r *http.Request, c *caller) (int, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	var req wire.PostUpdateRequest
	if err := decodeBody(r, "post", &req); err != nil {
		return 0, nil, err
	}
	if err := maxLen(req.Text, 10000, "post.text"); err != nil {
		return 0, nil, err
	}
	upd := postUpdate{text: req.Text, setMedia: req.Media != nil}
	if upd.setMedia {
		if upd.media, err = postMedia(req.Media, "post.media"); err != nil {
			return 0, nil, err
		}
	}
	if upd.og, err = postOG(req.Og, "post.og"); err != nil {
		return 0, nil, err
	}
	p, err := s.db.updatePost(r.Context(), c.network, id, upd)
	if err != nil {
		return 0, nil, notFound(err, "post not found")
	}
	return http.StatusOK, map[string]any{"post": p}, nil
}

// listComments is GET /feed/posts/v1/{id}/comments: every comment of the
// post, oldest first (a reply always follows its parent). Not paged.
func (s *Server) listComments(r *http.Request, c *caller) (int, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	comments, err := s.db.comments(r.Context(), c.network, id)
	if err != nil {
		return 0, nil, notFound(err, "post not found")
	}
	return http.StatusOK, map[string]any{"comments": comments}, nil
}
