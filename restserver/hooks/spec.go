package hooks

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rule is one item of a spec: a latency or a fault for a route.
// Exactly one of Latency and Fault is set.
type Rule struct {
	Route   string
	Latency *Latency
	Fault   *Fault
}

// ParseSpec parses a comma-separated list of ROUTE=VALUE items (syntax in the
// package documentation). An empty or blank s yields no rules.
func ParseSpec(s string) ([]Rule, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var rules []Rule
	for item := range strings.SplitSeq(s, ",") {
		r, err := parseItem(strings.TrimSpace(item))
		if err != nil {
			return nil, fmt.Errorf("hooks: spec item %q: %w", strings.TrimSpace(item), err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

func parseItem(item string) (Rule, error) {
	if item == "" {
		return Rule{}, errors.New("empty item (stray comma?)")
	}
	i := strings.LastIndexByte(item, '=')
	if i < 0 {
		return Rule{}, errors.New(`want ROUTE=VALUE, e.g. "*=20ms" or "GET /resources/v1/{id}=503@0.5"`)
	}
	route, value := strings.TrimSpace(item[:i]), strings.TrimSpace(item[i+1:])
	if err := checkRoute(route); err != nil {
		return Rule{}, err
	}
	if value == "" {
		return Rule{}, errors.New("missing value after '='")
	}
	kind, _, _ := strings.Cut(value, "@")
	kind, _, _ = strings.Cut(kind, ":")
	if FaultKind(kind).Valid() {
		f, err := parseFault(value)
		if err != nil {
			return Rule{}, err
		}
		return Rule{Route: route, Fault: &f}, nil
	}
	l, err := parseLatency(value)
	if err != nil {
		return Rule{}, fmt.Errorf("%q is neither a fault (%s) nor a latency (FIXED[+JITTER]): %w",
			value, kindList(), err)
	}
	return Rule{Route: route, Latency: &l}, nil
}

// checkRoute accepts "*" or "METHOD /path" (upper-case method, one space, a
// path starting with "/" and without blanks).
func checkRoute(route string) error {
	if route == AllRoutes {
		return nil
	}
	method, path, ok := strings.Cut(route, " ")
	if !ok || method == "" || strings.TrimLeft(method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" ||
		!strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \t") {
		return fmt.Errorf(`route %q: want "*" or "METHOD /path" as registered, e.g. "GET /resources/v1/{id}"`, route)
	}
	return nil
}

func parseLatency(v string) (Latency, error) {
	fixedS, jitterS, hasJitter := strings.Cut(v, "+")
	fixed, err := parseDuration(fixedS)
	if err != nil {
		return Latency{}, err
	}
	var jitter time.Duration
	if hasJitter {
		if jitter, err = parseDuration(jitterS); err != nil {
			return Latency{}, fmt.Errorf("jitter: %w", err)
		}
	}
	return Latency{Fixed: fixed, Jitter: jitter}, nil
}

func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %s", d)
	}
	return d, nil
}

func parseFault(v string) (Fault, error) {
	rest, retryS, hasRetry := strings.Cut(v, ":")
	kindS, rateS, hasRate := strings.Cut(rest, "@")
	f := Fault{Kind: FaultKind(kindS), Rate: 1}
	if hasRate {
		rate, err := strconv.ParseFloat(strings.TrimSpace(rateS), 64)
		if err != nil || math.IsNaN(rate) || rate < 0 || rate > 1 {
			return Fault{}, fmt.Errorf("rate %q: want a fraction from 0 to 1, e.g. 0.25", rateS)
		}
		f.Rate = rate
	}
	if f.Kind == FaultRewrite {
		field, value, ok := strings.Cut(retryS, ":")
		if field = strings.TrimSpace(field); !hasRetry || !ok || field == "" {
			return Fault{}, errors.New(`a rewrite needs a field and a value: "rewrite[@RATE]:FIELD:VALUE", e.g. "rewrite:status:onHold"`)
		}
		var val any = value
		if json.Valid([]byte(value)) {
			val = json.RawMessage(value)
		}
		f.Rewrite = &Rewrite{Set: map[string]any{field: val}}
		return f, nil
	}
	if hasRetry {
		if f.Kind != Fault429 {
			return Fault{}, fmt.Errorf("a Retry-After (%q) is only allowed for 429", ":"+retryS)
		}
		d, err := parseDuration(retryS)
		if err != nil {
			return Fault{}, fmt.Errorf("retry-after: %w", err)
		}
		f.RetryAfter = d
	}
	return f, nil
}

func kindList() string {
	s := make([]string, len(FaultKinds))
	for i, k := range FaultKinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// Apply installs rules in order (a later rule for the same route wins).
func (h *Hooks) Apply(rules ...Rule) {
	for _, r := range rules {
		switch {
		case r.Latency != nil:
			h.SetLatency(r.Route, *r.Latency)
		case r.Fault != nil:
			h.SetFault(r.Route, *r.Fault)
		}
	}
}

// ApplySpec parses s (latencies and faults mixed) and applies it; nothing is
// applied if s has an error.
func (h *Hooks) ApplySpec(s string) error {
	rules, err := ParseSpec(s)
	if err != nil {
		return err
	}
	h.Apply(rules...)
	return nil
}

// ApplyLatencySpec is ApplySpec restricted to latency items.
func (h *Hooks) ApplyLatencySpec(s string) error { return h.applyOnly(s, true) }

// ApplyFaultSpec is ApplySpec restricted to fault items.
func (h *Hooks) ApplyFaultSpec(s string) error { return h.applyOnly(s, false) }

func (h *Hooks) applyOnly(s string, latency bool) error {
	rules, err := ParseSpec(s)
	if err != nil {
		return err
	}
	for _, r := range rules {
		if latency && r.Latency == nil {
			return fmt.Errorf("hooks: %s: want a latency (FIXED[+JITTER]), got a fault", r.Route)
		}
		if !latency && r.Fault == nil {
			return fmt.Errorf("hooks: %s: want a fault (KIND[@RATE][:RETRYAFTER]), got a latency", r.Route)
		}
	}
	h.Apply(rules...)
	return nil
}

// LatencyFlag returns a flag.Value whose Set applies a latency spec to h; the
// flag may be repeated.
func (h *Hooks) LatencyFlag() flag.Value { return &specFlag{h: h, apply: h.ApplyLatencySpec} }

// FaultFlag returns a flag.Value whose Set applies a fault spec to h; the
// flag may be repeated.
func (h *Hooks) FaultFlag() flag.Value { return &specFlag{h: h, apply: h.ApplyFaultSpec} }

type specFlag struct {
	h     *Hooks
	apply func(string) error
	set   []string
}

func (f *specFlag) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(f.set, ",")
}

func (f *specFlag) Set(s string) error {
	if err := f.apply(s); err != nil {
		return err
	}
	f.set = append(f.set, s)
	return nil
}
