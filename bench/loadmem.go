package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Where the facade processes' peak RSS goes under load (-load-mem): the
// parent samples each facade process's /proc status (its resident set,
// anonymous and file-backed) and keeps the sample with the highest RSS;
// this build's facade child samples its own runtime's memory classes the
// same way and serves the sample taken at its peak, and its heap and
// goroutine profiles, on a loopback listener of its own. The peak
// (BENCHMARKS.md) splits into the binary's pages (file-backed:
// they grow with the code linked in and run), the heap up to the
// collector's goal (stack.SetGC) and the goroutines' stacks.

// facadeMemEnv, set to "1", makes the facade child sample its memory and
// serve it (facadeHello.MemURL).
const facadeMemEnv = "FACADE_BENCH_MEM"

// memSampleEvery is the sampling period, in both processes.
const memSampleEvery = 10 * time.Millisecond

// procMem is a process's resident set from /proc/<pid>/status, in KiB.
type procMem struct {
	RSS, Anon, File, HWM int64
}

// readProcMem reads /proc/<pid>/status ("self" for this process).
func readProcMem(pid string) (m procMem, ok bool) {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return m, false
	}
	for line := range strings.Lines(string(b)) {
		k, v, _ := strings.Cut(line, ":")
		var dst *int64
		switch k {
		case "VmRSS":
			dst = &m.RSS
		case "RssAnon":
			dst = &m.Anon
		case "RssFile":
			dst = &m.File
		case "VmHWM":
			dst = &m.HWM
		default:
			continue
		}
		if f := strings.Fields(v); len(f) > 0 {
			*dst, _ = strconv.ParseInt(f[0], 10, 64)
		}
	}
	return m, true
}

// runtimeMem is the Go runtime's view of a process at one moment, in bytes
// (runtime/metrics' memory classes) and counts.
type runtimeMem struct {
	Proc        procMem `json:"proc"`
	HeapObjects uint64  `json:"heapObjects"` // live and not yet swept dead objects
	HeapUnused  uint64  `json:"heapUnused"`  // in spans in use, not in objects
	HeapFree    uint64  `json:"heapFree"`    // free spans not yet returned to the OS
	HeapRelease uint64  `json:"heapReleased"`
	Stacks      uint64  `json:"stacks"` // goroutine stacks (heap/stacks + os-stacks)
	Metadata    uint64  `json:"metadata"`
	Other       uint64  `json:"other"` // profiling buckets and the rest
	Total       uint64  `json:"total"` // all the runtime mapped
	LiveHeap    uint64  `json:"liveHeap"`
	HeapGoal    uint64  `json:"heapGoal"`
	GOGC        uint64  `json:"gogc"`
	Goroutines  uint64  `json:"goroutines"`
	GCCycles    uint64  `json:"gcCycles"`
}

var runtimeMemNames = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/os-stacks:bytes",
	"/memory/classes/metadata/mcache/free:bytes",
	"/memory/classes/metadata/mcache/inuse:bytes",
	"/memory/classes/metadata/mspan/free:bytes",
	"/memory/classes/metadata/mspan/inuse:bytes",
	"/memory/classes/metadata/other:bytes",
	"/memory/classes/profiling/buckets:bytes",
	"/memory/classes/other:bytes",
	"/memory/classes/total:bytes",
	"/gc/heap/live:bytes",
	"/gc/heap/goal:bytes",
	"/gc/gogc:percent",
	"/sched/goroutines:goroutines",
	"/gc/cycles/total:gc-cycles",
}

// memPeak keeps this process's runtimeMem sample of highest RSS.
type memPeak struct {
	mu   sync.Mutex
	peak runtimeMem
}

// sampleMemPeak samples this process every memSampleEvery until ctx ends.
func sampleMemPeak(ctx context.Context, p *memPeak) {
	samples := make([]metrics.Sample, len(runtimeMemNames))
	for i, n := range runtimeMemNames {
		samples[i].Name = n
	}
	t := time.NewTicker(memSampleEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pm, ok := readProcMem("self")
		if !ok {
			continue
		}
		if pm.RSS <= p.peak.Proc.RSS { // this goroutine alone writes p.peak
			continue
		}
		metrics.Read(samples)
		v := func(i int) uint64 {
			if samples[i].Value.Kind() != metrics.KindUint64 {
				return 0
			}
			return samples[i].Value.Uint64()
		}
		m := runtimeMem{Proc: pm, HeapObjects: v(0), HeapUnused: v(1), HeapFree: v(2), HeapRelease: v(3),
			Stacks: v(4) + v(5), Metadata: v(6) + v(7) + v(8) + v(9) + v(10), Other: v(11) + v(12), Total: v(13),
			LiveHeap: v(14), HeapGoal: v(15), GOGC: v(16), Goroutines: v(17), GCCycles: v(18)}
		p.mu.Lock()
		p.peak = m
		p.mu.Unlock()
	}
}

