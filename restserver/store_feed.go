package restserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/workspacenet/facade/restserver/wire"
)

// Posts and comments.

// createPost stores the new post p in network, written by membership,
// created at now: it checks the location of p.LocationRef (404), loads the
// author, fills it in and stores p, in one write transaction.
func (s *store) createPost(ctx context.Context, network, membership string, now time.Time, p *wire.Post) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := mustExist(ctx, tx, "locations", network, *p.LocationRef); err != nil {
			return notFound(err, "post.locationRef: location not found")
		}
		m, user, err := member(ctx, tx, network, membership)
		if err != nil {
			return err
		}
		p.Membership, p.MembershipRef, p.User = &wire.PostMembership{ID: m.ID, User: user}, new(m.ID), user
		return insert(ctx, tx, record{table: "posts", id: p.ID, network: network, createDate: now, doc: p,
			cols: map[string]any{"location_id": *p.LocationRef}})
	})
}

// updatePost applies upd to post id of network and stores it, in one write
// transaction; errNotFound when there is no such post.
func (s *store) updatePost(ctx context.Context, network, id string, upd postUpdate) (*wire.Post, error) {
	var p wire.Post
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := getDoc(ctx, tx, "posts", network, id, &p); err != nil {
			return err
		}
		if err := upd.apply(&p); err != nil {
			return err
		}
		return updateDoc(ctx, tx, "posts", network, id, p)
	})
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// comments returns every comment of post id of network, oldest first;
// errNotFound when there is no such post.
func (s *store) comments(ctx context.Context, network, id string) ([]json.RawMessage, error) {
	if err := mustExist(ctx, s.read, "posts", network, id); err != nil {
		return nil, err
	}
	out, err := docs(ctx, s.read, `SELECT doc FROM comments WHERE network_id = ? AND post_id = ? ORDER BY create_date, rowid`, network, id)
	if err != nil {
		return nil, fmt.Errorf("list comments: %w", err)
	}
	return out, nil
}
