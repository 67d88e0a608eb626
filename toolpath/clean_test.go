package toolpath

import (
	"path"
	"testing"
)

// FuzzIsClean holds isClean to path.Clean: an absolute path is clean
// exactly when Clean returns it unchanged.
func FuzzIsClean(f *testing.F) {
	for _, s := range []string{"", "/", "//", "a", "a/", "a/.", "a/..", "a/./b", "a/../b", ".a", "..a", "a/.b/..c",
		"a//b", "...", "a/...", "./a", "../a", "a/b.", "a/b..", "é/ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := "/" + s
		if got, want := isClean(p), path.Clean(p) == p; got != want {
			t.Fatalf("isClean(%q) = %v, path.Clean gives %q", p, got, path.Clean(p))
		}
		if isClean(s) && (s == "" || s[0] != '/') {
			t.Fatalf("isClean(%q): a relative path is never clean here", s)
		}
	})
}
