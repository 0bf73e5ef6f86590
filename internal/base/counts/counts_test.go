package counts

import "testing"

func TestFormat(t *testing.T) {
	m := map[string]int64{"GET /b": 2, "GET /a": 10}
	if got := Format(m, "%s ×%d", ", "); got != "GET /a ×10, GET /b ×2" {
		t.Errorf("got %q", got)
	}
	if got := Format(map[string]int{"x": 1}, "  %s: %d\n", ""); got != "  x: 1\n" {
		t.Errorf("got %q", got)
	}
	if got := Format(map[string]int64{}, "%s %d", ", "); got != "" {
		t.Errorf("empty: %q", got)
	}
}
