// Package deploy holds the deployment files (the Kubernetes manifests in
// k8s/, compose.yaml) and their checks, in a Go module of its own so that
// the Kubernetes API types and the image library stay out of the product's
// go.mod. Its tests run in .ci/deploy-check.
package deploy

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// object is one decoded manifest document.
type object struct {
	file string
	kind string
	obj  any
}

// decodeManifests strictly decodes every document of every k8s/*.yaml into
// the Kubernetes API type its apiVersion and kind name: an unknown field, a
// value of the wrong type, or a kind the facade does not use fails.
func decodeManifests(t *testing.T) []object {
	t.Helper()
	files, _ := filepath.Glob("k8s/*.yaml")
	if len(files) == 0 {
		t.Fatal("no k8s/*.yaml")
	}
	var out []object
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(raw), -1) {
			if strings.TrimSpace(regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(doc, "")) == "" {
				continue
			}
			var tm struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
				t.Fatalf("%s document %d: %v", f, i+1, err)
			}
			var obj any
			switch tm.APIVersion + " " + tm.Kind {
			case "apps/v1 Deployment":
				obj = &appsv1.Deployment{}
			case "v1 Service":
				obj = &corev1.Service{}
			case "v1 Secret":
				obj = &corev1.Secret{}
			case "policy/v1 PodDisruptionBudget":
				obj = &policyv1.PodDisruptionBudget{}
			case "networking.k8s.io/v1 NetworkPolicy":
				obj = &networkingv1.NetworkPolicy{}
			default:
				t.Errorf("%s document %d: %q %q is not a kind these checks know", f, i+1, tm.APIVersion, tm.Kind)
				continue
			}
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				t.Errorf("%s document %d (%s): %v", f, i+1, tm.Kind, err)
				continue
			}
			out = append(out, object{file: f, kind: tm.Kind, obj: obj})
		}
	}
	return out
}

