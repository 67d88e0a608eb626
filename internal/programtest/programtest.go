// Package programtest builds veto's programs for the tests that run them
// as processes (veto serve, veto log stream): once per test binary, with
// CGO_ENABLED=0 as they ship, into a directory of their own.
package programtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	once  sync.Once
	built string
	err   error
)

// Veto returns the path of the veto program, built on first use; a test
// in -short mode is skipped instead.
func Veto(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the veto program")
	}
	once.Do(func() {
		dir, e := os.MkdirTemp("", "veto-program-")
		if e != nil {
			err = e
			return
		}
		built = filepath.Join(dir, "veto")
		cmd := exec.Command("go", "build", "-o", built, "github.com/vetohq/veto/cmd/veto")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, e := cmd.CombinedOutput(); e != nil {
			err = fmt.Errorf("go build: %v\n%s", e, out)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return built
}
