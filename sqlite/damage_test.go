package sqlite_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/sqlite"
)

// populated makes a state at path with a run of n decisions, its WAL
// checkpointed into the file (the store is closed).
func populated(t testing.TB, path string, n int) {
	t.Helper()
	s, err := sqlite.Open(ctx, path, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	decide(t, s, "r", n)
}

// decide records n decisions in run through a gate on s.
func decide(t testing.TB, s veto.Store, run string, n int) {
	t.Helper()
	g, err := veto.NewGate(veto.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		v := g.Decide(ctx, &veto.Call{ID: fmt.Sprintf("%s-%d", run, i), Tool: "Read", Run: veto.Run{Ref: run, Fresh: true}})
		if !v.Allowed {
			t.Fatalf("decision %d: %+v", i, v)
		}
	}
}

// A damage is what a test does to a state file, and the cause it must be
// refused with.
type damage struct {
	name  string
	cause veto.Cause
	do    func(t testing.TB, path string)
}

// pageSize is the pages' size in the files these tests make.
const pageSize = 4096

var damages = []damage{
	{"truncated to 0", veto.CauseDamaged, func(t testing.TB, p string) { must(t, os.Truncate(p, 0)) }},
	{"truncated to 100 bytes", veto.CauseDamaged, func(t testing.TB, p string) { must(t, os.Truncate(p, 100)) }},
	{"truncated to one page", veto.CauseDamaged, func(t testing.TB, p string) { must(t, os.Truncate(p, pageSize)) }},
	{"B-tree page bytes flipped", veto.CauseDamaged, func(t testing.TB, p string) { flip(t, p) }},
	{"overwritten with garbage", veto.CauseDamaged, func(t testing.TB, p string) {
		fi, err := os.Stat(p)
		must(t, err)
		b := make([]byte, fi.Size())
		r := rand.New(rand.NewPCG(1, 2))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		must(t, os.WriteFile(p, b, 0o600)) // the same inode
	}},
	{"replaced by a newer schema", veto.CauseNewer, func(t testing.TB, p string) {
		other := filepath.Join(filepath.Dir(p), "newer.db")
		populated(t, other, 1)
		markNewer(t, other)
		must(t, os.Rename(other, p))
	}},
	{"migrated in place by a newer veto", veto.CauseNewer, func(t testing.TB, p string) { markNewer(t, p) }},
	{"another program's database", veto.CauseDamaged, func(t testing.TB, p string) {
		other := filepath.Join(filepath.Dir(p), "other.db")
		s, err := sqlite.Open(ctx, other, testOptions)
		must(t, err)
		_, err = s.DB().ExecContext(ctx, `DROP TABLE veto_meta`)
		must(t, err)
		s.Close()
		must(t, os.Rename(other, p))
	}},
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// flip damages the B-tree page headers of every page but the first (its
// type, free-block and cell-count bytes), in place.
func flip(t testing.TB, p string) {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	must(t, err)
	defer f.Close()
	fi, err := f.Stat()
	must(t, err)
	for off := int64(pageSize); off < fi.Size(); off += pageSize {
		_, err := f.WriteAt([]byte{0x37, 0xff, 0xff, 0xff, 0xff}, off)
		must(t, err)
	}
}

// markNewer records more migrations than this veto knows, as a newer
// veto would, through another connection.
func markNewer(t testing.TB, p string) {
	s, err := sqlite.Open(ctx, p, testOptions)
	must(t, err)
	defer s.Close()
	_, err = s.DB().ExecContext(ctx, `UPDATE veto_meta SET value = '99' WHERE key = 'migrations'`)
	must(t, err)
}

func wantCause(t testing.TB, err error, cause veto.Cause, path string) {
	t.Helper()
	var se *veto.StateError
	if !errors.As(err, &se) || !errors.Is(err, veto.ErrStateUnavailable) {
		t.Fatalf("error %v (%T), want a *veto.StateError", err, err)
	}
	if se.Cause != cause || se.Path != path {
		t.Fatalf("refused %q for %s (%v), want %q for %s", se.Cause, se.Path, err, cause, path)
	}
}

// A damaged file is refused when it is opened, with its cause, and never
// taken for a new state.
func TestOpenRefusesDamage(t *testing.T) {
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "veto.db")
			populated(t, p, 20)
			d.do(t, p)
			s, err := sqlite.Open(ctx, p, sqlite.Options{Verify: true})
			if err == nil {
				s.Close()
				t.Fatal("a damaged state was opened")
			}
			wantCause(t, err, d.cause, p)
			if d.cause == veto.CauseDamaged && !strings.Contains(err.Error(), p) {
				t.Fatalf("the error does not name the file: %v", err)
			}
		})
	}
}

// A state file held open (the hook server's) is refused as soon as it is
// damaged, however it was, and used again once a sound file is back.
func TestFileRefusesDamageWhileOpen(t *testing.T) {
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "veto.db")
			populated(t, p, 20)
			f := sqlite.OpenFile(p, testOptions)
			defer f.Close()
			release, err := f.Acquire(ctx)
			must(t, err)
			decide(t, f, "held", 3)
			release()

			d.do(t, p)
			for i := 0; i < 2; i++ { // refused until sound, every time
				release, err = f.Acquire(ctx)
				if err == nil {
					release()
					t.Fatalf("acquire %d: a damaged state was used", i)
				}
				wantCause(t, err, d.cause, p)
			}

			good := filepath.Join(filepath.Dir(p), "good.db")
			populated(t, good, 1)
			must(t, os.Rename(good, p))
			release, err = f.Acquire(ctx)
			must(t, err)
			decide(t, f, "after", 1)
			release()
		})
	}
}

