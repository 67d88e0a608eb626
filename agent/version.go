package agent

import (
	"strconv"
	"strings"
)

// VersionAtLeast reports whether ver, three decimal numbers joined by sep
// ("1.0.102", "2-1-332"), is min or later; anything else is not.
func VersionAtLeast(ver, sep string, min [3]int) bool {
	parts := strings.Split(ver, sep)
	if len(parts) != 3 {
		return false
	}
	var v [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || strconv.Itoa(n) != p {
			return false
		}
		v[i] = n
	}
	for i := range v {
		if v[i] != min[i] {
			return v[i] > min[i]
		}
	}
	return true
}