func only[T any](t *testing.T, objs []object) T {
	t.Helper()
	var found []T
	for _, o := range objs {
		if v, ok := o.obj.(T); ok {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("want one %T in k8s/, found %d", zero, len(found))
	}
	return found[0]
}

// routes returns the GET routes the facade's router serves
// (stack/router.go: mux.Handle("GET /path", ...)).
func routes(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("../stack/router.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`mux\.Handle(?:Func)?\("GET (/[^"]*)"`).FindAllStringSubmatch(string(src), -1) {
		out = append(out, m[1])
	}
	return out
}

// documentedVariables returns the environment variables docs/configuration.md
// states, with their defaults.
func documentedVariables(t *testing.T) map[string]string {
	t.Helper()
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{"FACADE_SECRET": "", "GOMEMLIMIT": "", "GOGC": ""}
	for _, m := range regexp.MustCompile("(?m)^\\| `-[a-z0-9-]+` \\| `([A-Z0-9_]+)` \\| ([^|]*) \\|").FindAllStringSubmatch(string(doc), -1) {
		out[m[1]] = strings.Trim(strings.TrimSpace(m[2]), "`")
	}
	if len(out) < 20 {
		t.Fatalf("docs/configuration.md: found only %d variables", len(out))
	}
	return out
}

// TestKubernetesManifests decodes k8s/ strictly into the API types, then
// checks what the API server would not: the probes name routes the facade
// serves on a port the container declares, the grace period outlasts the
// drain, the selectors of the Service and the PodDisruptionBudget pick the
// Deployment's pods, the pods run as the image's unprivileged user on a
// read-only root with no capabilities, the secrets come from the Secret,
// and every variable set is one the facade reads.
func TestKubernetesManifests(t *testing.T) {
	objs := decodeManifests(t)
	dep := only[*appsv1.Deployment](t, objs)
	svc, metricsSvc := service(t, objs, "facade"), service(t, objs, "facade-metrics")
	netpol := only[*networkingv1.NetworkPolicy](t, objs)
	pdb := only[*policyv1.PodDisruptionBudget](t, objs)
	secret := only[*corev1.Secret](t, objs)

	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 3 {
		t.Errorf("Deployment: replicas %v, want 3", dep.Spec.Replicas)
	}
	podLabels := dep.Spec.Template.Labels
	matches := func(sel map[string]string) bool {
		if len(sel) == 0 {
			return false
		}
		for k, v := range sel {
			if podLabels[k] != v {
				return false
			}
		}
		return true
	}
	if dep.Spec.Selector == nil || !matches(dep.Spec.Selector.MatchLabels) || len(dep.Spec.Selector.MatchExpressions) > 0 {
		t.Errorf("Deployment: selector %v does not match its pod labels %v", dep.Spec.Selector, podLabels)
	}
	for _, sv := range []*corev1.Service{svc, metricsSvc} {
		if !matches(sv.Spec.Selector) {
			t.Errorf("Service %s: selector %v does not match the pod labels %v", sv.Name, sv.Spec.Selector, podLabels)
		}
	}
	if !matches(netpol.Spec.PodSelector.MatchLabels) || len(netpol.Spec.PodSelector.MatchExpressions) > 0 {
		t.Errorf("NetworkPolicy: podSelector %v does not match the pod labels %v", netpol.Spec.PodSelector, podLabels)
	}
	if pdb.Spec.Selector == nil || !matches(pdb.Spec.Selector.MatchLabels) || len(pdb.Spec.Selector.MatchExpressions) > 0 {
		t.Errorf("PodDisruptionBudget: selector %v does not match the pod labels %v", pdb.Spec.Selector, podLabels)
	}
	if mu := pdb.Spec.MaxUnavailable; mu == nil || mu.IntValue() < 1 || mu.IntValue() >= int(*dep.Spec.Replicas) {
		t.Errorf("PodDisruptionBudget: maxUnavailable %v, want at least 1 and fewer than the replicas", mu)
	}
	if ru := dep.Spec.Strategy.RollingUpdate; dep.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
		t.Errorf("Deployment: want a RollingUpdate with maxUnavailable 0 (a new pod ready before an old one stops)")
	}

	pod := dep.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(pod.Containers))
	}
	c := pod.Containers[0]
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		if _, dup := env[e.Name]; dup {
			t.Errorf("env %s is set twice", e.Name)
		}
		env[e.Name] = e
	}
	known := documentedVariables(t)
	for name := range env {
		if _, ok := known[name]; !ok {
			t.Errorf("env %s is not a variable of docs/configuration.md", name)
		}
	}
	if a := env["ADDR"].Value; a != fmt.Sprintf(":%d", ports["http"]) {
		t.Errorf("ADDR %q does not listen on the http port %d", a, ports["http"])
	}
	if a := env["METRICS_ADDR"].Value; a != "" && a != fmt.Sprintf(":%d", ports["metrics"]) {
		t.Errorf("METRICS_ADDR %q is not the metrics port %d", a, ports["metrics"])
	}
	if r := env["REPLICAS"].Value; r != fmt.Sprint(*dep.Spec.Replicas) {
		t.Errorf("REPLICAS %q, want spec.replicas (%d): it sizes each replica's share of the budget while Redis is down", r, *dep.Spec.Replicas)
	}
	if env["UPSTREAM_URL"].Value == "" {
		t.Error("UPSTREAM_URL is not set: the pods would run the demo")
	}
	if env["PRODUCTION"].Value != "true" {
		t.Error("PRODUCTION is not true")
	}
	for _, name := range []string{"FACADE_SECRET", "REDIS_URL"} {
		e := env[name]
		if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			t.Errorf("%s: want it from a Secret (valueFrom.secretKeyRef)", name)
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		if ref.Name != secret.Name {
			t.Errorf("%s: from Secret %q, the manifests define %q", name, ref.Name, secret.Name)
		}
		if _, ok := secret.StringData[ref.Key]; !ok {
			t.Errorf("%s: key %q is not in Secret %q", name, ref.Key, secret.Name)
		}
	}

	// Probes: the routes exist and answer on a declared port.
	served := routes(t)
	for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		want := map[string]string{"readiness": "/readyz", "liveness": "/healthz"}[name]
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s probe: want an httpGet probe of %s", name, want)
			continue
		}
		if p.HTTPGet.Path != want || !slices.Contains(served, p.HTTPGet.Path) {
			t.Errorf("%s probe: path %q, want %s (the router serves %v)", name, p.HTTPGet.Path, want, served)
		}
		if port := p.HTTPGet.Port.String(); port != "http" {
			t.Errorf("%s probe: port %q, want the http port", name, port)
		}
	}

	// The grace period outlasts the drain: SHUTDOWN_DELAY then at most
	// SHUTDOWN_TIMEOUT for the requests in flight.
	dur := func(name string) time.Duration {
		v := env[name].Value
		if v == "" {
			v = known[name]
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Errorf("%s: %q is not a duration", name, v)
		}
		return d
	}
	drain := dur("SHUTDOWN_DELAY") + dur("SHUTDOWN_TIMEOUT")
	if g := pod.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= drain+2*time.Second {
		t.Errorf("terminationGracePeriodSeconds is not set above the drain (%v) with room", drain)
	}
	if dur("SHUTDOWN_TIMEOUT") < dur("REQUEST_TIMEOUT") {
		t.Errorf("SHUTDOWN_TIMEOUT %v is below REQUEST_TIMEOUT %v: a request still running at the end of the drain is cut off", dur("SHUTDOWN_TIMEOUT"), dur("REQUEST_TIMEOUT"))
	}
	if dur("SHUTDOWN_DELAY") < 2*time.Second {
		t.Errorf("SHUTDOWN_DELAY %v: the endpoints need a few seconds to drop a terminating pod", dur("SHUTDOWN_DELAY"))
	}

	// The image's user, nothing more.
	psc, csc := pod.SecurityContext, c.SecurityContext
	switch {
	case psc == nil || csc == nil:
		t.Fatal("want a pod and a container securityContext")
	case psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != 65532:
		t.Error("pod: want runAsNonRoot and runAsUser 65532 (the image's user)")
	case psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Error("pod: want seccompProfile RuntimeDefault")
	case csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem:
		t.Error("container: want readOnlyRootFilesystem")
	case csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation:
		t.Error("container: want allowPrivilegeEscalation false")
	case csc.Capabilities == nil || !slices.Equal(csc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(csc.Capabilities.Add) > 0:
		t.Error("container: want capabilities drop [ALL] and none added")
	}
	if c.Resources.Limits.Memory().IsZero() {
		t.Error("container: want a memory limit")
	}

	// Each Service reaches named ports: the public one the http port only,
	// the scraper's the metrics port only.
	for sv, want := range map[*corev1.Service]string{svc: "http", metricsSvc: "metrics"} {
		if len(sv.Spec.Ports) != 1 || sv.Spec.Ports[0].TargetPort.String() != want {
			t.Errorf("Service %s: ports %v, want the %s port only", sv.Name, sv.Spec.Ports, want)
		}
		for _, p := range sv.Spec.Ports {
			if _, ok := ports[p.TargetPort.String()]; !ok {
				t.Errorf("Service %s port %s: targetPort %q is not a container port %v", sv.Name, p.Name, p.TargetPort.String(), ports)
			}
		}
	}
	checkNetworkPolicy(t, netpol, ports)
}

