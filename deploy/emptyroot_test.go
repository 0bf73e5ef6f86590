package deploy

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// image is one image of the OCI layout, unpacked.
type image struct {
	root string    // its file system, a directory of its own
	cfg  v1.Config // user, entrypoint, cmd, env
}

// images returns the images of the OCI layout named by DEPLOY_IMAGES
// (imagebuild -out), unpacked, by name. Without it the test skips, or fails
// when DEPLOY_REQUIRED=1 (.ci/deploy-check).
func images(t *testing.T) map[string]image {
	t.Helper()
	dir := os.Getenv("DEPLOY_IMAGES")
	if dir == "" {
		if os.Getenv("DEPLOY_REQUIRED") == "1" {
			t.Fatal("DEPLOY_IMAGES is not set (DEPLOY_REQUIRED=1)")
		}
		t.Skip("DEPLOY_IMAGES (an OCI layout written by imagebuild) is not set: .ci/deploy-check sets it")
	}
	if _, err := exec.LookPath("chroot"); err != nil || os.Geteuid() != 0 {
		t.Fatalf("running an image's file system needs chroot and root (uid %d, %v)", os.Geteuid(), err)
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]image{}
	for _, d := range im.Manifests {
		name := d.Annotations["org.opencontainers.image.ref.name"]
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		root := t.TempDir()
		if err := os.Chmod(root, 0o755); err != nil { // "/" of the image
			t.Fatal(err)
		}
		unpack(t, img, root)
		out[name] = image{root: root, cfg: cf.Config}
	}
	return out
}

func unpack(t *testing.T, img v1.Image, dir string) {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+h.Name)))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, os.FileMode(h.Mode)&os.ModePerm)
		case tar.TypeReg:
			var b []byte
			if b, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(target, b, os.FileMode(h.Mode)&os.ModePerm)
			}
		default:
			err = fmt.Errorf("%s: entry type %c", h.Name, h.Typeflag)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// started is an image's entrypoint running under chroot as the image's user.
type started struct {
	cmd    *exec.Cmd
	stdout *bytes.Buffer // what it printed before listening
	done   chan error
}

// run starts im as a container runtime would, but on the host's network:
// chroot into its file system as its user, its entrypoint with args (nil:
// its cmd), its environment with env over it and nothing else. It waits
// for the line matching ready on stdout or stderr.
func run(t *testing.T, im image, args []string, ready string, env ...string) *started {
	t.Helper()
	if args == nil {
		args = im.cfg.Cmd
	}
	cmd := exec.Command("chroot", append([]string{"--userspec=" + im.cfg.User, im.root}, append(im.cfg.Entrypoint, args...)...)...)
	cmd.Env = append(append([]string{}, im.cfg.Env...), env...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &started{cmd: cmd, stdout: &bytes.Buffer{}, done: make(chan error, 1)}
	found := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		said := false
		for sc.Scan() {
			if !said {
				s.stdout.WriteString(sc.Text() + "\n")
				if strings.Contains(sc.Text(), ready) {
					said = true
					found <- true
				}
			}
		}
		if !said {
			found <- false
		}
	}()
	go func() { err := cmd.Wait(); pw.Close(); s.done <- err }()
	select {
	case ok := <-found:
		if !ok {
			t.Fatalf("%v exited before %q: %v\n%s", im.cfg.Entrypoint, ready, <-s.done, s.stdout)
		}
	case <-time.After(60 * time.Second): // hang guard
		_ = cmd.Process.Kill()
		t.Fatalf("%v did not print %q within 60 s:\n%s", im.cfg.Entrypoint, ready, s.stdout)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	return s
}

// stop sends SIGTERM and returns the time to exit; the exit must be clean.
func (s *started) stop(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
		return time.Since(start)
	case <-time.After(60 * time.Second): // hang guard
		t.Fatal("no exit within 60 s of SIGTERM")
		return 0
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// get returns the status and "status" field of a JSON route.
func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Status string }
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body.Status
}

// graphql posts query with a bearer token and returns data, failing on
// any error.
func graphql(t *testing.T, base, token, network, query string, vars map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("service-network-id", network)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r struct {
		Data   json.RawMessage
		Errors []any
	}
	if err := json.Unmarshal(raw, &r); err != nil || resp.StatusCode != 200 || len(r.Errors) > 0 || len(r.Data) == 0 || string(r.Data) == "null" {
		t.Fatalf("POST %s/graphql: %d %.500s", base, resp.StatusCode, raw)
	}
	return string(r.Data)
}

// demoManifest is what `restserver -demo-manifest` prints (the demo data
// is the same in the facade's embedded service).
type demoManifest struct {
	NetworkID   string              `json:"networkId"`
	BearerToken string              `json:"bearerToken"`
	IDs         map[string][]string `json:"ids"`
}

const dashboard = `query($l: ID!) { location(id: $l) {
  products { title options { title } }
  orders(first: 5) { nodes { number status product { title } } }
  transactions(first: 5) { nodes { amount currencyCode booking { resource { title capacity } } } }
} }`

