package restserver

import (
	"context"
	"time"
)

// Activity makes the changes the real system makes outside the API, in
// one location, every interval until ctx ends: in turn a new order (status
// new), a new payment (a transaction, pending) and that payment succeeding.
// The demo program runs it so that subscriptions show live updates at once
// (docs/live-data.md). Failures are logged and skipped.
func (s *Server) Activity(ctx context.Context, location string, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	pending := ""
	for step := 0; ; step++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var err error
		switch step % 3 {
		case 0:
			err = s.copyNewest(ctx, "orders", location, map[string]any{"status": "new"})
		case 1:
			pending, err = s.copyNewestID(ctx, "transactions", location, map[string]any{"status": "pending"})
		case 2:
			if pending != "" {
				_, err = s.db.change(ctx, "transactions", pending, false, map[string]any{"status": "succeeded"}, s.now().UTC())
			}
		}
		if err != nil && ctx.Err() == nil {
			s.log.Warn("demo activity", "err", err)
		}
	}
}

func (s *Server) copyNewest(ctx context.Context, table, location string, fields map[string]any) error {
	_, err := s.copyNewestID(ctx, table, location, fields)
	return err
}

// copyNewestID copies the newest record of table in location, created now
// with fields set, and returns the copy's id.
func (s *Server) copyNewestID(ctx context.Context, table, location string, fields map[string]any) (string, error) {
	var id string
	err := s.db.read.QueryRowContext(ctx, "SELECT id FROM "+table+" WHERE location_id = ? ORDER BY create_date DESC, rowid DESC LIMIT 1", location).Scan(&id)
	if err != nil {
		return "", err
	}
	return s.db.change(ctx, table, id, true, fields, s.now().UTC())
}
