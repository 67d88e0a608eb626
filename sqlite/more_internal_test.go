package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/vetohq/veto"
)

// The header's page size: 1 stands for 65536; anything not a power of two
// from 512 is damage, and so is a file that is not a whole number of
// pages.
func TestCheckHeaderPageSizes(t *testing.T) {
	header := func(page uint16) []byte {
		h := make([]byte, headerSize)
		copy(h, magic)
		binary.BigEndian.PutUint16(h[16:18], page)
		return h
	}
	for _, tc := range []struct {
		page    uint16
		size    int64
		damaged bool
	}{
		{1, 2 * 65536, false},
		{1, 4096, true},
		{4096, 2 * 4096, false},
		{512, 512, false},
		{256, 512, true},
		{1000, 2000, true},
		{4096, 4096 + 100, true},
	} {
		err := checkHeader(bytes.NewReader(header(tc.page)), tc.size)
		var se *veto.StateError
		if damaged := errors.As(err, &se) && se.Cause == veto.CauseDamaged; damaged != tc.damaged {
			t.Errorf("page field %d, %d bytes: %v, want damaged=%v", tc.page, tc.size, err, tc.damaged)
		}
	}
}

// The default state is under $XDG_STATE_HOME when it is absolute, else
// under the home directory.
func TestDefaultPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "/x/state")
	if p, err := DefaultPath(); err != nil || p != "/x/state/veto/veto.db" {
		t.Errorf("DefaultPath = %q %v", p, err)
	}
	t.Setenv("XDG_STATE_HOME", "relative/state")
	if p, err := DefaultPath(); err != nil || p != filepath.Join(home, ".local/state/veto/veto.db") {
		t.Errorf("DefaultPath with a relative XDG_STATE_HOME = %q %v", p, err)
	}
	t.Setenv("XDG_STATE_HOME", "")
	if p, err := DefaultPath(); err != nil || p != filepath.Join(home, ".local/state/veto/veto.db") {
		t.Errorf("DefaultPath = %q %v", p, err)
	}
}

// Another connection's write lock, past the busy timeout, is the store
// locked, as SQLite reports it.
func TestBusyIsLocked(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "veto.db")
	s, err := Open(ctx, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	holder, err := sql.Open("sqlite", dsn(p, Options{BusyTimeout: 1}, true))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	tx, err := holder.BeginTx(ctx, nil) // _txlock=immediate: the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE veto_meta SET value = value`); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", dsn(p, Options{BusyTimeout: 1}, true))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.ExecContext(ctx, `UPDATE veto_meta SET value = value`)
	if err == nil {
		t.Fatal("a second writer wrote past the first's lock")
	}
	if c, _ := classify(err); c != veto.CauseLocked {
		t.Fatalf("%v classified %q, want %q", err, c, veto.CauseLocked)
	}
}

// A path that is a directory is refused as not a regular file.
func TestDirectoryIsABadPath(t *testing.T) {
	p := filepath.Join(t.TempDir(), "veto.db")
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), p, Options{})
	var se *veto.StateError
	if !errors.As(err, &se) || se.Cause != veto.CauseBadPath || !strings.Contains(se.Detail, "not a regular file") {
		t.Fatalf("a directory: %v", err)
	}
}

// A file found damaged is marked beside it, with what was seen, and the
// mark names that file only; a file's information without the kernel's
// stat has no identity.
func TestDamageIsMarked(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "veto.db")
	if err := os.WriteFile(p, []byte("not a database at all, not even close to one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, p, Options{}); err == nil {
		t.Fatal("garbage opened")
	}
	b, err := os.ReadFile(markPath(p))
	if err != nil {
		t.Fatalf("no mark: %v", err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := identity(fi)
	if !strings.HasPrefix(string(b), id+"\n") || !strings.Contains(string(b), "shorter than a database header") {
		t.Fatalf("mark %q, want the file's identity %s and what was seen", b, id)
	}
	err = marked(p, fi)
	var se *veto.StateError
	if !errors.As(err, &se) || se.Cause != veto.CauseDamaged || !strings.Contains(se.Detail, "found damaged before: the file is") {
		t.Fatalf("marked: %v", err)
	}
	// A mark without a detail.
	if err := os.WriteFile(markPath(p), []byte(id+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := marked(p, fi); !errors.As(err, &se) || !strings.HasPrefix(se.Detail, "found damaged before; marked in ") {
		t.Fatalf("marked without a detail: %v", err)
	}
	mfi, err := fstest.MapFS{"a": {Data: []byte("x")}}.Stat("a")
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := identity(mfi); ok || id != "" {
		t.Fatalf("identity %q %v of a FileInfo with no Stat_t", id, ok)
	}
}

// A held file found damaged on a later look is marked; a closed one
// answers every call with an error.
func TestHeldFileMarkedAndClosed(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "veto.db")
	s, err := Open(ctx, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	f := OpenFile(p, Options{})
	release, err := f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if err := os.Truncate(p, 100); err != nil {
		t.Fatal(err)
	}
	if release, err := f.Acquire(ctx); err == nil {
		release()
		t.Fatal("a truncated file was acquired")
	}
	if _, err := os.Stat(markPath(p)); err != nil {
		t.Fatalf("the damaged file was not marked: %v", err)
	}
	f.Close()
	if _, err := f.Events(ctx, "r", 0); err == nil {
		t.Error("Events on a closed file answered")
	}
	if err := f.Append(ctx, "r", 1, nil); err == nil {
		t.Error("Append on a closed file answered")
	}
	if _, err := f.Load(ctx, "r"); err == nil {
		t.Error("Load on a closed file answered")
	}
}
