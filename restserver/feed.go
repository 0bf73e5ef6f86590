package restserver

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/workspacenet/facade/restclient"
)

// mediaBaseURL is where stored media keys are served from.
const mediaBaseURL = "https://media.workspace.example/"

// postMedia validates media inputs and turns them into post media.
func postMedia(in []restclient.MediaInput, field string) ([]restclient.PostMedia, error) {
	if len(in) > 20 {
		return nil, invalidf("%s: at most 20 items", field)
	}
	out := make([]restclient.PostMedia, 0, len(in))
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
		out = append(out, restclient.PostMedia{ID: newID(), Key: m.Key, Mime: new(mime), URL: new(mediaBaseURL + url.PathEscape(*m.Key))})
	}
	return out, nil
}

// postOG validates a link preview; its url is required and must be http(s).
func postOG(og *restclient.PostOG, field string) (json.RawMessage, error) {
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
	ctx := r.Context()
	var req restclient.PostCreateRequest
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
	var p restclient.Post
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		if ok, err := exists(ctx, tx, "locations", c.network, locationID); err != nil || !ok {
			return notFound(orNotFound(err), "post.locationRef: location not found")
		}
		m, user, err := member(ctx, tx, c.network, c.membership)
		if err != nil {
			return err
		}
		p = restclient.Post{
			ID: newID(), Comments: new(0.0), CreateDate: restclient.NewTimestamp(now), Liked: new(false), Likes: new(0.0),
			Locale: new("en"), LocationRef: new(locationID), Media: media, Membership: &restclient.PostMembership{ID: m.ID, User: user},
			MembershipRef: new(m.ID), Og: og, Pinned: new(false), Text: req.Text, User: user,
		}
		return insert(ctx, tx, record{table: "posts", id: p.ID, network: c.network, createDate: now, doc: p,
			cols: map[string]any{"location_id": locationID}})
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"post": p}, nil
}

// updatePost is PUT /feed/posts/v1/{id}: text, media and og replace the
// post's when sent; an empty media list clears the media.
func (s *Server) updatePost(r *http.Request, c *caller) (int, any, error) {
	ctx := r.Context()
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	var req restclient.PostUpdateRequest
	if err := decodeBody(r, "post", &req); err != nil {
		return 0, nil, err
	}
	if err := maxLen(req.Text, 10000, "post.text"); err != nil {
		return 0, nil, err
	}
	var media []restclient.PostMedia
	if req.Media != nil {
		if media, err = postMedia(req.Media, "post.media"); err != nil {
			return 0, nil, err
		}
	}
	og, err := postOG(req.Og, "post.og")
	if err != nil {
		return 0, nil, err
	}
	var p restclient.Post
	err = s.db.tx(ctx, func(tx *sql.Tx) error {
		if err := getDoc(ctx, tx, "posts", c.network, id, &p); err != nil {
			return notFound(err, "post not found")
		}
		if req.Text != nil {
			p.Text = req.Text
		}
		if req.Media != nil {
			p.Media = media
		}
		if og != nil {
			p.Og = og
		}
		if (p.Text == nil || strings.TrimSpace(*p.Text) == "") && len(p.Media) == 0 {
			return invalidf("post.text: a post needs text or media")
		}
		return updateDoc(ctx, tx, "posts", c.network, id, p)
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"post": p}, nil
}

// listComments is GET /feed/posts/v1/{id}/comments: every comment of the
// post, oldest first (a reply always follows its parent). Not paged.
func (s *Server) listComments(r *http.Request, c *caller) (int, any, error) {
	ctx := r.Context()
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	if ok, err := exists(ctx, s.db.read, "posts", c.network, id); err != nil || !ok {
		return 0, nil, notFound(orNotFound(err), "post not found")
	}
	rows, err := s.db.read.QueryContext(ctx, `SELECT doc FROM comments WHERE network_id = ? AND post_id = ? ORDER BY create_date, rowid`, c.network, id)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	comments := []json.RawMessage{}
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return 0, nil, err
		}
		comments = append(comments, json.RawMessage(doc))
	}
	if err := rows.Err(); err != nil {
		return 0, nil, fmt.Errorf("list comments: %w", err)
	}
	return http.StatusOK, map[string]any{"comments": comments}, nil
}
