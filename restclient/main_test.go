package restclient

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind (shared
// calls, retries, servers). The benchmarks' local REST service child
// (localservice_bench_test.go) lives as long as the test binary, and with
// it the goroutine reading its stdout. The GET pool's idle-connection
// cleaner (fastget.go, fasthttp's HostClient) of a client whose connections
// are closed ends by itself at its next wake-up, up to 30 s later.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/workspacenet/facade/internal/childproc.readHello"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"))
}
