package stack

import (
	"bytes"
	"log"
	"log/slog"
	"strings"
	"testing"
)

// TestStdLogWithholdsUnsolicitedAnswers: net/http's message about an answer
// on an idle connection reaches the JSON log without the answer's bytes.
func TestStdLogWithholdsUnsolicitedAnswers(t *testing.T) {
	var buf bytes.Buffer
	flags, prefix, out := log.Flags(), log.Prefix(), log.Writer()
	t.Cleanup(func() { log.SetFlags(flags); log.SetPrefix(prefix); log.SetOutput(out) })
	RouteStdLog(slog.New(slog.NewJSONHandler(&buf, nil)))
	// As net/http's transport (persistConn.readLoopPeekFailLocked) writes it.
	log.Printf("Unsolicited response received on idle HTTP channel starting with %q; err=%v",
		`HTTP/1.1 200 OK\r\n\r\n{"resource":{"title":"tenant-a private"}}`, nil)
	got := buf.String()
	if strings.Contains(got, "tenant-a") || !strings.Contains(got, `"level":"WARN"`) ||
		!strings.Contains(got, "Unsolicited response received on idle HTTP channel (its content withheld)") {
		t.Fatalf("log = %s", got)
	}
}
