package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// liveloadScale is the fraction of the manifest's live bounds the CI test
// drives a replica to: every bound divided by it (cmd/liveload -scale).
const liveloadScale = 5

// TestLiveBoundsFitThePodMemory runs cmd/liveload on the program (both
// built here) under the environment of deploy/k8s/facade.yaml with every
// live bound divided by liveloadScale: a replica held at those bounds
// (open connections, subscriptions of as many pollers with their
// baselines, the opening connections' pool, every subscriber's queue full
// of changed orders while no client reads). Its live memory (heap marked
// live and stacks) grows in proportion to the bounds, so the growth
// times liveloadScale, over the start, must fit the manifest's GOMEMLIMIT;
// and its peak RSS stays under the memory limit. The full bounds' figures
// are cmd/liveload's, stated in docs/deploying.md ("Memory").
func TestLiveBoundsFitThePodMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/PID/status")
	}
	if testing.Short() {
		t.Skip("starts the program and loads it")
	}
	dir := t.TempDir()
	facade, liveload := filepath.Join(dir, "facade"), filepath.Join(dir, "liveload")
	for out, pkg := range map[string]string{facade: ".", liveload: "./cmd/liveload"} {
		if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	cmd := exec.Command(liveload, "-facade", facade, "-manifest", "deploy/k8s/facade.yaml", "-scale", strconv.Itoa(liveloadScale))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("liveload: %v\n%s", err, stderr.String())
	}
	t.Logf("liveload -scale %d:\n%s", liveloadScale, stderr.String())
	var res struct {
		Env    map[string]string
		Limit  int64
		Phases []struct {
			Name      string
			Count     int
			RSS, Live int64
		}
		PeakRSS int64
		Fits    bool
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("liveload printed %s: %v", out, err)
	}
	if len(res.Phases) != 5 || res.Phases[4].Name != "buffers" || res.Phases[2].Count == 0 {
		t.Fatalf("liveload's phases: %+v", res.Phases)
	}
	memLimit, err := parseMiB(res.Env["GOMEMLIMIT"])
	if err != nil {
		t.Fatal(err)
	}
	start, most := res.Phases[0].Live, int64(0)
	for _, p := range res.Phases {
		most = max(most, p.Live)
	}
	if projected := start + (most-start)*liveloadScale; projected > memLimit {
		t.Errorf("live memory %.1f MiB at 1/%d of the bounds (%.1f at start): %.1f MiB projected at the manifest's bounds, over GOMEMLIMIT %.0f MiB",
			float64(most)/(1<<20), liveloadScale, float64(start)/(1<<20), float64(projected)/(1<<20), float64(memLimit)/(1<<20))
	}
	if !res.Fits || res.PeakRSS >= res.Limit {
		t.Errorf("peak RSS %.1f MiB, over the memory limit %.0f MiB", float64(res.PeakRSS)/(1<<20), float64(res.Limit)/(1<<20))
	}
}

// parseMiB reads a GOMEMLIMIT of the form 200MiB.
func parseMiB(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSuffix(s, "MiB"), 10, 64)
	return n << 20, err
}
