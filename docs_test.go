package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"testing"

	"github.com/workspacenet/facade/testenv"
)

// TestDocsStateEveryFlagWithItsDefault: docs/configuration.md has a row for
// every flag of the program, and every flag row of it and of README.md's
// tables (configuration and limits at a glance) names a flag the program
// has, with its environment variable and its default.
func TestDocsStateEveryFlagWithItsDefault(t *testing.T) {
	var usage bytes.Buffer
	noEnv := func(string) string { return "" }
	if err := run(context.Background(), []string{"-h"}, noEnv, io.Discard, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run -h: %v", err)
	}
	testenv.CheckFlagTables(t, testenv.UsageFlags(t, usage.String()), "docs/configuration.md", "README.md")
}
