package toolpath_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vetohq/veto/toolpath"
)

// OS.Walk asks the kernel once how a clean path resolves: Clean, Missing,
// or Unsure on a symlink, a NUL byte or anything the kernel will not say;
// long paths take the allocating route to the same answers.
func TestWalkAsksTheKernel(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(root, strings.Repeat("d", 200), strings.Repeat("e", 100))
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	var w toolpath.OS
	// A long path takes the allocating route; when even a missing one gets
	// no answer, the kernel has no openat2.
	if w.Walk(filepath.Join(deep, "missing")) == toolpath.Unsure {
		t.Skip("the kernel does not answer openat2 here")
	}
	for _, tc := range []struct {
		path string
		want toolpath.Resolution
	}{
		{root, toolpath.Clean},
		{"/", toolpath.Clean},
		{deep, toolpath.Clean},
		{filepath.Join(root, "missing"), toolpath.Missing},
		{filepath.Join(deep, "missing"), toolpath.Missing},
		{filepath.Join(root, "link", "x"), toolpath.Unsure},
		{"\x00" + root, toolpath.Unsure},
		{root + "\x00", toolpath.Unsure},
	} {
		if got := w.Walk(tc.path); got != tc.want {
			t.Errorf("Walk(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

// Find says what resolving saw of the file: Clean when it is there with no
// symlink on its path, Missing when it is not and its directory is, and
// Unsure whenever only a look at the file would tell; Real is Resolve's.
func TestFindSaysWhatItSaw(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "d", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "d"), filepath.Join(root, "l")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "d", "f"), filepath.Join(root, "d", "s")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path string
		fs   toolpath.FS
		want toolpath.Resolution
	}{
		{"d/f", nil, toolpath.Clean},
		{"d", nil, toolpath.Clean},
		{"d/missing", nil, toolpath.Missing},
		{"gone/missing", nil, toolpath.Unsure}, // its directory is missing too
		{"l/f", nil, toolpath.Unsure},          // a symlink on the way
		{"l/missing", nil, toolpath.Unsure},
		{"d/s", nil, toolpath.Unsure}, // the file is a symlink
		{"d/../d/f", nil, toolpath.Unsure},
		{"d/f", toolpath.Lexical{}, toolpath.Unsure}, // an FS that cannot say
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			env := toolpath.Env{Cwd: root, FS: c.fs}
			p, got, err := toolpath.Find(c.path, env)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("Find says %d, want %d", got, c.want)
			}
			q, err := toolpath.Resolve(c.path, env)
			if err != nil || q != p {
				t.Errorf("Resolve gives %+v %v, Find %+v", q, err, p)
			}
		})
	}
}
