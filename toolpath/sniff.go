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
// key; or words with spaces between them that start as a path plainly
// does (~/, $HOME/, ./, ../, file:, or / with a slash after its first
// name: "/etc/cron.d/daily job"), where prose seldom starts. A string that
// starts with a web URL's scheme (http:, https:, ws:, wss:, ftp:) is a
// URL, with or without its "//", unless it climbs with "..".
func PathLike(s string) bool {
	if s == "" || len(s) > 4096 || strings.ContainsAny(s, "\t\n\r") {
		return false
	}
	if strings.Contains(s, " ") {
		return spacedPath(s)
	}
	switch {
	case strings.HasPrefix(s, "file:"):
		return true
	case strings.Contains(s, "://"):
		return false
	case webScheme(s) && !climbs(s):
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

// spacedPath reports whether s, which holds a space, starts as a path
// plainly does.
func spacedPath(s string) bool {
	for _, p := range []string{"~/", "$HOME/", "${HOME}/", "./", "../", "file:"} {
		if strings.HasPrefix(s, p) {
			return len(s) > len(p) && s[len(p)] != ' '
		}
	}
	if len(s) < 2 || s[0] != '/' || s[1] == ' ' || s[1] == '/' {
		return false
	}
	first, rest, ok := strings.Cut(s[1:], "/")
	return ok && !strings.Contains(first, " ") && rest != "" && rest[0] != ' '
}

// webScheme reports whether s starts with the scheme of a web URL.
func webScheme(s string) bool {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return false
	}
	switch strings.ToLower(s[:i]) {
	case "http", "https", "ws", "wss", "ftp":
		return true
	}
	return false
}

// climbs reports whether a path holds a ".." segment.
func climbs(s string) bool {
	for _, seg := range strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return true
		}
	}
	return false
}
