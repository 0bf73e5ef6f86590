package metrics

import (
	"fmt"
	"testing"
)

// TestNamesBounded: the first MaxOperations names are kept, later ones are
// "other"; listed names always stay; with OnlyOperations nothing else does;
// a name that is not a GraphQL name (or too long) is "other".
func TestNamesBounded(t *testing.T) {
	n := NewNames(Options{Operations: []string{"Dashboard"}, MaxOperations: 3})
	for i := range 3 {
		if got := n.Label(fmt.Sprint("Op", i), true); got != fmt.Sprint("Op", i) {
			t.Fatalf("name %d: %q", i, got)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"Op3", "other"}, {"Op0", "Op0"}, {"Dashboard", "Dashboard"}, {"anonymous", "anonymous"},
		{"a b", "other"}, {string(make([]byte, 65)), "other"},
	} {
		if got := n.Label(c.in, true); got != c.want {
			t.Errorf("Label(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Not admitted (unauthenticated): no slot taken, a kept name still shown.
	late := NewNames(Options{Operations: []string{"Dashboard"}, MaxOperations: 1})
	for _, c := range []struct {
		in    string
		admit bool
		want  string
	}{{"Probe", false, "other"}, {"Dashboard", false, "Dashboard"}, {"Real", true, "Real"}, {"Real", false, "Real"}, {"Late", true, "other"}} {
		if got := late.Label(c.in, c.admit); got != c.want {
			t.Errorf("Label(%q, %v) = %q, want %q", c.in, c.admit, got, c.want)
		}
	}
	only := NewNames(Options{Operations: []string{"Dashboard"}, OnlyOperations: true})
	if got := only.Label("Other1", true); got != "other" {
		t.Errorf("OnlyOperations: Label(Other1) = %q", got)
	}
	if got := only.Label("Dashboard", true); got != "Dashboard" {
		t.Errorf("OnlyOperations: Label(Dashboard) = %q", got)
	}
}

// TestCodeBounded: error codes of the facade's shape are labels, anything
// else is "other".
func TestCodeBounded(t *testing.T) {
	for in, want := range map[string]string{"RATE_LIMITED": "RATE_LIMITED", "": "other", "rate limited": "other", "Bearer abc": "other"} {
		if got := code(in); got != want {
			t.Errorf("code(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNilSafe: a nil *Facade, *Request and *RESTServer record nothing and
// do not panic.
func TestNilSafe(t *testing.T) {
	var f *Facade
	r := f.StartRequest()
	r.SetOperation("query", "Q")
	r.Responded("X")
	r.End()
	f.CacheLookup("resources", true)
	f.LoaderBatch("resource", 1)
	f.SetAdmission(nil)
	f.SetBudget(nil)
	f.SetClient(nil)
	if h := f.CallHooks(); h.After != nil || h.Before != nil {
		t.Error("nil Facade has hooks")
	}
	var s *RESTServer
	if s.Instrument(nil, nil) != nil {
		t.Error("nil RESTServer wrapped")
	}
}
