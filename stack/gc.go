package stack

import (
	"runtime/debug"
	"strconv"
)

// DefaultGOGC is the garbage collector's pacing of a facade process unless
// the environment sets GOGC: the heap may grow to three times the live heap
// before a collection. A facade's live heap is small (caches, parsed
// documents, the requests in flight) while it allocates fast, so Go's
// default (100) collects very often; 200 trades a little memory for fewer
// collections.
const DefaultGOGC = 200

// SetGC applies DefaultGOGC unless getenv("GOGC") is set (the operator's
// value, which the runtime has already applied, wins), and describes the
// pacing in force.
func SetGC(getenv func(string) string) string {
	if v := getenv("GOGC"); v != "" {
		return "GOGC=" + v + " (environment)"
	}
	debug.SetGCPercent(DefaultGOGC)
	return "GOGC=" + strconv.Itoa(DefaultGOGC)
}
