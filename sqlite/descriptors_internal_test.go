package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/vetohq/veto"
)

// openFDs is how many descriptors this process holds (Linux).
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// A long-lived server opens states again and again: creating one, opening
// one, and refusing one whose schema page does not read leave no
// descriptor behind once the store is closed.
func TestOpenLeavesNoDescriptorOpen(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "veto.db")
	before := openFDs(t)
	s, err := Open(ctx, p, Options{}) // created
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if n := openFDs(t); n != before {
		t.Fatalf("creating the state left %d descriptors open", n-before)
	}
	s, err = Open(ctx, p, Options{}) // opened
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if n := openFDs(t); n != before {
		t.Fatalf("opening the state left %d descriptors open", n-before)
	}
	// The schema table's B-tree header, just past the file header, broken.
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0x37, 0xff, 0xff, 0xff, 0xff}, headerSize); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if s, err := Open(ctx, p, Options{}); err == nil {
		s.Close()
		t.Fatal("a file with an unreadable schema page opened")
	}
	if n := openFDs(t); n != before {
		t.Fatalf("refusing the state left %d descriptors open", n-before)
	}
}

// Files that are no database are refused as damaged, each named for what
// it is: an empty file, and one shorter than a database header.
func TestShortFilesAreNamed(t *testing.T) {
	ctx := context.Background()
	for size, want := range map[int]string{
		0:  "the file is empty",
		40: "the file is 40 bytes, shorter than a database header",
	} {
		p := filepath.Join(t.TempDir(), "veto.db")
		if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(ctx, p, Options{})
		if err == nil {
			s.Close()
			t.Fatalf("a file of %d bytes opened", size)
		}
		var se *veto.StateError
		if !errors.As(err, &se) || se.Cause != veto.CauseDamaged || se.Detail != want {
			t.Errorf("a file of %d bytes: %v, want damaged: %s", size, err, want)
		}
	}
}
