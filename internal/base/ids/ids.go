// Package ids checks the identifiers of the Workspace Network Service API.
package ids

// IsUUID reports whether s is a uuid in the canonical 8-4-4-4-12 hex form
// ("0b7e4c1a-1111-4222-8333-944455556666"). Either case is accepted; the
// version and variant digits are not checked.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
