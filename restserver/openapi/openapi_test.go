package openapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestHandler(t *testing.T) {
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" || rec.Body.String() != string(Document()) {
		t.Fatalf("GET: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	rec = httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/openapi.json", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", rec.Code)
	}
}

func TestDocumentIsJSON(t *testing.T) {
	if !json.Valid(Document()) {
		t.Fatal("Document() is not JSON")
	}
	d := Document()
	d[0] = 'x'
	if Document()[0] == 'x' {
		t.Fatal("Document() returns the embedded bytes, not a copy")
	}
}

// TestProgramsDoNotLinkKinOpenAPI: the OpenAPI library is for tests only
// (openapitest); no program of the module may depend on it.
func TestProgramsDoNotLinkKinOpenAPI(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	programs := []string{
		"github.com/workspacenet/facade",
		"github.com/workspacenet/facade/cmd/restserver",
		"github.com/workspacenet/facade/bench",
		"github.com/workspacenet/facade/soak",
	}
	out, err := exec.CommandContext(t.Context(), goTool, append([]string{"list", "-deps"}, programs...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < len(programs) {
		t.Fatalf("go list -deps listed %d packages", len(deps))
	}
	for _, p := range programs {
		if !slices.Contains(deps, p) {
			t.Fatalf("go list -deps does not list the program %s itself: %q", p, deps)
		}
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/getkin/kin-openapi") || strings.HasSuffix(d, "/openapi/openapitest") {
			t.Errorf("a program depends on %s", d)
		}
	}
}
