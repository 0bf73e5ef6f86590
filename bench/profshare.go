package main

import (
	"bytes"
	"fmt"
	"runtime/pprof"
	"strings"

	"github.com/google/pprof/profile"
)

// Shares is where the CPU samples of profiled runs went: the code of the
// metrics packages, of the tracing packages, and the rest. A sample counts
// for the innermost frame outside the standard library (runtime, time,
// sync, ...), so the work done inside a span or under the otelhttp
// middleware counts as the facade's, and a time.Now called by the metrics as
// the metrics'. The garbage collector's own work counts as the rest: the
// allocation columns show what the packages add to it.
type Shares struct {
	Samples          int64   // CPU samples
	Total            float64 // CPU nanoseconds sampled
	Metrics, Tracing float64 // of Total
}

// The code of each, by function name prefix: the packages, and the
// facade's tracing functions elsewhere (which run, and return at once, with
// tracing off too).
var (
	metricsPackages = []string{"github.com/prometheus/", "github.com/workspacenet/facade/internal/policy/metrics"}
	tracingPackages = []string{"go.opentelemetry.io/", "github.com/workspacenet/facade/internal/base/tracing",
		"github.com/workspacenet/facade/restclient.startCallSpan", "github.com/workspacenet/facade/restclient.endCallSpan",
		"github.com/workspacenet/facade/restclient.injectTrace", "github.com/workspacenet/facade/graph/loaders.batchSpan"}
)

// MetricsPct and TracingPct are the shares in %.
func (s Shares) MetricsPct() float64 { return pctOf(s.Metrics, s.Total) }
func (s Shares) TracingPct() float64 { return pctOf(s.Tracing, s.Total) }

func pctOf(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b * 100
}

// profiled runs f under the CPU profiler and adds its samples to s; the
// profile is also written to out when not nil.
func (s *Shares) profiled(f func() error, out *bytes.Buffer) error {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return err
	}
	err := f()
	pprof.StopCPUProfile()
	if err != nil {
		return err
	}
	if out != nil {
		out.Write(buf.Bytes())
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		return fmt.Errorf("CPU profile: %w", err)
	}
	s.add(p)
	return nil
}

func (s *Shares) add(p *profile.Profile) {
	vi := len(p.SampleType) - 1 // cpu nanoseconds
	for _, smp := range p.Sample {
		v := float64(smp.Value[vi])
		s.Samples += smp.Value[0]
		s.Total += v
		switch owner(smp) {
		case "metrics":
			s.Metrics += v
		case "tracing":
			s.Tracing += v
		}
	}
}

// owner is "metrics", "tracing" or "" for the innermost frame of smp
// outside the standard library.
func owner(smp *profile.Sample) string {
	for _, loc := range smp.Location {
		for _, ln := range loc.Line { // innermost (inlined) first
			if ln.Function == nil {
				continue
			}
			name := ln.Function.Name
			if first, _, ok := strings.Cut(name, "/"); !ok || !strings.Contains(first, ".") || strings.HasPrefix(name, "golang.org/x/") {
				continue // the standard library (and its x/ extensions; main)
			}
			for _, pre := range metricsPackages {
				if strings.HasPrefix(name, pre) {
					return "metrics"
				}
			}
			for _, pre := range tracingPackages {
				if strings.HasPrefix(name, pre) {
					return "tracing"
				}
			}
			return ""
		}
	}
	return ""
}
