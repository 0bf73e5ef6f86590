package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve the upstream, the facade or the floor when
// re-executed as one of the bench's child processes.
func TestMain(m *testing.M) {
	if maybeServeUpstream() || maybeServeFacade() || maybeServeFloor() {
		return
	}
	os.Exit(m.Run())
}