// service returns the Service of k8s/ named name.
func service(t *testing.T, objs []object, name string) *corev1.Service {
	t.Helper()
	for _, o := range objs {
		if s, ok := o.obj.(*corev1.Service); ok && s.Name == name {
			return s
		}
	}
	t.Fatalf("no Service %q in k8s/", name)
	return nil
}

// checkNetworkPolicy: the policy governs the pods' ingress and opens the
// container ports only: the http port to any peer, the metrics port to
// named peers only (the scraper), and nothing else. A rule without ports
// would open every port, metrics included, to its peers.
func checkNetworkPolicy(t *testing.T, np *networkingv1.NetworkPolicy, ports map[string]int32) {
	t.Helper()
	if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
		t.Errorf("NetworkPolicy: policyTypes %v, want Ingress", np.Spec.PolicyTypes)
	}
	reachable, public := map[string]bool{}, map[string]bool{} // by port name: some peer, every peer
	for i, r := range np.Spec.Ingress {
		if len(r.Ports) == 0 {
			t.Errorf("NetworkPolicy ingress rule %d names no port: it opens every port, metrics included", i+1)
		}
		restricted := len(r.From) > 0
		for _, f := range r.From {
			if f.IPBlock != nil || (f.PodSelector == nil && f.NamespaceSelector == nil) ||
				(f.PodSelector != nil && len(f.PodSelector.MatchLabels)+len(f.PodSelector.MatchExpressions) == 0) {
				restricted = false // an address range or an empty selector: not one scraper
			}
		}
		for _, p := range r.Ports {
			name := p.Port.String()
			if _, ok := ports[name]; !ok || p.Port.IntValue() != 0 {
				t.Errorf("NetworkPolicy ingress rule %d: port %q, want a container port by name (%v)", i+1, name, ports)
			}
			reachable[name] = true
			public[name] = public[name] || !restricted
		}
	}
	if !public["http"] {
		t.Error("NetworkPolicy: the http port is not open to every peer: clients and the ingress could not reach GraphQL")
	}
	if !reachable["metrics"] {
		t.Error("NetworkPolicy: no rule lets the scraper reach the metrics port")
	}
	if public["metrics"] {
		t.Error("NetworkPolicy: the metrics port is open to every peer, want the scraper's pods only")
	}
}

