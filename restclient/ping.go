package restclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// pingID is the id Ping asks for: one that cannot exist.
const pingID = "00000000-0000-0000-0000-000000000000"

// Ping reports whether the upstream answers HTTP at all: one GET of
// OpGetResource for pingID (a read every deployment serves), without
// credentials, outside the call hooks, breakers and retries, bounded by ctx
// and the per-attempt timeout. Any answer below 500 (the 401 this probe gets
// included) proves the upstream up and returns nil.
func (c *Client) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	op := &OpGetResource.Operation
	req, err := http.NewRequestWithContext(ctx, op.Method, c.target(&call{route: op.Route, id: pingID}), nil)
	if err != nil {
		return fmt.Errorf("restclient: ping: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	hr, err := c.hc.Do(req)
	if err != nil {
		return newTransportError(op.Method, op.Route, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(hr.Body, maxErrorBody))
	hr.Body.Close()
	if hr.StatusCode >= 500 {
		return fmt.Errorf("restclient: ping: upstream answered %d", hr.StatusCode)
	}
	return nil
}
