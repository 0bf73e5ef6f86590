package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workspacenet/facade/graph/errcode"
	"github.com/workspacenet/facade/internal/testsupport/childproc"
	"github.com/workspacenet/facade/internal/testsupport/gqlclient"
	"github.com/workspacenet/facade/stack"
)

// The peak RSS (VmHWM) README states for a facade process flooded with
// anonymous query texts under the default bounds, the garbage collector at
// its default pacing: cachesRSSBound with the parsed-document cache
// (-query-cache-bytes) and the APQ store (-apq-cache-bytes) full;
// refusedRSSBound once queries of 1.9 MB, four at a time, have been refused
// too (their bodies are read and decoded first: transient memory that grows
// with the requests in flight).
const (
	cachesRSSBound  = 100 << 20
	refusedRSSBound = 256 << 20
)

// TestAnonymousQueryFloodsStayWithinTheMemoryBound runs the facade program
// as a child process (built here) over the local REST service and floods
// it, without credentials, four at a time, with 600 distinct valid queries
// of -max-query-bytes (a comment making up their length), 300 APQ
// registrations of valid documents and 300 of documents that do not parse,
// each of -max-query-bytes, then 40 queries of 1.9 MB (refused). The process's peak
// RSS must stay under the stated bounds.
func TestAnonymousQueryFloodsStayWithinTheMemoryBound(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/PID/status")
	}
	bin := filepath.Join(t.TempDir(), "facade")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	up, err := stack.StartUpstream(t.Context(), stack.UpstreamConfig{DemoScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })

	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-upstream", up.URL, "-metrics-addr=", "-playground=false",
		"-log-level", "error", "-upstream-rps", "0")
	cmd.Env = append(os.Environ(), "GOGC=", "GOMEMLIMIT=") // the program's own pacing (stack.SetGC)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	proc, err := childproc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proc.Stop() })
	base := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(sc.Text()); m != nil {
				base <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-base:
	case <-time.After(60 * time.Second):
		t.Fatal("the facade did not start within 60 s")
	}

	c := &gqlclient.Client{URL: url + "/graphql", HTTP: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}
	ctx := context.Background()
	const size = 64 << 10 // -max-query-bytes' default
	pad := func(prefix string, n int) string { return prefix + "\n#" + strings.Repeat("x", n-len(prefix)-2) }
	flood := func(what string, n int, req func(i int) gqlclient.Request, wantCode string) {
		t.Helper()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var bad []string
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < n; i += 4 {
					r, err := c.Post(ctx, req(i), nil)
					got := ""
					if err == nil && len(r.Errors) > 0 {
						got, _ = r.Errors[0].Extensions["code"].(string)
					}
					if err != nil || got != wantCode {
						mu.Lock()
						if len(bad) < 3 {
							bad = append(bad, fmt.Sprintf("%v %.200s", err, r.Raw))
						}
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		if len(bad) > 0 {
			t.Fatalf("%s: unexpected answers: %v", what, bad)
		}
		hwm, rss := procMemory(t, proc.Pid)
		t.Logf("after %s: VmHWM %.1f MiB, VmRSS %.1f MiB", what, float64(hwm)/(1<<20), float64(rss)/(1<<20))
	}
	hwm0, _ := procMemory(t, proc.Pid)
	t.Logf("started: VmHWM %.1f MiB", float64(hwm0)/(1<<20))

	apq := func(q string) gqlclient.Request {
		sum := sha256.Sum256([]byte(q))
		return gqlclient.Request{Query: q, Extensions: map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}}
	}
	flood("600 valid queries of 64 KiB", 600, func(i int) gqlclient.Request {
		return gqlclient.Request{Query: pad("query Q"+strconv.Itoa(i)+" { __typename }", size)}
	}, "")
	flood("300 APQ registrations of valid 64 KiB documents", 300, func(i int) gqlclient.Request {
		return apq(pad("query P"+strconv.Itoa(i)+" { __typename }", size))
	}, "")
	flood("300 APQ registrations of 64 KiB documents that do not parse", 300, func(i int) gqlclient.Request {
		return apq(pad("query X"+strconv.Itoa(i)+" { __typename", size))
	}, errcode.ParseFailed)
	if hwm, _ := procMemory(t, proc.Pid); hwm > cachesRSSBound {
		t.Errorf("peak RSS %.1f MiB with the caches full, over the stated bound of %d MiB", float64(hwm)/(1<<20), cachesRSSBound>>20)
	}
	flood("40 queries of 1.9 MB", 40, func(i int) gqlclient.Request {
		return gqlclient.Request{Query: pad("query B"+strconv.Itoa(i)+" { __typename }", 1900_000)}
	}, errcode.QueryTooLarge)

	if hwm, _ := procMemory(t, proc.Pid); hwm > refusedRSSBound {
		t.Errorf("peak RSS %.1f MiB, over the stated bound of %d MiB", float64(hwm)/(1<<20), refusedRSSBound>>20)
	}
}

// procMemory returns VmHWM and VmRSS of process pid, in bytes.
func procMemory(t *testing.T, pid int) (hwm, rss int64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok || name != "VmHWM" && name != "VmRSS" {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			t.Fatalf("%s: %q", name, v)
		}
		if name == "VmHWM" {
			hwm = kb << 10
		} else {
			rss = kb << 10
		}
	}
	return hwm, rss
}
