package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/workspacenet/facade/internal/testsupport/testenv"
	"github.com/workspacenet/facade/restclient"
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

// TestImageBuildOutputsAreIgnored: what the daemonless image build of
// docs/deploying.md writes into the repository (the binaries' directory,
// the OCI layout, the docker load tarball) is in .gitignore, so it is never
// committed, and in .dockerignore, so it never enters the build context.
func TestImageBuildOutputsAreIgnored(t *testing.T) {
	doc, err := os.ReadFile("docs/deploying.md")
	if err != nil {
		t.Fatal(err)
	}
	var outputs []string
	for _, m := range regexp.MustCompile(`(?m)(?:-o|-out|-docker-tar) ([^\s)]+)`).FindAllStringSubmatch(string(doc), -1) {
		p := m[1]
		if strings.HasPrefix(p, "../") { // a path of the deploy module's command
			p = strings.TrimPrefix(p, "../")
		}
		outputs = append(outputs, strings.SplitN(path.Clean(p), "/", 2)[0])
	}
	slices.Sort(outputs)
	outputs = slices.Compact(outputs)
	if len(outputs) < 3 {
		t.Fatalf("docs/deploying.md: found only the outputs %q of the image build", outputs)
	}
	for _, file := range []string{".gitignore", ".dockerignore"} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(raw), "\n")
		for _, out := range outputs {
			if !slices.ContainsFunc(lines, func(l string) bool {
				return strings.Trim(strings.TrimSpace(l), "/") == out
			}) {
				t.Errorf("%s does not ignore %s, which the image build of docs/deploying.md writes", file, out)
			}
		}
	}
}

// TestLiveDataListsWhatEachWriteRefreshes: docs/live-data.md's table of
// writes has one row for each write of restclient's operation table, saying
// what its row makes stale (Stale) or why nothing (NothingStale), in the
// table's words and order.
func TestLiveDataListsWhatEachWriteRefreshes(t *testing.T) {
	doc, err := os.ReadFile("docs/live-data.md")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, o := range restclient.Operations() {
		if o.Method != http.MethodGet {
			want = append(want, writeRow(o))
		}
	}
	var got []string
	for line := range strings.SplitSeq(string(doc), "\n") {
		if strings.HasPrefix(line, "| `POST ") || strings.HasPrefix(line, "| `PUT ") {
			got = append(got, line)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("docs/live-data.md's rows of writes:\n%s\nwant, from restclient/operations.go:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// writeRow is the row of docs/live-data.md's table of writes for o.
func writeRow(o restclient.Operation) string {
	if len(o.Stale) == 0 {
		return "| `" + o.Pattern() + "` | nothing: " + o.NothingStale + " |"
	}
	var parts []string
	for _, s := range o.Stale {
		var value string
		switch s.From {
		case "{id}":
			value = "the written id"
		case restclient.AnyValue:
			value = "any value"
		default:
			value = "its `" + s.From + "`"
		}
		parts = append(parts, "`GET "+s.Route+"` with `"+s.Param+"` = "+value)
	}
	return "| `" + o.Pattern() + "` | " + strings.Join(parts, "; ") + " |"
}

// TestMeasurementPagesAreReferences: BENCHMARKS.md and RELIABILITY.md are
// reference pages (the method, the latest results, what each limit means);
// no heading is dated, and no heading names a session or a run of a day:
// history stays in the commit log.
func TestMeasurementPagesAreReferences(t *testing.T) {
	dated := regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b|(?i)\b(session|run of|round \d+)\b`)
	for _, page := range []string{"BENCHMARKS.md", "RELIABILITY.md"} {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "#") && dated.MatchString(line) {
				t.Errorf("%s:%d: a dated or diary heading: %q", page, i+1, line)
			}
		}
	}
}