// An existing empty file is damaged, never a new state; a missing one is
// made whole, 0600, whatever the umask.
func TestEmptyIsNotNew(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "veto.db")
	must(t, os.WriteFile(p, nil, 0o600))
	_, err := sqlite.Open(ctx, p, sqlite.Options{})
	wantCause(t, err, veto.CauseDamaged, p)

	old := syscall.Umask(0)
	defer syscall.Umask(old)
	q := filepath.Join(dir, "new", "veto.db")
	s, err := sqlite.Open(ctx, q, sqlite.Options{})
	must(t, err)
	s.Close()
	fi, err := os.Stat(q)
	must(t, err)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("a new state has mode %v", fi.Mode().Perm())
	}
	left, _ := filepath.Glob(filepath.Join(dir, "new", ".*"))
	if len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// Characters a SQLite URI gives a meaning to open exactly the file named.
func TestPathIsEscaped(t *testing.T) {
	for _, name := range []string{"st?x=1", "a#b", "sp%20ace", "100%", "with space", "q?mode=ro&vfs=unix"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			p := filepath.Join(dir, "veto.db")
			s, err := sqlite.Open(ctx, p, sqlite.Options{})
			must(t, err)
			decide(t, s, "r", 1)
			s.Close()
			fi, err := os.Stat(p)
			must(t, err)
			if fi.Mode().Perm() != 0o600 {
				t.Fatalf("%s has mode %v", p, fi.Mode().Perm())
			}
			entries, _ := os.ReadDir(filepath.Dir(dir))
			if len(entries) != 1 || entries[0].Name() != name {
				t.Fatalf("files beside the state's directory: %v", entries)
			}
		})
	}
}

// Many processes' first use at once: each opens the one new state.
func TestConcurrentCreation(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s", "veto.db")
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			s, err := sqlite.Open(ctx, p, sqlite.Options{BusyTimeout: 10 * time.Second})
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for i := 0; i < 8; i++ {
		must(t, <-errs)
	}
}

// A held file makes its own checkpoints, which do not count as the file
// moving: it is verified once however long it is used.
func TestFileOwnCheckpointsAreNotMoves(t *testing.T) {
	p := filepath.Join(t.TempDir(), "veto.db")
	f := sqlite.OpenFile(p, sqlite.Options{Verify: true})
	defer f.Close()
	size := func() int64 {
		fi, err := os.Stat(p)
		must(t, err)
		return fi.Size()
	}
	release, err := f.Acquire(ctx)
	must(t, err)
	release()
	before := size()
	for i := 0; i < 30; i++ {
		release, err := f.Acquire(ctx)
		must(t, err)
		decide(t, f, fmt.Sprintf("r%d", i), 40)
		release()
	}
	if n := f.Verifications(); n != 1 {
		t.Fatalf("verified %d times", n)
	}
	if size() <= before {
		t.Fatalf("no checkpoint: the file is %d bytes, was %d", size(), before)
	}
	if fi, err := os.Stat(p + "-wal"); err == nil && fi.Size() > 32<<20 { // twice the size the store checkpoints past
		t.Fatalf("the WAL grew to %d bytes", fi.Size())
	}
	// Another process's checkpoint moves the file: verified again.
	s, err := sqlite.Open(ctx, p, testOptions)
	must(t, err)
	decide(t, s, "other", 1)
	_, err = s.DB().ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	must(t, err)
	s.Close()
	release, err = f.Acquire(ctx)
	must(t, err)
	release()
	if n := f.Verifications(); n != 2 {
		t.Fatalf("verified %d times after another's checkpoint", n)
	}
}

// Another process that opens the held file and appends to it, without a
// checkpoint, does not move it: the held file goes on without verifying
// it again (a full quick_check, 17 ms on a 5.5 MB state), and reads what
// the other appended. Opening a state used to set its mode each time,
// which moves its change time even when the mode was already 0600.
func TestAnotherProcessAppendDoesNotMoveTheHeldFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "veto.db")
	f := sqlite.OpenFile(p, sqlite.Options{Verify: true})
	defer f.Close()
	release, err := f.Acquire(ctx)
	must(t, err)
	decide(t, f, "mine", 1)
	release()
	for i := range 3 {
		s, err := sqlite.Open(ctx, p, testOptions)
		must(t, err)
		decide(t, s, fmt.Sprintf("other%d", i), 1)
		must(t, s.Close())
	}
	release, err = f.Acquire(ctx)
	must(t, err)
	st, err := f.Load(ctx, "other2")
	release()
	must(t, err)
	if st.Next < 2 {
		t.Fatalf("the held file does not see the other process's run: next %d", st.Next)
	}
	if n := f.Verifications(); n != 1 {
		t.Fatalf("verified %d times after three other processes appended, want once", n)
	}
}
