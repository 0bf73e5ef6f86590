// Command imagebuild assembles the facade's container images without a
// daemon, the way ko does: the static binaries, already built, go into one
// layer on an empty base, with the image config of the Dockerfile's final
// stages (Targets; deploy's tests check the two agree). It writes an OCI
// image layout (one image per target, tagged by its name), and optionally a
// `docker load` tarball and the facade image's file system unpacked into a
// directory (what .ci/deploy-check runs under chroot).
//
//	go run ./imagebuild -bin DIR -ca FILE -out DIR [-docker-tar FILE] [-unpack DIR]
//
// DIR of -bin holds the binaries facade and restserver (CGO_ENABLED=0
// go build -trimpath -ldflags="-s -w", as the Dockerfile builds them).
package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// File is one file an image ships: where it comes from (a name in -bin, or
// "ca" for the -ca bundle) and its path in the image.
type File struct {
	From, To string
	Mode     int64
}

// Target is the image config and content of one of the Dockerfile's final
// stages (FROM scratch).
type Target struct {
	Name       string
	Files      []File
	User       string
	Env        []string
	Port       string // EXPOSE, e.g. "8080/tcp"
	Entrypoint []string
	Cmd        []string
}

// Targets are the Dockerfile's final stages, the default (facade) first.
var Targets = []Target{
	{
		Name: "facade",
		Files: []File{
			{From: "ca", To: "/etc/ssl/certs/ca-certificates.crt", Mode: 0o644},
			{From: "facade", To: "/facade", Mode: 0o755},
		},
		User:       "65532:65532",
		Env:        []string{"ADDR=:8080"},
		Port:       "8080/tcp",
		Entrypoint: []string{"/facade"},
		Cmd:        []string{"-data-dir="},
	},
	{
		Name:       "restserver",
		Files:      []File{{From: "restserver", To: "/restserver", Mode: 0o755}},
		User:       "65532:65532",
		Env:        []string{"RESTSERVER_ADDR=:8081"},
		Port:       "8081/tcp",
		Entrypoint: []string{"/restserver"},
		Cmd:        []string{"-db", ":memory:"},
	},
}

func main() {
	bin := flag.String("bin", "", "directory holding the static binaries facade and restserver")
	ca := flag.String("ca", "/etc/ssl/certs/ca-certificates.crt", "CA bundle shipped for HTTPS upstreams")
	out := flag.String("out", "", "OCI image layout directory to write (replaced)")
	dockerTar := flag.String("docker-tar", "", "also write both images as a `docker load` tarball here")
	unpack := flag.String("unpack", "", "also unpack the facade image's file system into this (empty or new) directory")
	arch := flag.String("arch", runtime.GOARCH, "the binaries' GOARCH")
	flag.Parse()
	if err := run(*bin, *ca, *out, *dockerTar, *unpack, *arch); err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

func run(bin, ca, out, dockerTar, unpack, arch string) error {
	if bin == "" || out == "" {
		return errors.New("-bin and -out are required")
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	p, err := layout.Write(out, empty.Index)
	if err != nil {
		return err
	}
	refs := map[name.Reference]v1.Image{}
	for _, t := range Targets {
		img, err := Build(t, func(from string) string {
			if from == "ca" {
				return ca
			}
			return filepath.Join(bin, from)
		}, arch)
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": t.Name})); err != nil {
			return err
		}
		d, _ := img.Digest()
		m, _ := img.Manifest()
		fmt.Printf("%s: %s, layer %d bytes compressed\n", t.Name, d, m.Layers[0].Size)
		ref, err := name.ParseReference(t.Name + ":dev")
		if err != nil {
			return err
		}
		refs[ref] = img
		if t.Name == "facade" && unpack != "" {
			if err := Unpack(img, unpack); err != nil {
				return fmt.Errorf("unpack: %w", err)
			}
		}
	}
	if dockerTar != "" {
		return tarball.MultiRefWriteToFile(dockerTar, refs)
	}
	return nil
}

// Build returns t's image, its files read from src(File.From).
func Build(t Target, src func(string) string, arch string) (v1.Image, error) {
	layerTar, err := layerOf(t.Files, src)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	epoch := v1.Time{Time: time.Unix(0, 0).UTC()} // reproducible
	var to []string
	for _, f := range t.Files {
		to = append(to, f.To)
	}
	base := mutate.MediaType(mutate.ConfigMediaType(empty.Image, types.OCIConfigJSON), types.OCIManifestSchema1)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, History: v1.History{Created: epoch, CreatedBy: "imagebuild: COPY " + strings.Join(to, " ")}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Created = epoch
	cf.Config = v1.Config{
		User:         t.User,
		Env:          t.Env,
		ExposedPorts: map[string]struct{}{t.Port: {}},
		Entrypoint:   t.Entrypoint,
		Cmd:          t.Cmd,
	}
	return mutate.ConfigFile(img, cf)
}

// layerOf returns the tar of files with their parent directories, owned by
// root (read-only to the user 65532), time zero, in a stable order.
func layerOf(files []File, src func(string) string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	sorted := append([]File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].To < sorted[j].To })
	for _, f := range sorted {
		var parents []string
		for d := path.Dir(f.To); d != "/"; d = path.Dir(d) {
			parents = append([]string{d}, parents...)
		}
		for _, d := range parents {
			if dirs[d] {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o755, Format: tar.FormatPAX}); err != nil {
				return nil, err
			}
		}
		if f.Mode&0o111 != 0 {
			if err := static(src(f.From)); err != nil {
				return nil, err
			}
		}
		b, err := os.ReadFile(src(f.From))
		if err != nil {
			return nil, err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(f.To, "/"), Mode: f.Mode, Size: int64(len(b)), Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(b); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// static refuses an executable that needs a dynamic loader or shared
// libraries: the image has neither.
func static(file string) error {
	f, err := elf.Open(file)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked: build it with CGO_ENABLED=0", file)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		return fmt.Errorf("%s needs %v: build it with CGO_ENABLED=0", file, libs)
	}
	return nil
}

// Unpack writes img's flattened file system into dir.
func Unpack(img v1.Image, dir string) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+h.Name)))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, os.FileMode(h.Mode)&os.ModePerm); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&os.ModePerm)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: unexpected entry type %c", h.Name, h.Typeflag)
		}
	}
}
