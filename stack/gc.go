package stack

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
)

// DefaultGOGC is the garbage collector's pacing of a facade process unless
// the environment sets GOGC: the heap may grow to five times the live heap
// before a collection. A facade's live heap is small (caches, parsed
// documents, the requests in flight) while it allocates fast, so Go's
// default (100) collects very often; 400 trades memory for fewer
// collections, and the soft memory limit (MemoryLimitPercent of the
// container's, or GOMEMLIMIT) makes the collector work harder before that
// memory reaches the container's limit.
const DefaultGOGC = 400

// MemoryLimitPercent is the share of the container's memory limit (its
// cgroup's) that SetGC gives the Go runtime as its soft memory limit when
// the environment sets no GOMEMLIMIT. The rest is for what the runtime does
// not count: the binary's mapped pages, the kernel's socket buffers charged
// to the cgroup, and the lag between the runtime releasing memory and the
// kernel taking it back. The manifests' own choice (GOMEMLIMIT=200MiB under
// a 256 MiB limit) is 78 %.
const MemoryLimitPercent = 80

// SetGC sets the runtime's memory settings and describes those in force:
//
//   - GOGC: DefaultGOGC unless getenv("GOGC") is set (the operator's value,
//     which the runtime has already applied, wins);
//   - the soft memory limit: MemoryLimitPercent of the memory limit of the
//     cgroup the process runs in (cgroup v2 memory.max, v1
//     memory.limit_in_bytes), unless getenv("GOMEMLIMIT") is set (the
//     runtime has applied it; "off" included); none when the cgroup has no
//     limit or the process runs in none.
func SetGC(getenv func(string) string) string {
	return setGC(getenv, os.DirFS("/"))
}

// setGC is SetGC reading the cgroup files from root, the file system's
// root ("/" in production).
func setGC(getenv func(string) string, root fs.FS) string {
	gc := "GOGC=" + strconv.Itoa(DefaultGOGC)
	if v := getenv("GOGC"); v != "" {
		gc = "GOGC=" + v + " (environment)"
	} else {
		debug.SetGCPercent(DefaultGOGC)
	}
	if v := getenv("GOMEMLIMIT"); v != "" {
		return gc + ", GOMEMLIMIT=" + v + " (environment)"
	}
	limit, file, ok := cgroupMemoryLimit(root)
	if !ok {
		return gc + ", no memory limit (no cgroup memory limit)"
	}
	soft := limit / 100 * MemoryLimitPercent
	debug.SetMemoryLimit(soft)
	return fmt.Sprintf("%s, GOMEMLIMIT=%s (%d %% of the cgroup's memory limit %s, %s)", gc, mib(soft), MemoryLimitPercent, mib(limit), file)
}

// mib renders a byte count in MiB, as GOMEMLIMIT accepts it.
func mib(n int64) string { return strconv.FormatInt(n>>20, 10) + "MiB" }

// cgroupMemoryLimit returns the memory limit that applies to this process,
// found from root (the file system's root): the cgroup it runs in
// (proc/self/cgroup), where that cgroup's hierarchy is mounted
// (proc/self/mountinfo), and the lowest limit of the cgroup and of its
// ancestors visible below the mount (cgroup v2: memory.max; v1, when v2 has
// no memory controller for it: memory.limit_in_bytes). It also returns the
// file the limit was read from (an absolute path) and false when no limit
// applies (none set, no cgroup, not Linux).
func cgroupMemoryLimit(root fs.FS) (int64, string, bool) {
	cg, err := fs.ReadFile(root, "proc/self/cgroup")
	if err != nil {
		return 0, "", false
	}
	mi, err := fs.ReadFile(root, "proc/self/mountinfo")
	if err != nil {
		return 0, "", false
	}
	// The cgroup of each hierarchy: "0::/path" for v2, "N:a,memory,b:/path" for v1.
	var v2, v1 string
	hasV2, hasV1 := false, false
	for line := range strings.SplitSeq(string(cg), "\n") {
		id, rest, ok1 := strings.Cut(line, ":")
		controllers, p, ok2 := strings.Cut(rest, ":")
		switch {
		case !ok1 || !ok2:
		case id == "0" && controllers == "":
			v2, hasV2 = p, true
		case containsField(controllers, ",", "memory"):
			v1, hasV1 = p, true
		}
	}
	if hasV2 {
		if m, ok := findMount(mi, "cgroup2", ""); ok {
			if n, f, ok := lowestLimit(root, m, v2, "memory.max"); ok {
				return n, f, true
			}
		}
	}
	if hasV1 {
		if m, ok := findMount(mi, "cgroup", "memory"); ok {
			return lowestLimit(root, m, v1, "memory.limit_in_bytes")
		}
	}
	return 0, "", false
}

// mount is where a cgroup hierarchy is mounted: the hierarchy's directory
// shown there (root) and the mount point.
type mount struct{ root, point string }

// findMount returns the first mount in mountinfo of file system type
// fstype whose super options hold option ("" for any).
func findMount(mountinfo []byte, fstype, option string) (mount, bool) {
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		// id parent major:minor root point options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 || g[0] != fstype || (option != "" && !containsField(g[2], ",", option)) {
			continue
		}
		return mount{root: unescapeMountinfo(f[3]), point: unescapeMountinfo(f[4])}, true
	}
	return mount{}, false
}

// lowestLimit reads file in the directory of cgroup p under m and in each
// of its parents up to the mount point, and returns the lowest limit set
// and the file it came from.
func lowestLimit(root fs.FS, m mount, p, file string) (int64, string, bool) {
	rel := "/"
	switch {
	case m.root == "/":
		rel = p
	case p == m.root || strings.HasPrefix(p, m.root+"/"):
		rel = strings.TrimPrefix(p, m.root)
	}
	// Otherwise the cgroup is not below the mounted directory (another
	// namespace's view): the mount point is the nearest view of it.
	best, bestFile := int64(0), ""
	for dir := path.Join(m.point, rel); ; dir = path.Dir(dir) {
		name := path.Join(dir, file)
		if n, ok := readLimit(root, name); ok && (bestFile == "" || n < best) {
			best, bestFile = n, name
		}
		if dir == path.Clean(m.point) || dir == "/" || dir == "." {
			break
		}
	}
	return best, bestFile, bestFile != ""
}

// noLimit is the least value of a v1 memory.limit_in_bytes that means no
// limit (the kernel writes the largest page-aligned int64).
const noLimit = 1 << 62

// readLimit reads a cgroup memory limit file (name is absolute): a byte
// count, or "max" (v2) or a value of noLimit or more (v1) for none.
func readLimit(root fs.FS, name string) (int64, bool) {
	b, err := fs.ReadFile(root, strings.TrimPrefix(name, "/"))
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 || n >= noLimit {
		return 0, false
	}
	return n, true
}

// containsField reports whether list, split by sep, holds field.
func containsField(list, sep, field string) bool {
	for f := range strings.SplitSeq(list, sep) {
		if f == field {
			return true
		}
	}
	return false
}

// unescapeMountinfo undoes mountinfo's octal escapes of a path's space,
// tab, newline and backslash.
func unescapeMountinfo(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}
