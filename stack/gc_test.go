package stack

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

// gcChildEnv, set to a directory, makes the test binary apply setGC with
// that directory as the file system's root and print the runtime's memory
// limit and SetGC's description (TestMain), as the program would at start.
const gcChildEnv = "FACADE_TEST_GC_ROOT"

func TestMain(m *testing.M) {
	if dir := os.Getenv(gcChildEnv); dir != "" {
		desc := setGC(os.Getenv, os.DirFS(dir))
		fmt.Printf("%d\n%s\n", debug.SetMemoryLimit(-1), desc)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Lines of /proc/self/mountinfo and /proc/self/cgroup as the kernel writes them.
const (
	mountV2       = "31 23 0:28 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw,nsdelegate\n"
	mountV1Memory = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	mountV1CPU    = "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
	mountUnified  = "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
	mountProc     = "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
)

// TestCgroupMemoryLimit: the limit is found for cgroup v2 and v1, in a
// container's own cgroup namespace and seen from the host's, with the
// lowest of a cgroup's and its ancestors' limits; "max", v1's "unlimited"
// and a missing file are no limit, and v1 is read when v2 has no memory
// controller for the process.
func TestCgroupMemoryLimit(t *testing.T) {
	const mi256 = "268435456\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  int64
		file  string
	}{
		{"v2 in a container's namespace", map[string]string{
			"proc/self/cgroup": "0::/\n", "proc/self/mountinfo": mountProc + mountV2,
			"sys/fs/cgroup/memory.max": mi256,
		}, 256 << 20, "/sys/fs/cgroup/memory.max"},
		{"v2 without a limit", map[string]string{
			"proc/self/cgroup": "0::/\n", "proc/self/mountinfo": mountV2,
			"sys/fs/cgroup/memory.max": "max\n",
		}, 0, ""},
		{"v2 root cgroup (no memory.max)", map[string]string{
			"proc/self/cgroup": "0::/\n", "proc/self/mountinfo": mountV2,
		}, 0, ""},
		{"v2 from the host: a parent's lower limit applies", map[string]string{
			"proc/self/cgroup":    "0::/kubepods.slice/pod1/ctr\n",
			"proc/self/mountinfo": mountProc + mountV2,
			"sys/fs/cgroup/kubepods.slice/pod1/ctr/memory.max": "max\n",
			"sys/fs/cgroup/kubepods.slice/pod1/memory.max":     "134217728\n",
			"sys/fs/cgroup/kubepods.slice/memory.max":          "1073741824\n",
		}, 128 << 20, "/sys/fs/cgroup/kubepods.slice/pod1/memory.max"},
		{"v2 mounted at the container's cgroup", map[string]string{
			"proc/self/cgroup":              "0::/kubepods/pod1/ctr\n",
			"proc/self/mountinfo":           "31 23 0:28 /kubepods/pod1/ctr /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n",
			"sys/fs/cgroup/memory.max":      mi256,
			"sys/fs/cgroup/ctr/memory.max":  "1\n", // not the process's cgroup
			"sys/fs/cgroup/pod1/memory.max": "1\n",
		}, 256 << 20, "/sys/fs/cgroup/memory.max"},
		{"v1 in a container", map[string]string{
			"proc/self/cgroup":                           "12:cpu,cpuacct:/\n4:memory:/\n0::/\n",
			"proc/self/mountinfo":                        mountV1CPU + mountV1Memory,
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "536870912\n",
		}, 512 << 20, "/sys/fs/cgroup/memory/memory.limit_in_bytes"},
		{"v1 unlimited", map[string]string{
			"proc/self/cgroup":    "4:memory:/docker/abc\n",
			"proc/self/mountinfo": mountV1Memory,
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "9223372036854771712\n",
			"sys/fs/cgroup/memory/docker/memory.limit_in_bytes":     "9223372036854771712\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes":            "9223372036854771712\n",
		}, 0, ""},
		{"v1 mounted at the container's cgroup", map[string]string{
			"proc/self/cgroup":                           "4:memory:/docker/abc\n",
			"proc/self/mountinfo":                        "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": mi256,
		}, 256 << 20, "/sys/fs/cgroup/memory/memory.limit_in_bytes"},
		{"hybrid: v2 without the memory controller, v1 with it", map[string]string{
			"proc/self/cgroup":                               "4:memory:/job\n0::/job\n",
			"proc/self/mountinfo":                            mountV1Memory + mountUnified,
			"sys/fs/cgroup/memory/job/memory.limit_in_bytes": mi256,
		}, 256 << 20, "/sys/fs/cgroup/memory/job/memory.limit_in_bytes"},
		{"a mount point with a space", map[string]string{
			"proc/self/cgroup":            "0::/\n",
			"proc/self/mountinfo":         `31 23 0:28 / /sys/fs/my\040cgroup rw - cgroup2 cgroup2 rw` + "\n",
			"sys/fs/my cgroup/memory.max": mi256,
		}, 256 << 20, "/sys/fs/my cgroup/memory.max"},
		{"no cgroup (not Linux)", map[string]string{}, 0, ""},
		{"a limit that does not parse", map[string]string{
			"proc/self/cgroup": "0::/\n", "proc/self/mountinfo": mountV2,
			"sys/fs/cgroup/memory.max": "lots\n",
		}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, data := range tc.files {
				fsys[name] = &fstest.MapFile{Data: []byte(data)}
			}
			got, file, ok := cgroupMemoryLimit(fsys)
			if got != tc.want || file != tc.file || ok != (tc.want > 0) {
				t.Errorf("cgroupMemoryLimit = %d, %q, %v; want %d, %q", got, file, ok, tc.want, tc.file)
			}
		})
	}
}

