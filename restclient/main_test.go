package restclient

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind (shared
// calls, retries, servers).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
