package metrics

import (
	"regexp"
	"sync"
)

// Names bounds the operation_name label: the names given (trusted
// documents' operations) always, then either nothing else (OnlyOperations)
// or the first MaxOperations other names admitted (operations whose
// credentials the upstream accepted); every other name is "other".
// "anonymous" (no name) and "unknown" (no operation: refused or unparsable)
// are kept as they are. Safe for concurrent use.
type Names struct {
	only  bool
	max   int
	fixed map[string]bool

	mu   sync.Mutex
	seen map[string]bool
}

// NewNames returns the name set of o.
func NewNames(o Options) *Names {
	n := &Names{only: o.OnlyOperations, max: o.MaxOperations, fixed: map[string]bool{}, seen: map[string]bool{}}
	if n.max <= 0 {
		n.max = DefaultMaxOperations
	}
	for _, name := range o.Operations {
		if nameShape.MatchString(name) {
			n.fixed[name] = true
		}
	}
	return n
}

// nameShape is a GraphQL name of at most 64 characters.
var nameShape = regexp.MustCompile(`^[_A-Za-z][_0-9A-Za-z]{0,63}$`)

// Label returns the label value of operation name. A name not yet kept
// takes one of the MaxOperations slots only when admit is true (its
// operation passed authentication): anonymous callers cannot use them up.
func (n *Names) Label(name string, admit bool) string {
	switch {
	case name == "anonymous" || name == "unknown" || n.fixed[name]:
		return name
	case n.only:
		return "other"
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seen[name] { // checked before the shape: a name seen was checked then
		return name
	}
	if admit && len(n.seen) < n.max && nameShape.MatchString(name) {
		n.seen[name] = true
		return name
	}
	return "other"
}
