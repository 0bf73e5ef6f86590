package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSoakBriefly runs the soak for a few seconds with its default faults:
// the program keeps compiling and working, and its checks pass.
func TestSoakBriefly(t *testing.T) {
	var out bytes.Buffer
	err := run(t.Context(), []string{"-duration", "4s", "-interval", "500ms", "-concurrency", "2"}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"| t | requests |", "injected faults", "verdict: PASS"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSoakRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-duration", "0"}, {"-concurrency", "0"}, {"-faults", "*=500"}, {"-faults", "GET /x=nope"}} {
		if err := run(t.Context(), args, &bytes.Buffer{}); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
