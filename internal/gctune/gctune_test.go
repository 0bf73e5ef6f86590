package gctune

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// gcPercent returns the collector's current GOGC.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func env(kv ...string) func(string) string {
	return func(k string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1]
			}
		}
		return ""
	}
}

func TestStart(t *testing.T) {
	defer Start(0, env())

	// A live heap of a few MiB under a 64 MiB threshold: the next
	// collection waits for 3 times the live heap (the most allowed).
	if got := Start(64, env()); !strings.Contains(got, "64 MiB") {
		t.Errorf("Start(64) = %q", got)
	}
	runtime.GC()
	runtime.GC() // the tuner runs after a collection, from a finalizer
	for i := 0; i < 100 && gcPercent() != maxGCPercent; i++ {
		runtime.Gosched()
		runtime.GC()
	}
	if p := gcPercent(); p != maxGCPercent {
		t.Fatalf("GOGC after collections with a small live heap = %d, want %d", p, maxGCPercent)
	}

	// A live heap over half the threshold: Go's default, never less.
	ballast := make([]byte, 48<<20)
	for i := 0; i < 100 && gcPercent() != 100; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if p := gcPercent(); p != 100 {
		t.Errorf("GOGC with a 48 MiB live heap under a 64 MiB threshold = %d, want 100", p)
	}
	runtime.KeepAlive(ballast)

	// Off: Go's default again.
	if got := Start(0, env()); !strings.Contains(got, "default") {
		t.Errorf("Start(0) = %q", got)
	}
	runtime.GC()
	runtime.GC()
	if p := gcPercent(); p != 100 {
		t.Errorf("GOGC after Start(0) = %d, want 100", p)
	}
}

func TestEnvironmentWins(t *testing.T) {
	debug.SetGCPercent(100)
	for _, e := range []func(string) string{env("GOGC", "50"), env("GOMEMLIMIT", "1GiB")} {
		if got := Start(64, e); !strings.Contains(got, "environment") {
			t.Errorf("Start with GOGC/GOMEMLIMIT set = %q", got)
		}
		// Tuning would show within these collections (TestStart's loop).
		for range 20 {
			runtime.GC()
			runtime.Gosched()
		}
		if p := gcPercent(); p != 100 {
			t.Errorf("GOGC = %d after Start with the environment's setting, want it untouched (100)", p)
		}
	}
}
