package restserver

import (
	"context"

	"github.com/workspacenet/facade/restserver/wire"
)

// Events.

// event returns event id of network; errNotFound when there is none.
func (s *store) event(ctx context.Context, network, id string) (*wire.Event, error) {
	var e wire.Event
	if err := getDoc(ctx, s.read, "events", network, id, &e); err != nil {
		return nil, err
	}
	return &e, nil
}
