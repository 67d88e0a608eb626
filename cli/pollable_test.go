package cli

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// veto mcp reads the agent's pipe through the runtime's poller (a file
// that takes a read deadline is one), from a copy of its descriptor that
// reads what the pipe carries; a regular file is read as it is.
func TestPollableStdinIsAPolledCopyOfAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	p, ok := pollable(r).(*os.File)
	if !ok || p == r {
		t.Fatalf("a pipe is read as %v, want a copy of its descriptor", p)
	}
	defer p.Close()
	if err := p.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatalf("the copy takes no deadline (%v): the poller does not wait on it", err)
	}
	buf := make([]byte, 8)
	if _, err := p.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a read of a silent pipe past its deadline: %v", err)
	}
	p.SetReadDeadline(time.Time{})
	w.Write([]byte("frame\n"))
	if n, err := p.Read(buf); err != nil || string(buf[:n]) != "frame\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "in"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := pollable(f); got != f {
		t.Fatalf("a regular file is read as %v, want itself", got)
	}
}
