// Package gctune paces the garbage collector of a facade process by a heap
// threshold instead of by the live heap alone.
//
// Go's default (GOGC=100) collects when the heap reaches twice the live heap.
// A facade's live heap is small (tens of MiB: caches, parsed documents, the
// requests in flight) while it allocates fast (a dashboard query allocates
// about 0.56 MB), so it collects hundreds of times a second, and the
// collector was a quarter of its CPU per query. With a threshold, after each
// collection GOGC is set so that the next one comes when the heap reaches the
// threshold (github.com/bytedance/gopkg/util/gctuner): at most 3 times the
// live heap (GOGC=200, maxGCPercent), and never less than Go's default, so
// once the live heap is over half the threshold nothing changes. Peak memory
// is then at most the threshold, or 3 times the live heap, plus what is not
// heap (stacks, the runtime), where the default gives twice the live heap.
//
// An operator's GOGC or GOMEMLIMIT wins: with either set, Start does nothing.
package gctune

import (
	"fmt"
	"runtime/debug"

	"github.com/bytedance/gopkg/util/gctuner"
)

// DefaultThresholdMiB is the default heap threshold. Measured by full bench
// runs (BENCHMARKS.md, issue 15): 0 / 48 / 64 MiB gave 3.87 / 3.55 (3.49 in
// a second run) / 3.46 ms of CPU per dashboard and a saturation peak RSS of
// 133.9 / 141.8 (151.8) / 149.0 MiB: about 10 % of CPU for 8 to 18 MiB.
// Those runs let GOGC reach 500; with maxGCPercent at 200 the full run of
// round 5 peaked at 127.3 MiB (the start of issue 15: 129.3).
const DefaultThresholdMiB = 48

// maxGCPercent caps GOGC, so that a small live heap does not grow to the
// whole threshold. Measured with 500 and 200 (BENCHMARKS.md, issue 15): under
// load, a facade serving single resources (a live heap of ~6 MiB) peaked at
// 55-59 / 43 MiB resident (39 with Go's default), the 25 orders at 56-59 /
// 50 (46-47), for the same CPU per request; in sequential runs the feed took
// 5.93 / 6.11 ms (7.24 with Go's default), the dashboard and the orders the
// same within the noise.
const maxGCPercent = 200

// Start paces the collector by a heap of thresholdMiB MiB for the rest of
// the process, unless thresholdMiB is 0 or getenv names GOGC or GOMEMLIMIT.
// It returns what it did, in a few words for a log line.
func Start(thresholdMiB int, getenv func(string) string) string {
	switch {
	case getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "":
		return "GOGC/GOMEMLIMIT from the environment"
	case thresholdMiB <= 0:
		gctuner.Tuning(0) // stops tuning; the last GOGC it set stays: reset it
		debug.SetGCPercent(100)
		return "Go's default pacing (GOGC=100)"
	}
	// Never collect more often than Go's default; at most at 3 times the
	// live heap.
	gctuner.SetMinGCPercent(100)
	gctuner.SetMaxGCPercent(maxGCPercent)
	gctuner.Tuning(uint64(thresholdMiB) << 20)
	return fmt.Sprintf("collections at a %d MiB heap while the live heap is under half of it", thresholdMiB)
}
