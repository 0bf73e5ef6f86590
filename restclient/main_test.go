package restclient

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind (shared
// calls, retries, servers). The benchmarks' local REST service child
// (localservice_bench_test.go) lives as long as the test binary, and with
// it the goroutine reading its stdout.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/workspacenet/facade/internal/testsupport/childproc.readHello"))
}
