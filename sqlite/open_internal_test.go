package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vetohq/veto"
)

// escape writes the bytes SQLite's URI parser gives a meaning to (and
// spaces and control bytes) as %XX, and every other byte as itself.
func TestEscapeWritesTheURIBytesAsEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"/s/veto.db":       "/s/veto.db",
		"/a#b/veto.db":     "/a%23b/veto.db",
		"/q?mode=ro/x":     "/q%3Fmode=ro/x",
		"/100%/x":          "/100%25/x",
		"/with space/x":    "/with%20space/x",
		"/tab\there\x7f/x": "/tab%09here%7F/x",
		"/é&=+;/x":         "/é&=+;/x",
	} {
		if got := escape(in); got != want {
			t.Errorf("escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// SQLite's own "database or disk is full" (here: the page count it may
// grow to reached) is classified as full, and the refusal says so.
func TestSQLiteFullIsFull(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "full.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // the pragma is the connection's
	for _, q := range []string{`CREATE TABLE t (b BLOB)`, `PRAGMA max_page_count = 4`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	_, err = db.Exec(`INSERT INTO t VALUES (zeroblob(1000000))`)
	if err == nil {
		t.Fatal("a write past max_page_count succeeded")
	}
	if c, _ := classify(err); c != veto.CauseFull {
		t.Fatalf("%v classified %q, want full", err, c)
	}
	if se := Refusal("/s/veto.db", err); se.Cause != veto.CauseFull || !strings.Contains(se.Reason(), "the disk is full") {
		t.Fatalf("Refusal = %v", se)
	}
}

// An error nothing classifies is the state unreachable, not full, on a
// disk with room.
func TestUnclassifiedRefusalIsUnreachable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "veto.db")
	se := Refusal(p, errors.New("something failed"))
	if se.Cause != veto.CauseUnreachable || se.Path != p {
		t.Fatalf("Refusal = %+v, want unreachable for %s", se, p)
	}
}

// Verify refuses damage where opening reads nothing: a page of the
// events table, whose header and schema and veto_meta are sound, fails
// SQLite's quick_check and the file is refused (and marked) as damaged.
func TestVerifyRefusesDamageOpeningDoesNotRead(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "veto.db")
	s, err := Open(ctx, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := veto.NewGate(veto.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		g.Decide(ctx, &veto.Call{ID: fmt.Sprint("c", i), Tool: "Read", Run: veto.Run{Ref: "r", Fresh: true}})
	}
	var root, size int64
	if err := s.DB().QueryRowContext(ctx, `SELECT rootpage FROM sqlite_master WHERE name = 'veto_events'`).Scan(&root); err != nil {
		t.Fatal(err)
	}
	if err := s.DB().QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
		t.Fatal(err)
	}
	s.Close() // the WAL is checkpointed into the file
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The page's B-tree header: its type, free-block and cell-count bytes.
	if _, err := f.WriteAt([]byte{0x37, 0xff, 0xff, 0xff, 0xff}, (root-1)*size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// Opening without Verify reads none of it.
	plain, err := Open(ctx, p, Options{BusyTimeout: time.Second})
	if err != nil {
		t.Fatalf("the damage is where opening reads: %v", err)
	}
	plain.Close()
	fds := openFDs(t)
	s, err = Open(ctx, p, Options{Verify: true})
	if err == nil {
		s.Close()
		t.Fatal("a file whose events page is damaged passed Verify")
	}
	if n := openFDs(t); n != fds {
		t.Errorf("the refusal left %d descriptors open", n-fds)
	}
	var se *veto.StateError
	if !errors.As(err, &se) || se.Cause != veto.CauseDamaged || se.Detail != "SQLite's quick_check fails" || se.Path != p {
		t.Fatalf("Verify = %v, want damaged: quick_check fails", err)
	}
	if _, err := os.Stat(markPath(p)); err != nil {
		t.Fatalf("the damaged file is not marked: %v", err)
	}
}

// A disk with no room left (proc's, which has no blocks at all) is low on
// space, and an unreachable refusal there is the disk full; a disk with
// room is not, and neither is no path.
func TestLowSpaceIsTheDisksRoom(t *testing.T) {
	full := "/proc/veto.db" // nothing is written: only the file system's counts are read
	var st syscall.Statfs_t
	if syscall.Statfs("/proc", &st) != nil || st.Bavail != 0 {
		t.Skip("proc reports room on this system")
	}
	if !lowSpace(full) {
		t.Fatal("a disk with no room is not low on space")
	}
	if lowSpace(filepath.Join(t.TempDir(), "veto.db")) || lowSpace("") {
		t.Fatal("a disk with room, or no path, is low on space")
	}
	if se := Refusal(full, errors.New("disk I/O error")); se.Cause != veto.CauseFull || se.Detail != "" {
		t.Fatalf("an unreachable refusal on a full disk: %+v, want full", se)
	}
}

// mark marks only a regular file that is there: a damaged file removed
// before it is marked (moved aside by a repair, say), or a directory at
// the path, leaves no mark.
func TestMarkOnlyARegularFile(t *testing.T) {
	dir := t.TempDir()
	damaged := &veto.StateError{Cause: veto.CauseDamaged, Detail: "the file is empty"}
	gone := filepath.Join(dir, "gone.db")
	mark(gone, damaged)
	sub := filepath.Join(dir, "dir.db")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	mark(sub, damaged)
	for _, p := range []string{gone, sub} {
		if _, err := os.Stat(markPath(p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a mark (%v)", p, err)
		}
	}
	// A regular file is marked, with what was seen.
	f := filepath.Join(dir, "f.db")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	mark(f, damaged)
	if b, err := os.ReadFile(markPath(f)); err != nil || !strings.HasSuffix(string(b), "\nthe file is empty\n") {
		t.Fatalf("mark of a regular file: %q %v", b, err)
	}
}

// A SQLite file without veto's schema is refused and closed: the last
// connection gone, SQLite removes the WAL and shared-memory files it made
// beside it.
func TestAnotherProgramsDatabaseIsClosed(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite", "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('x')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, p, Options{})
	if err == nil {
		s.Close()
		t.Fatal("another program's database opened")
	}
	// Refused, it is as it was: not switched to veto's WAL mode (the
	// header's bytes 18 and 19), nothing written.
	after, rerr := os.ReadFile(p)
	if rerr != nil || !bytes.Equal(before, after) {
		t.Errorf("the refused file changed (header bytes 18-19: %v, now %v)", before[18:20], after[18:20])
	}
	var se *veto.StateError
	if !errors.As(err, &se) || se.Cause != veto.CauseDamaged || se.Detail != "a SQLite file without veto's schema" {
		t.Fatalf("Open = %v", err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(p + suffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left beside the refused file (%v): it is still open", suffix, err)
		}
	}
}

// A process that lost the race to create the state (the file at the path
// is another's, linked first) uses that one and leaves its mark alone.
func TestCreateLosingTheRaceKeepsTheWinnersMark(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "veto.db")
	if err := os.WriteFile(p, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	mark(p, &veto.StateError{Cause: veto.CauseDamaged, Detail: "seen by the winner"})
	before, err := os.ReadFile(markPath(p))
	if err != nil {
		t.Fatal(err)
	}
	if err := create(ctx, p, Options{BusyTimeout: time.Second}); err != nil {
		t.Fatalf("create over a file made first: %v", err)
	}
	if after, err := os.ReadFile(markPath(p)); err != nil || string(after) != string(before) {
		t.Fatalf("the winner's mark: %q %v, want %q", after, err, before)
	}
	if b, _ := os.ReadFile(p); len(b) != 4096 || b[0] != 0 {
		t.Fatal("the winner's file was replaced")
	}
}

// A file whose schema page SQLite cannot read (veto's header checks pass)
// is refused as damaged and closed: no WAL or shared-memory file is left
// beside it.
func TestUnreadableSchemaIsRefusedAndClosed(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "veto.db")
	s, err := Open(ctx, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The schema table's B-tree header, just past the file header.
	if _, err := f.WriteAt([]byte{0x37, 0xff, 0xff, 0xff, 0xff}, headerSize); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s, err = Open(ctx, p, Options{})
	if err == nil {
		s.Close()
		t.Fatal("a file with an unreadable schema page opened")
	}
	var se *veto.StateError
	if !errors.As(err, &se) || se.Cause != veto.CauseDamaged {
		t.Fatalf("Open = %v, want damaged", err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(p + suffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left beside the refused file (%v): it is still open", suffix, err)
		}
	}
}

// A closed file is not opened again: a request after Close (a record
// made late, after the service's end) is refused, and creates nothing
// where the state lived. Opened again, CI once saw the directory's
// removal fail on the WAL it created.
func TestClosedFileIsNotOpenedAgain(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "veto.db")
	f := OpenFile(path, Options{Verify: true, BusyTimeout: time.Second})
	ctx := context.Background()
	release, err := f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"veto.db", "veto.db-wal", "veto.db-shm"} {
		os.Remove(filepath.Join(dir, name))
	}
	if _, err := f.Acquire(ctx); !errors.Is(err, errClosed) {
		t.Fatalf("Acquire after Close: %v, want the file closed", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("after Close the directory holds %v", left)
	}
	// Closed before it was ever opened: the same.
	g := OpenFile(filepath.Join(dir, "never.db"), Options{})
	g.Close()
	if _, err := g.Acquire(ctx); !errors.Is(err, errClosed) {
		t.Fatalf("Acquire of a file closed unopened: %v", err)
	}
}
