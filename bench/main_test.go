package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve the upstream or the facade when
// re-executed as one of the bench's child processes.
func TestMain(m *testing.M) {
	if maybeServeUpstream() || maybeServeFacade() {
		return
	}
	os.Exit(m.Run())
}
