package model

import "github.com/workspacenet/facade/restclient"

// LiveEvent is every subscription's event (TransactionEvent, OrderEvent,
// ...): Node is the object of the event type's node field (a
// *restclient.Order for an OrderEvent), nil with Err when the poll failed.
type LiveEvent struct {
	Kind           LiveEventKind        `json:"kind"`
	At             restclient.Timestamp `json:"at"`
	PollIntervalMs int                  `json:"pollIntervalMs"`
	Node           any                  `json:"-"`
	Err            error                `json:"-"`
}
