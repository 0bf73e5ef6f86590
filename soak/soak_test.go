package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSoakBriefly runs the soak for a few seconds with its default faults:
// the program keeps compiling and working, and the checks that do not depend
// on how fast or how busy the machine is pass: every error is one an
// injected fault or a deliberately bad input explains, and the goroutines
// come back to their count at rest after the load. Memory and goroutine
// flatness under load need minutes on a machine of its own (go run ./soak);
// here they are not judged.
func TestSoakBriefly(t *testing.T) {
	var out bytes.Buffer
	cfg, err := parseFlags([]string{"-duration", "4s", "-interval", "500ms", "-concurrency", "2"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	res, err := soak(t.Context(), cfg, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if err := res.verdict(&out, checks{}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if res.restingAfter > res.restingBefore+restSlack {
		t.Errorf("goroutines at rest: %d before the load, %d after", res.restingBefore, res.restingAfter)
	}
	if res.st.nProblem != 0 {
		t.Errorf("%d unexpected outcomes: %v", res.st.nProblem, res.st.problems)
	}
	for _, want := range []string{"| t | requests |", "injected faults", "goroutines at rest:", "flatness: not checked", "verdict: PASS"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestVerdictChecks: the verdict fails a run whose errors no injected fault
// explains or whose goroutines did not come to rest, and judges flatness
// only when asked to.
func TestVerdictChecks(t *testing.T) {
	// 9 samples whose goroutines under load triple: only flatness fails.
	var samples []sample
	for i := range 9 {
		samples = append(samples, sample{goroutines: 50 + 100*i, rssKB: 1 << 10, heapInuse: 1 << 20})
	}
	base := func() *result {
		return &result{
			cfg:      config{tolerance: 0.25, concurrency: 2},
			st:       &stats{codes: map[string]int64{}, total: map[string]int64{}, byRoute: map[string]map[string]int64{}},
			samples:  samples,
			injected: map[string]map[string]int64{"GET /resources/v1/{id}": {"500": 3}},
			// restingBefore, restingAfter: 0, at rest
		}
	}
	for _, tc := range []struct {
		name   string
		adjust func(*result)
		checks checks
		fail   string // "" passes
	}{
		{"clean run, flatness not judged", func(*result) {}, checks{}, ""},
		{"clean run, flatness judged", func(*result) {}, checks{flatness: true}, "goroutines under load grew"},
		{"explained fault errors", func(r *result) { r.st.byRoute["GET /resources/v1/{id}"] = map[string]int64{"UPSTREAM_UNAVAILABLE": 2} }, checks{}, ""},
		{"errors on a route without faults", func(r *result) { r.st.byRoute["GET /events/v1/{id}"] = map[string]int64{"UPSTREAM_UNAVAILABLE": 1} }, checks{}, "where no fault causing them was injected"},
		{"error of another kind than injected", func(r *result) { r.st.byRoute["GET /resources/v1/{id}"] = map[string]int64{"RATE_LIMITED": 1} }, checks{}, "where no fault causing them was injected"},
		{"unexpected outcome", func(r *result) { r.st.problem("dashboard: unexpected BAD_REQUEST") }, checks{}, "1 unexpected outcomes"},
		{"goroutines not at rest", func(r *result) { r.restingBefore, r.restingAfter = 40, 40+restSlack+1 }, checks{}, "goroutines at rest grew from 40 to 46"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base()
			tc.adjust(r)
			var out bytes.Buffer
			err := r.verdict(&out, tc.checks)
			if tc.fail == "" {
				if err != nil || !strings.Contains(out.String(), "verdict: PASS") {
					t.Fatalf("%v\n%s", err, out.String())
				}
				return
			}
			if err == nil || !strings.Contains(out.String(), "verdict: FAIL") || !strings.Contains(out.String(), tc.fail) {
				t.Fatalf("want a failure %q, got %v\n%s", tc.fail, err, out.String())
			}
		})
	}
}

func TestSoakRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-duration", "0"}, {"-concurrency", "0"}, {"-faults", "*=500"}, {"-faults", "GET /x=nope"}} {
		if err := run(t.Context(), args, &bytes.Buffer{}); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
