package veto

// MaxIDLen is the longest rule id or reason code, in bytes.
const MaxIDLen = 64

// ValidID reports whether s is a well-formed rule id or reason code:
// [a-z][a-z0-9_.-]*, at most MaxIDLen ASCII characters.
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > MaxIDLen {
		return false
	}
	if s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}
