package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// layers are the module's floors from the bottom up (paths below the
// module, "" for the program itself): a package may import its own floor
// and the ones below it, never one above. Test files are not checked: tests
// sit above everything they test. internal/ holds three floors, each in a
// folder named for it: base (below restclient), policy (above it) and
// testsupport (above the product, under the programs that use it). A path
// ending in "/" places the packages below that folder, not the folder's
// own: graph's parts (graph/...) stand below its endpoint (graph), which
// mounts them.
var layers = []struct {
	name     string
	packages []string // path prefixes, a whole element each ("x/": below x only)
}{
	{"utilities", []string{"internal/base"}},
	{"the REST client", []string{"restclient"}},
	{"the local REST service", []string{"restserver"}},
	{"upstream policies", []string{"internal/policy"}},
	{"the GraphQL parts", []string{"graph/", "playground"}},
	{"the GraphQL endpoint", []string{"graph"}},
	{"the composition root", []string{"stack", ""}},
	{"test support", []string{"internal/testsupport", "restserver/openapi/openapitest"}},
	{"programs and test harnesses", []string{"cmd", "bench", "soak", "e2e", "restclient/internal/jsongen", "graph/internal/generate", "graph/internal/gqlgenplugin"}},
}

const module = "github.com/workspacenet/facade"

// layerOf returns the index of the layer of pkg (a path below the module),
// the most specific prefix winning; -1 for none.
func layerOf(pkg string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, p := range l.packages {
			below := strings.HasSuffix(p, "/") && strings.HasPrefix(pkg, p)
			if (below || pkg == p || p != "" && !strings.HasSuffix(p, "/") && strings.HasPrefix(pkg, p+"/")) && len(p) > bestLen {
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
		"restclient": "the REST client", "restclient/internal/jsongen": "programs and test harnesses",
		"restserver/wire": "the local REST service", "restserver/hooks": "the local REST service",
		"restserver/openapi": "the local REST service", "restserver/openapi/openapitest": "test support",
		"internal/policy/budget": "upstream policies", "graph/loaders/naive": "the GraphQL parts",
		"graph": "the GraphQL endpoint", "graph/livetransport": "the GraphQL parts",
		"internal/base/tracing/gqltrace": "utilities", "internal/testsupport/testenv": "test support",
		"playground": "the GraphQL parts", "graph/internal/generate": "programs and test harnesses",
		"graph/internal/gqlgenplugin": "programs and test harnesses", "graph/incremental": "the GraphQL parts",
	} {
		if i := layerOf(pkg); i < 0 || layers[i].name != want {
			t.Errorf("layerOf(%q) = %d, want %s", pkg, i, want)
		}
	}
	if layerOf("restclientx") >= 0 || layerOf("graphql") >= 0 || layerOf("internal/cache") >= 0 {
		t.Error("a prefix matched part of a path element")
	}
}

// TestLayoutSaysTheFloors: docs/contributing.md's Layout section names every
// floor of the layers table and every path the table places, in the table's
// order, so the page a newcomer reads is the table the test enforces.
func TestLayoutSaysTheFloors(t *testing.T) {
	b, err := os.ReadFile("docs/contributing.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	i := strings.Index(page, "\n## Layout\n")
	if i < 0 {
		t.Fatal("docs/contributing.md has no Layout section")
	}
	section := page[i+1:]
	if j := strings.Index(section[1:], "\n## "); j >= 0 {
		section = section[:j+1]
	}
	at := 0
	for _, l := range layers {
		k := strings.Index(section[at:], l.name)
		if k < 0 {
			t.Errorf("the Layout section does not name the floor %q after the one below it", l.name)
			continue
		}
		at += k + len(l.name)
		for _, p := range l.packages {
			if p != "" && !strings.Contains(section, "`"+p) {
				t.Errorf("the Layout section does not name %s (floor %q)", p, l.name)
			}
		}
	}
}