// TestSetGCFollowsTheCgroupUnlessGOMEMLIMITIsSet runs the test binary as
// the program starts (a child process, so the runtime reads its
// environment as at a start) over a file system root holding a cgroup v2
// limit of 256 MiB: without GOMEMLIMIT its memory limit is
// MemoryLimitPercent of it; with GOMEMLIMIT=100MiB, 100 MiB, whatever the
// cgroup; with GOMEMLIMIT=off, none; and with no cgroup limit, none.
func TestSetGCFollowsTheCgroupUnlessGOMEMLIMITIsSet(t *testing.T) {
	limited, unlimited := t.TempDir(), t.TempDir()
	for dir, max := range map[string]string{limited: "268435456\n", unlimited: "max\n"} {
		for name, data := range map[string]string{
			"proc/self/cgroup": "0::/\n", "proc/self/mountinfo": mountProc + mountV2, "sys/fs/cgroup/memory.max": max,
		} {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		root, gomemlimit string
		want             int64
		desc             string
	}{
		{limited, "", (256 << 20) / 100 * MemoryLimitPercent, "GOGC=400, GOMEMLIMIT=204MiB (80 % of the cgroup's memory limit 256MiB, /sys/fs/cgroup/memory.max)"},
		{limited, "100MiB", 100 << 20, "GOGC=400, GOMEMLIMIT=100MiB (environment)"},
		{limited, "off", math.MaxInt64, "GOGC=400, GOMEMLIMIT=off (environment)"},
		{unlimited, "", math.MaxInt64, "GOGC=400, no memory limit (no cgroup memory limit)"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), gcChildEnv+"="+tc.root, "GOMEMLIMIT="+tc.gomemlimit, "GOGC=")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOMEMLIMIT=%q: %v", tc.gomemlimit, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 2 {
			t.Fatalf("GOMEMLIMIT=%q: child wrote %q", tc.gomemlimit, out)
		}
		if got, _ := strconv.ParseInt(lines[0], 10, 64); got != tc.want || lines[1] != tc.desc {
			t.Errorf("GOMEMLIMIT=%q: limit %s, %q; want %d, %q", tc.gomemlimit, lines[0], lines[1], tc.want, tc.desc)
		}
	}
}