// TestImagesServeFromTheirEmptyRoot runs the images built by imagebuild as
// a container runtime would (their file system only, as user 65532, their
// entrypoint, cmd and environment), on the host's loopback: the facade's
// demo (embedded SQLite service, in memory), the local REST service, and
// the facade in upstream mode over HTTPS, trusting the upstream through the
// CA bundle the image ships. Each answers /healthz, /readyz and GraphQL,
// and exits cleanly on SIGTERM.
func TestImagesServeFromTheirEmptyRoot(t *testing.T) {
	ims := images(t)
	facade, rest := ims["facade"], ims["restserver"]
	if facade.root == "" || rest.root == "" {
		t.Fatalf("want the images facade and restserver, got %v", ims)
	}
	for name, im := range ims {
		if im.cfg.User != "65532:65532" {
			t.Errorf("%s: user %q", name, im.cfg.User)
		}
		entries, _ := os.ReadDir(im.root)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Logf("%s: / holds %v; entrypoint %v, cmd %q, env %v", name, names, im.cfg.Entrypoint, im.cfg.Cmd, im.cfg.Env)
	}

	// The demo manifest, from the REST service's image.
	out, err := exec.Command("chroot", "--userspec="+rest.cfg.User, rest.root, rest.cfg.Entrypoint[0], "-demo-manifest", "-db", ":memory:").Output()
	if err != nil {
		t.Fatalf("restserver -demo-manifest: %v", err)
	}
	var m demoManifest
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}

	t.Run("demo", func(t *testing.T) {
		addr := freeAddr(t)
		s := run(t, facade, nil, "read-only", "ADDR="+addr, "METRICS_ADDR=127.0.0.1:0")
		if !strings.Contains(s.stdout.String(), "Bearer "+m.BearerToken) {
			t.Fatalf("the demo's banner does not show the manifest's token:\n%s", s.stdout)
		}
		base := "http://" + addr
		if code, st := get(t, base+"/healthz"); code != 200 || st != "ok" {
			t.Errorf("/healthz: %d %q", code, st)
		}
		if code, st := get(t, base+"/readyz"); code != 200 || st != "ready" {
			t.Errorf("/readyz: %d %q", code, st)
		}
		data := graphql(t, base, m.BearerToken, m.NetworkID, dashboard, map[string]any{"l": m.IDs["location"][0]})
		if !strings.Contains(data, `"products"`) || !strings.Contains(data, `"transactions"`) {
			t.Errorf("dashboard: %.300s", data)
		}
		resp, err := http.Get(base + "/")
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("the playground: %v %v", resp, err)
		} else {
			resp.Body.Close()
		}
		t.Logf("demo: SIGTERM to exit %v", s.stop(t).Round(time.Millisecond))
	})

	t.Run("upstream over HTTPS", func(t *testing.T) {
		restAddr := freeAddr(t)
		r := run(t, rest, nil, "listening on", "RESTSERVER_ADDR="+restAddr)
		defer r.stop(t)
		// A TLS front of the REST service with a certificate of a test CA,
		// added to (a copy of) the image's bundle.
		caPEM, cert := testCA(t)
		bundle := filepath.Join(facade.root, "etc/ssl/certs/ca-certificates.crt")
		orig, err := os.ReadFile(bundle)
		if err != nil {
			t.Fatal(err)
		}
		if pool := x509.NewCertPool(); !pool.AppendCertsFromPEM(orig) {
			t.Fatal("the image's CA bundle holds no certificate")
		}
		if err := os.WriteFile(bundle, append(orig, caPEM...), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(bundle, orig, 0o644)
		restURL, _ := url.Parse("http://" + restAddr)
		front := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(restURL))
		front.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		front.StartTLS()
		defer front.Close()

		addr := freeAddr(t)
		s := run(t, facade, nil, "listening on", "ADDR="+addr, "UPSTREAM_URL="+front.URL, "SHUTDOWN_DELAY=1s")
		base := "http://" + addr
		if code, st := get(t, base+"/readyz"); code != 200 || st != "ready" {
			t.Fatalf("/readyz: %d %q", code, st)
		}
		// The upstream over HTTPS, trusted by the image's bundle: the query
		// reaches it (readiness does not ask it).
		data := graphql(t, base, m.BearerToken, m.NetworkID, `query($id: ID!) { resource(id: $id) { id title } }`, map[string]any{"id": m.IDs["resource"][0]})
		if !strings.Contains(data, m.IDs["resource"][0]) {
			t.Errorf("resource: %s", data)
		}
		took := s.stop(t)
		t.Logf("upstream mode: SIGTERM to exit %v (SHUTDOWN_DELAY 1s)", took.Round(time.Millisecond))
		if took < time.Second {
			t.Errorf("exited %v after SIGTERM, before its SHUTDOWN_DELAY (1s)", took)
		}
		if regexp.MustCompile(`(?i)panic|permission denied|read-only file system`).MatchString(s.stdout.String()) {
			t.Errorf("output:\n%s", s.stdout)
		}
	})
}

// testCA returns a CA certificate (PEM) and a server certificate it signed
// for 127.0.0.1.
func testCA(t *testing.T) ([]byte, tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "deploy test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