// serveMemPeak serves, on a loopback port, the peak sample at /peak and
// the runtime's profiles at /profile/<name> (heap, goroutine: pprof's
// format; with ?debug=1 its text). It returns the base URL.
func serveMemPeak(ctx context.Context, p *memPeak) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/peak", func(w http.ResponseWriter, _ *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		_ = json.NewEncoder(w).Encode(p.peak)
	})
	mux.HandleFunc("/profile/{name}", func(w http.ResponseWriter, r *http.Request) {
		prof := pprof.Lookup(r.PathValue("name"))
		if prof == nil {
			http.NotFound(w, r)
			return
		}
		debug, _ := strconv.Atoi(r.URL.Query().Get("debug"))
		_ = prof.WriteTo(w, debug)
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	go sampleMemPeak(ctx, p)
	return "http://" + ln.Addr().String(), nil
}

// procPeaks samples facade processes' /proc status in the parent and keeps
// each one's sample of highest RSS. The zero value is ready.
type procPeaks struct {
	mu   sync.Mutex
	peak map[int]procMem // by pid
}

// watch samples pids every memSampleEvery until ctx ends.
func (pp *procPeaks) watch(ctx context.Context, pids []int) {
	t := time.NewTicker(memSampleEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, pid := range pids {
			m, ok := readProcMem(strconv.Itoa(pid))
			pp.mu.Lock()
			if ok && m.RSS > pp.peak[pid].RSS {
				if pp.peak == nil {
					pp.peak = make(map[int]procMem)
				}
				pp.peak[pid] = m
			}
			pp.mu.Unlock()
		}
	}
}

func (pp *procPeaks) of(pid int) procMem {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	return pp.peak[pid]
}

// fetchMemPeak asks this build's facade child for its peak sample.
func fetchMemPeak(base string) (runtimeMem, error) {
	var m runtimeMem
	resp, err := http.Get(base + "/peak")
	if err != nil {
		return m, err
	}
	defer resp.Body.Close()
	return m, json.NewDecoder(resp.Body).Decode(&m)
}

// fetchProfiles writes this build's facade child's heap profile to
// <prefix>.heap.pprof and its goroutines, grouped by stack, to
// <prefix>.goroutine.txt.
func fetchProfiles(base, prefix string) error {
	for _, p := range []struct{ path, file string }{{"/profile/heap", ".heap.pprof"}, {"/profile/goroutine?debug=1", ".goroutine.txt"}} {
		if err := fetchTo(base+p.path, prefix+p.file); err != nil {
			return err
		}
	}
	return nil
}

func fetchTo(url, name string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// memLines renders the peak samples: each facade's resident set at its
// peak, and this build's runtime memory classes at its own.
func memLines(res *LoadResult) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(res.PeakProc)) {
		m := res.PeakProc[name]
		fmt.Fprintf(&b, "%s: peak RSS %.1f MiB = anonymous %.1f + file %.1f (VmHWM %.1f)\n", name,
			float64(m.RSS)/1024, float64(m.Anon)/1024, float64(m.File)/1024, float64(m.HWM)/1024)
	}
	if m := res.PeakRuntime; m != nil {
		fmt.Fprintf(&b, "this build at its peak (RSS %.1f MiB, anonymous %.1f): runtime total %.1f MiB = heap objects %.1f + unused in spans %.1f + free not released %.1f + released %.1f + stacks %.1f + metadata %.1f + other %.1f; live heap %.1f, goal %.1f, GOGC %d, %d goroutines, %d GCs\n",
			float64(m.Proc.RSS)/1024, float64(m.Proc.Anon)/1024, mib(m.Total), mib(m.HeapObjects), mib(m.HeapUnused), mib(m.HeapFree), mib(m.HeapRelease),
			mib(m.Stacks), mib(m.Metadata), mib(m.Other), mib(m.LiveHeap), mib(m.HeapGoal), m.GOGC, m.Goroutines, m.GCCycles)
	}
	return b.String()
}
