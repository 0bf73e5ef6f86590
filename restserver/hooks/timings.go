package hooks

import (
	"sync"
	"sync/atomic"
	"time"
)

// Timing is one request as Wrap served it, for latency decompositions (the
// bench's critical-path report): when it arrived, how long the injected
// latency actually slept (the timer's overshoot included) and how long the
// route's handler took after it (reading the store, encoding, writing the
// body into the server's buffers). The rest of what a client waits for is
// transport and its own work.
type Timing struct {
	Route   string        `json:"route"`
	Arrived time.Time     `json:"arrived"`
	Slept   time.Duration `json:"slept"`
	Handled time.Duration `json:"handled"`
}

type timingLog struct {
	on     atomic.Bool
	mu     sync.Mutex
	recent ring[Timing] // the last requests
}

func (l *timingLog) record(t Timing) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.on.Load() {
		return
	}
	l.recent.add(t)
}

func (l *timingLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recent.reset()
}

// RecordTimings turns the timing log on or off (off by default: on, it
// costs three clock reads and a lock per request). Turning it off empties
// it.
func (h *Hooks) RecordTimings(on bool) {
	l := &h.timings
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on.Store(on)
	if !on {
		l.recent.reset()
	}
}

// Timings returns the requests to wrapped routes since the last Reset,
// oldest first (the last 4096 at most), while RecordTimings is on.
func (h *Hooks) Timings() []Timing {
	l := &h.timings
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.recent.all()
}
