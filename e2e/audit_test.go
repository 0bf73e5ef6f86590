package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/workspacenet/facade/graph/errcode"
)

// auditResult is one audit of graphql-http's serverAudits, as audit.mjs
// prints it.
type auditResult struct {
	ID         string `json:"id"`
	Name       string `json:"name"` // starts with its level: MUST, SHOULD or MAY
	Status     string `json:"status"`
	Reason     string `json:"reason"`
	HTTPStatus int    `json:"httpStatus"`
	Code       string `json:"code"`
}

func (r auditResult) level() string { level, _, _ := strings.Cut(r.Name, " "); return level }

func (r auditResult) String() string {
	return fmt.Sprintf("%s %q: %s (HTTP %d, code %q)", r.ID, r.Name, r.Reason, r.HTTPStatus, r.Code)
}

// TestGraphQLOverHTTPAudit runs graphql-http's audit of the GraphQL over HTTP
// specification against the facade as `go run .` starts it: every MUST and
// SHOULD passes, and every MAY but those CSRF prevention refuses on purpose
// (a GET without a preflight-forcing header), which pass in a second run
// whose requests all carry Apollo-Require-Preflight: true.
func TestGraphQLOverHTTPAudit(t *testing.T) {
	node := requireNode(t)
	base, _ := startDemo(t, nil)
	out := runNode(t, node, "audit.mjs", base+"/graphql")
	var res struct{ Plain, Preflight []auditResult }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("audit.mjs output: %v\n%s", err, out)
	}
	if len(res.Plain) < 50 || len(res.Preflight) != len(res.Plain) {
		t.Fatalf("%d audits, then %d with the preflight header: graphql-http 1.23.1 has 61", len(res.Plain), len(res.Preflight))
	}

	passWithPreflight := map[string]bool{}
	for _, r := range res.Preflight {
		if r.Status == "ok" {
			passWithPreflight[r.ID] = true
		} else {
			t.Errorf("with Apollo-Require-Preflight: %s", r)
		}
	}
	total, passed := map[string]int{}, map[string]int{}
	refused := 0
	for _, r := range res.Plain {
		total[r.level()]++
		switch {
		case r.Status == "ok":
			passed[r.level()]++
		case r.level() == "MAY" && r.Code == errcode.CSRFPrevented && passWithPreflight[r.ID]:
			refused++
		default:
			t.Errorf("%s", r)
		}
	}
	if total["MUST"] == 0 || total["SHOULD"] == 0 || total["MAY"] == 0 {
		t.Errorf("audit levels: %v", total)
	}
	t.Logf("graphql-http audit: %d/%d MUST, %d/%d SHOULD, %d/%d MAY (%d refused by CSRF prevention, pass with a preflight header)",
		passed["MUST"], total["MUST"], passed["SHOULD"], total["SHOULD"], passed["MAY"], total["MAY"], refused)
}
