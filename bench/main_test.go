package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve the upstream when re-executed as the
// bench's child process.
func TestMain(m *testing.M) {
	if maybeServeUpstream() {
		return
	}
	os.Exit(m.Run())
}
