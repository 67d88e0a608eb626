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
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/sqlstore"
)

func heldState(t *testing.T) (string, *File) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "veto.db")
	s, err := Open(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	f := OpenFile(p, Options{BusyTimeout: time.Second})
	t.Cleanup(func() { f.Close() })
	return p, f
}

// A held file used before any Acquire refuses every call with a
// refusal, never a nil store; once acquired it answers, a stale append is
// a conflict named as contention, and Decided finds the decision.
func TestHeldFileAnswersOnlyOnceOpened(t *testing.T) {
	ctx := context.Background()
	p, f := heldState(t)
	var se *veto.StateError
	if _, err := f.Load(ctx, "r"); !errors.As(err, &se) || se.Path != p {
		t.Fatalf("Load before Acquire: %v, want a refusal of %s", err, p)
	}
	if _, _, err := f.Decided(ctx, "r", "c"); !errors.As(err, &se) {
		t.Fatalf("Decided before Acquire: %v", err)
	}
	release, err := f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	yes := true
	t0 := time.Unix(1_800_000_000, 0).UTC()
	if err := f.Append(ctx, "r", 1, []veto.Event{
		{V: veto.EventVersion, Run: "r", Seq: 1, Kind: veto.EventRunStarted, Time: t0, Complete: &yes},
		{V: veto.EventVersion, Run: "r", Seq: 2, Kind: veto.EventAllowed, CallID: "c", Tool: "Read", Time: t0},
	}); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := f.Decided(ctx, "r", "c"); err != nil || !ok || e.Kind != veto.EventAllowed || e.Seq != 2 {
		t.Fatalf("Decided = %+v %v %v, want the allow at 2", e, ok, err)
	}
	err = f.Append(ctx, "r", 1, []veto.Event{{V: veto.EventVersion, Run: "r", Seq: 1, Kind: veto.EventRunStarted, Time: t0, Complete: &yes}})
	if last := veto.StateErrorOf(err); !errors.Is(err, veto.ErrConflict) || last == nil || last.Path != p || !strings.Contains(last.Reason(), "is contended") {
		t.Fatalf("a stale append: %v, want veto.ErrConflict named as contention on %s", err, p)
	}
}

// A held file swapped for a copy of the same size and modification time
// is another file (another inode): it is opened and verified again.
func TestHeldFileSwappedForALookAlikeIsVerifiedAgain(t *testing.T) {
	ctx := context.Background()
	p, f := heldState(t)
	release, err := f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if n := f.Verifications(); n != 1 {
		t.Fatalf("%d verifications, want 1", n)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	twin := p + ".twin"
	if err := os.WriteFile(twin, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(twin, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(twin, p); err != nil {
		t.Fatal(err)
	}
	release, err = f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if n := f.Verifications(); n != 2 {
		t.Fatalf("%d verifications after a swap for a look-alike, want 2", n)
	}
}

// A sound state file marked damaged (the mark names its inode) is refused
// as found damaged before, with the mark's detail as written.
func TestMarkedSoundFileIsRefused(t *testing.T) {
	p, _ := heldState(t)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := identity(fi)
	if err := os.WriteFile(markPath(p), []byte(id+"\n  pages lost  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), p, Options{})
	if err == nil {
		s.Close()
		t.Fatal("a marked file opened")
	}
	var se *veto.StateError
	if want := "found damaged before: pages lost; marked in " + markPath(p); !errors.As(err, &se) || se.Cause != veto.CauseDamaged || se.Detail != want {
		t.Fatalf("Open = %v, want damaged: %s", err, want)
	}
}

// The header checks: a file of exactly a header's size is judged by its
// header, not called short; one whose header names a sound page size
// without SQLite's magic is refused.
func TestHeaderChecksAtTheirBounds(t *testing.T) {
	h := make([]byte, headerSize)
	copy(h, magic)
	binary.BigEndian.PutUint16(h[16:18], 4096)
	var se *veto.StateError
	err := checkHeader(bytes.NewReader(h), headerSize)
	if !errors.As(err, &se) || se.Detail != "the file is 100 bytes, not a whole number of 4096-byte pages" {
		t.Errorf("a header alone: %v", err)
	}
	page := make([]byte, 4096)
	binary.BigEndian.PutUint16(page[16:18], 4096)
	err = checkHeader(bytes.NewReader(page), 4096)
	if !errors.As(err, &se) || se.Cause != veto.CauseDamaged || se.Detail != "the file does not start with SQLite's header" {
		t.Errorf("a sound page size without the magic: %v", err)
	}
}

// SQLite's "cannot open" is unreachable, saying so.
func TestCantOpenIsUnreachable(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "veto.db")
	s, err := sqlstoreOpenRaw(missing)
	if err == nil {
		s.Close()
		t.Fatal("a file in a missing directory opened")
	}
	if c, d := classify(err); c != veto.CauseUnreachable || d != "SQLite cannot open it" {
		t.Fatalf("%v classified %q %q", err, c, d)
	}
}

// sqlstoreOpenRaw opens path as the store does, without veto's checks
// before it (mode=rw: a missing file is not created).
func sqlstoreOpenRaw(path string) (*sqlstore.Store, error) {
	db, err := sql.Open("sqlite", dsn(path, Options{BusyTimeout: time.Second}, true))
	if err != nil {
		return nil, err
	}
	return sqlstore.New(context.Background(), db, dialect)
}

// MoveAside makes the WAL it moves private too.
func TestMoveAsideMakesTheWALPrivate(t *testing.T) {
	p := filepath.Join(t.TempDir(), "veto.db")
	for _, f := range []string{p, p + "-wal", p + "-shm"} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	aside, err := MoveAside(p, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{aside, aside + "-wal", aside + "-shm"} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want 0600", strings.TrimPrefix(f, filepath.Dir(p)), fi, err)
		}
	}
}
