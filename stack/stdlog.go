package stack

import (
	"log"
	"log/slog"
	"strings"
)

// RouteStdLog sends what libraries write to the standard logger (net/http's
// transport among them) to logger, as warnings, instead of plain text on
// stderr. net/http prints an answer the upstream sent on an idle connection
// with its first bytes ("Unsolicited response received on idle HTTP channel
// starting with ..."): another tenant's data, so everything after "starting
// with" is withheld.
func RouteStdLog(logger *slog.Logger) {
	log.SetFlags(0)
	log.SetPrefix("")
	log.SetOutput(stdLogWriter{logger})
}

type stdLogWriter struct{ logger *slog.Logger }

func (w stdLogWriter) Write(p []byte) (int, error) {
	w.logger.Warn(withheld(strings.TrimSpace(string(p))), "source", "standard logger")
	return len(p), nil
}

// withheld is msg without the bytes net/http quotes after "starting with".
func withheld(msg string) string {
	if i := strings.Index(msg, " starting with"); i >= 0 {
		return msg[:i] + " (its content withheld)"
	}
	return msg
}
