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