// compose is the part of the Compose specification deploy/compose.yaml
// uses; decoding it strictly refuses anything else (a misspelt key).
type compose struct {
	Name     string                    `json:"name"`
	Services map[string]composeService `json:"services"`
}

type composeService struct {
	Build *struct {
		Context string `json:"context"`
		Target  string `json:"target"`
	} `json:"build"`
	Image           string            `json:"image"`
	Command         []string          `json:"command"`
	Environment     map[string]string `json:"environment"`
	Ports           []string          `json:"ports"`
	ReadOnly        bool              `json:"read_only"`
	CapDrop         []string          `json:"cap_drop"`
	SecurityOpt     []string          `json:"security_opt"`
	StopGracePeriod string            `json:"stop_grace_period"`
	Restart         string            `json:"restart"`
	DependsOn       map[string]struct {
		Condition string `json:"condition"`
	} `json:"depends_on"`
	Healthcheck *struct {
		Test     []string `json:"test"`
		Interval string   `json:"interval"`
		Timeout  string   `json:"timeout"`
		Retries  int      `json:"retries"`
	} `json:"healthcheck"`
}

// TestComposeFile decodes compose.yaml strictly (x- extensions aside) and
// checks it wires two facade replicas to the REST service and Redis of the
// file, with one secret, from the Dockerfile's targets.
func TestComposeFile(t *testing.T) {
	raw, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := yaml.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	for k := range top {
		if strings.HasPrefix(k, "x-") {
			delete(top, k)
		}
	}
	rest, _ := yaml.Marshal(top) // anchors resolved, extensions dropped
	var c compose
	if err := yaml.UnmarshalStrict(rest, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	dockerfile, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	known := documentedVariables(t)
	var facades []string
	for name, s := range c.Services {
		if s.Build != nil {
			if s.Build.Context != ".." {
				t.Errorf("%s: build context %q, want the repository root (..)", name, s.Build.Context)
			}
			if !bytes.Contains(dockerfile, []byte(" AS "+s.Build.Target+"\n")) {
				t.Errorf("%s: build target %q is not a stage of the Dockerfile", name, s.Build.Target)
			}
		}
		for dep := range s.DependsOn {
			if _, ok := c.Services[dep]; !ok {
				t.Errorf("%s: depends on %q, not a service", name, dep)
			}
		}
		for k, v := range s.Environment {
			if strings.Contains(strings.ReplaceAll(v, "${", ""), "$") {
				t.Errorf("%s: %s=%q: a $ other than ${...} is a Compose interpolation error", name, k, v)
			}
		}
		if s.Build != nil && s.Build.Target == "facade" {
			facades = append(facades, name)
			for k := range s.Environment {
				if _, ok := known[k]; !ok {
					t.Errorf("%s: %s is not a variable of docs/configuration.md", name, k)
				}
			}
		}
	}
	if len(facades) < 2 {
		t.Fatalf("want two facade replicas, found %v", facades)
	}
	slices.Sort(facades)
	first := c.Services[facades[0]].Environment
	for _, f := range facades {
		env := c.Services[f].Environment
		for _, k := range []string{"FACADE_SECRET", "REDIS_URL", "UPSTREAM_URL"} {
			if env[k] == "" || env[k] != first[k] {
				t.Errorf("%s: %s %q, want it set and the same on every replica", f, k, env[k])
			}
		}
		if env["REPLICAS"] != fmt.Sprint(len(facades)) {
			t.Errorf("%s: REPLICAS %q, want %d", f, env["REPLICAS"], len(facades))
		}
		if !strings.HasPrefix(env["UPSTREAM_URL"], "http://restserver:") || !strings.HasPrefix(env["REDIS_URL"], "redis://redis:") {
			t.Errorf("%s: UPSTREAM_URL %q and REDIS_URL %q should name the restserver and redis services", f, env["UPSTREAM_URL"], env["REDIS_URL"])
		}
		delay, err1 := time.ParseDuration(env["SHUTDOWN_DELAY"])
		timeout, err2 := time.ParseDuration(env["SHUTDOWN_TIMEOUT"])
		if g, err := time.ParseDuration(c.Services[f].StopGracePeriod); err != nil || err1 != nil || err2 != nil || g <= delay+timeout {
			t.Errorf("%s: stop_grace_period %q is not above SHUTDOWN_DELAY + SHUTDOWN_TIMEOUT (both set)", f, c.Services[f].StopGracePeriod)
		}
	}
	for _, s := range []string{"restserver", "redis"} {
		if _, ok := c.Services[s]; !ok {
			t.Errorf("no %s service", s)
		}
	}
}
