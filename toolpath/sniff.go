package toolpath

import (
	"slices"
	"strings"
)

// Sniff returns every string anywhere in v (a call's decoded JSON
// arguments) that reads as a local path, in a stable order (map keys
// sorted): the paths of a tool veto has no descriptor for, which every
// rule that judges paths reads the same way. It is not bounded here: the
// arguments are, by the gate's limits, and a bound on what is sniffed
// would let padding hide a path.
func Sniff(v any) []string { return sniff(v, nil) }

func sniff(v any, out []string) []string {
	switch v := v.(type) {
	case string:
		if PathLike(v) {
			out = append(out, v)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = sniff(v[k], out)
		}
	case []any:
		for _, e := range v {
			out = sniff(e, out)
		}
	}
	return out
}

// PathLike reports whether s reads as a path: one word that starts like a
// path, holds a slash but no URL scheme, or is named like a dotfile or a
// key.
func PathLike(s string) bool {
	if s == "" || len(s) > 4096 || strings.ContainsAny(s, " \t\n\r") {
		return false
	}
	switch {
	case strings.HasPrefix(s, "file:"):
		return true
	case strings.Contains(s, "://"):
		return false
	case strings.HasPrefix(s, "/"), strings.HasPrefix(s, "~"), strings.HasPrefix(s, "./"),
		strings.HasPrefix(s, "../"), strings.HasPrefix(s, "$HOME"), strings.HasPrefix(s, "${HOME}"):
		return true
	case strings.Contains(s, "/"):
		return true
	case len(s) > 1 && s[0] == '.' && s != "..":
		return true
	case strings.HasPrefix(s, "id_"):
		return true
	}
	for _, ext := range []string{".pem", ".key", ".p12", ".pfx"} {
		if strings.HasSuffix(s, ext) {
			return true
		}
	}
	return false
}
