//go:build linux && amd64

package supervise

import (
	"strings"
	"testing"
)

func TestEchoRuns(t *testing.T) {
	w := newWorld(t)
	r := w.run(w.config("echo", "hello", "world"))
	if r.code != 0 || r.stdout != "hello world\n" {
		t.Fatalf("got %d %q %q", r.code, r.stdout, r.stderr)
	}
	var execs int
	for _, q := range w.seen {
		if q.Kind == Exec && strings.HasSuffix(q.Path, "/echo") {
			execs++
			if len(q.Argv) != 3 || q.Argv[1] != "hello" {
				t.Errorf("argv %q", q.Argv)
			}
		}
	}
	if execs != 1 {
		t.Errorf("%d execs of echo decided, want 1: %+v", execs, w.seen)
	}
}

func helperSupervisor() {}
