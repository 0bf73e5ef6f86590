package ids

import (
	"strings"
	"testing"
)

func TestIsUUID(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"0b7e4c1a-1111-4222-8333-944455556666", true},
		{"0B7E4C1A-ABCD-4EF0-8333-944455556666", true},   // upper case
		{"00000000-0000-0000-0000-000000000000", true},   // nil uuid: version not checked
		{"ffffffff-ffff-ffff-ffff-ffffffffffff", true},   // variant not checked
		{"0b7e4c1a-1111-4222-8333-94445555666", false},   // 35 characters
		{"0b7e4c1a-1111-4222-8333-9444555566667", false}, // 37 characters
		{"0b7e4c1a1111422283339444555566660000", false},  // 36 hex digits, no dashes
		{"0b7e4c1a-1111-4222-8333_944455556666", false},  // wrong separator
		{"0b7e4c1a-11114-222-8333-944455556666", false},  // dash misplaced
		{"0b7e4c1g-1111-4222-8333-944455556666", false},  // not hex
		{"{b7e4c1a-1111-4222-8333-94445555666}", false},  // braces
		{" 0b7e4c1a-1111-4222-8333-94445555666", false},  // leading blank
		{"0b7e4c1a-1111-4222-8333-9444555566é", false},   // 36 bytes ending in a multi-byte rune
		{"", false},
	} {
		if got := IsUUID(c.s); got != c.want {
			t.Errorf("IsUUID(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}

// TestIsUUIDEveryPosition replaces each character of a valid uuid with each
// byte: only hex digits (off the dashes) and '-' (on them) keep it valid.
func TestIsUUIDEveryPosition(t *testing.T) {
	const valid = "0b7e4c1a-1111-4222-8333-944455556666"
	for i := range len(valid) {
		for b := range 256 {
			s := valid[:i] + string([]byte{byte(b)}) + valid[i+1:]
			dash := i == 8 || i == 13 || i == 18 || i == 23
			want := dash && b == '-' || !dash && strings.IndexByte("0123456789abcdefABCDEF", byte(b)) >= 0
			if got := IsUUID(s); got != want {
				t.Fatalf("IsUUID(%q) = %v, want %v", s, got, want)
			}
		}
	}
}
