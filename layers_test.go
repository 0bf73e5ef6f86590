package main

import (
	"os/exec"
	"strings"
	"testing"
)

// layers are the module's packages from the bottom up (paths below the
// module, "" for the program itself): a package may import its own layer
// and the ones below it, never one above. Test files are not checked: tests
// sit above everything they test.
var layers = []struct {
	name     string
	packages []string // path prefixes, a whole element each
}{
	{"utilities", []string{"internal/base/accesslog", "internal/testsupport/childproc", "internal/base/clock", "internal/base/counts",
		"internal/base/credkey", "internal/base/ctxval", "internal/testsupport/gqlclient", "internal/base/httpx", "internal/base/ids",
		"internal/testsupport/queries", "internal/testsupport/redistest", "internal/base/sealbox", "internal/base/sizedlru", "internal/base/tracing", "internal/base/workers",
		"restclient/internal", "restserver/wire", "playground"}},
	{"the REST client", []string{"restclient"}},
	{"the local REST service", []string{"restserver"}},
	{"upstream policies", []string{"internal/policy/budget", "internal/policy/cache", "internal/policy/redisx", "internal/policy/apq", "internal/policy/metrics", "internal/policy/live"}},
	{"the GraphQL layer", []string{"graph"}},
	{"the composition root", []string{"stack", ""}},
	{"programs and test harnesses", []string{"cmd", "bench", "soak", "internal/testsupport/testenv", "e2e"}},
}

const module = "github.com/workspacenet/facade"

// layerOf returns the index of the layer of pkg (a path below the module),
// the most specific prefix winning; -1 for none.
func layerOf(pkg string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, p := range l.packages {
			if (pkg == p || p == "" && pkg == "" || p != "" && strings.HasPrefix(pkg, p+"/")) && len(p) > bestLen {
				best, bestLen = i, len(p)
			}
		}
	}
	return best
}

// TestImportsRunOneWay lists every package's imports (go list) and fails
// for a package in no layer and for an import of a higher layer, naming both.
func TestImportsRunOneWay(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	n := 0
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		lp := layerOf(pkg)
		if lp < 0 {
			t.Errorf("package %q is in no layer (add it to layers)", fields[0])
			continue
		}
		n++
		for _, imp := range fields[1:] {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			ip := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			li := layerOf(ip)
			if li > lp {
				t.Errorf("%s (%s) imports %s (%s, a layer above it)", fields[0], layers[lp].name, imp, layers[li].name)
			}
		}
	}
	if n < 40 {
		t.Errorf("only %d packages checked", n)
	}
}

// TestLayerOf: the most specific prefix wins, whole path elements only.
func TestLayerOf(t *testing.T) {
	for pkg, want := range map[string]string{
		"": "the composition root", "stack": "the composition root", "internal/base/ids": "utilities",
		"restclient": "the REST client", "restclient/internal/jsongen": "utilities",
		"restserver/wire": "utilities", "restserver/hooks": "the local REST service",
		"internal/policy/budget": "upstream policies", "graph/loaders/naive": "the GraphQL layer",
		"internal/base/tracing/gqltrace": "utilities", "internal/testsupport/testenv": "programs and test harnesses",
	} {
		if i := layerOf(pkg); i < 0 || layers[i].name != want {
			t.Errorf("layerOf(%q) = %d, want %s", pkg, i, want)
		}
	}
	if layerOf("restclientx") >= 0 || layerOf("graphql") >= 0 {
		t.Error("a prefix matched part of a path element")
	}
}
