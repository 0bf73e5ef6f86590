// Package clock holds waiting that respects a context.
package clock

import (
	"context"
	"time"
)

// Sleep waits d or until ctx ends, whichever comes first. It returns nil
// after a full wait and ctx.Err() when ctx ended first. For d <= 0 it does
// not wait and returns ctx.Err() (nil for a live context).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
