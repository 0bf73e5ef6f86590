package main

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// stage is what the Dockerfile's final stage says, in Target's terms.
func dockerfileStages(t *testing.T) map[string]Target {
	t.Helper()
	raw, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	// Join continuation lines, drop comments.
	text := regexp.MustCompile(`\\\n`).ReplaceAllString(string(raw), " ")
	out := map[string]Target{}
	var cur *Target
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, args, _ := strings.Cut(line, " ")
		args = strings.TrimSpace(args)
		switch strings.ToUpper(instr) {
		case "FROM":
			cur = nil
			if m := regexp.MustCompile(`^scratch AS (\S+)$`).FindStringSubmatch(args); m != nil {
				out[m[1]] = Target{Name: m[1]}
				tg := out[m[1]]
				cur = &tg
			}
		case "COPY":
			if cur != nil {
				f := strings.Fields(args)
				cur.Files = append(cur.Files, File{To: f[len(f)-1]})
			}
		case "USER":
			if cur != nil {
				cur.User = args
			}
		case "ENV":
			if cur != nil {
				cur.Env = append(cur.Env, args)
			}
		case "EXPOSE":
			if cur != nil {
				cur.Port = args + "/tcp"
			}
		case "ENTRYPOINT", "CMD":
			if cur != nil {
				var v []string
				if err := json.Unmarshal([]byte(args), &v); err != nil {
					t.Fatalf("Dockerfile %s %s: want the JSON form: %v", instr, args, err)
				}
				if instr == "CMD" {
					cur.Cmd = v
				} else {
					cur.Entrypoint = v
				}
			}
		}
		if cur != nil {
			out[cur.Name] = *cur
		}
	}
	return out
}

// TestTargetsAreTheDockerfilesFinalStages: imagebuild's image configs and
// file lists are those of the Dockerfile's FROM scratch stages, so the
// image CI builds and checks is the one `docker build` makes.
func TestTargetsAreTheDockerfilesFinalStages(t *testing.T) {
	stages := dockerfileStages(t)
	if len(stages) != len(Targets) {
		t.Errorf("the Dockerfile has %d scratch stages, imagebuild %d targets", len(stages), len(Targets))
	}
	for _, want := range Targets {
		got, ok := stages[want.Name]
		if !ok {
			t.Errorf("target %s: no FROM scratch AS %s in the Dockerfile", want.Name, want.Name)
			continue
		}
		w := want
		w.Files = nil
		for _, f := range want.Files {
			w.Files = append(w.Files, File{To: f.To})
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("target %s:\nDockerfile %+v\nimagebuild %+v", want.Name, got, w)
		}
	}
	// The facade's is the default target: the last stage.
	raw, _ := os.ReadFile("../../Dockerfile")
	froms := regexp.MustCompile(`(?m)^FROM .* AS (\S+)$`).FindAllStringSubmatch(string(raw), -1)
	if last := froms[len(froms)-1][1]; last != Targets[0].Name {
		t.Errorf("the Dockerfile's last stage is %s, want %s (docker build's default)", last, Targets[0].Name)
	}
}

// TestBuild: the image has the target's config, one layer with its files
// (modes, owner root) and their parent directories, and the same digest
// when built twice.
func TestBuild(t *testing.T) {
	dir := t.TempDir()
	// A static binary, standing for the facade.
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", "facade", "main.go")
	build.Dir, build.Env = dir, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca"), []byte("-----BEGIN CERTIFICATE-----"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := func(from string) string { return filepath.Join(dir, from) }
	// A dynamically linked one is refused.
	if _, err := os.Stat("/bin/sh"); err == nil {
		if _, err := Build(Targets[0], func(from string) string {
			if from == "facade" {
				return "/bin/sh"
			}
			return src(from)
		}, "amd64"); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
			t.Errorf("/bin/sh as the facade: %v, want it refused as dynamically linked", err)
		}
	}
	img, err := Build(Targets[0], src, "amd64")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Build(Targets[0], src, "amd64")
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds: %s and %s, want one digest", d1, d2)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if c := cf.Config; c.User != "65532:65532" || !reflect.DeepEqual(c.Entrypoint, []string{"/facade"}) || cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("config %+v", cf)
	}
	layers, _ := img.Layers()
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %o %d:%d", h.Name, h.Mode, h.Uid, h.Gid))
	}
	want := []string{"etc 755 0:0", "etc/ssl 755 0:0", "etc/ssl/certs 755 0:0", "etc/ssl/certs/ca-certificates.crt 644 0:0", "facade 755 0:0"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("files\n%v\nwant\n%v", got, want)
	}
}
