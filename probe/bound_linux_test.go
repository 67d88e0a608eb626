//go:build linux

package probe

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/vetohq/veto"
)

// lowerBound makes files past n bytes too large to hash, for one test.
func lowerBound(t *testing.T, n int64) {
	t.Helper()
	was := maxHash
	maxHash = n
	t.Cleanup(func() { maxHash = was })
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func content(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*13 + 7)
	}
	return b
}

// A file of exactly the bound is hashed; one byte more has a fact without
// a hash, which compares by size and modification time.
func TestHashBoundIsInclusive(t *testing.T) {
	lowerBound(t, 100)
	dir, ctx := t.TempDir(), context.Background()
	for _, n := range []int{99, 100, 101, 40 << 10} {
		p := filepath.Join(dir, "f")
		b := content(n)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Live{}.File(ctx, p)
		if err != nil || f.Size != int64(n) || !f.Exists {
			t.Fatalf("%d bytes: %+v %v", n, f, err)
		}
		if want := n <= 100; (f.Hash != "") != want {
			t.Errorf("%d bytes, bound 100: hash %q, want hashed=%v", n, f.Hash, want)
		} else if want && f.Hash != sum(b) {
			t.Errorf("%d bytes: hash %q, want the file's", n, f.Hash)
		}
	}
}

// hashFile reads no more than one byte past the bound, whatever length
// lstat gave: a file that grew since is not read to its end.
func TestHashFileReadsNoMoreThanTheBound(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "grown")
	b := content(100)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	lowerBound(t, 10)
	h, _, err := hashFile(p, 5, false)
	if err != nil || h != sum(b[:11]) {
		t.Fatalf("bound 10, a 100-byte file lstat saw at 5 bytes: %q %v, want the hash of its first 11 bytes", h, err)
	}
}

// Below the bound, the file is read to its end, whatever length lstat
// gave: a full read that reaches the length given is not taken as the end
// (the file may have grown), and a file shorter than that length (it
// shrank) ends at its end.
func TestHashFileReadsToTheEndBelowTheBound(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	b := content(40 << 10)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int64{32 << 10, 40 << 10, 64 << 10, 0} {
		h, st, err := hashFile(p, size, false)
		if err != nil || h != sum(b) || st != (veto.FileStamp{}) {
			t.Errorf("a %d-byte file lstat saw at %d bytes: %q %+v %v, want the hash of the whole file and no stamp", len(b), size, h, st, err)
		}
	}
}

// A directory swapped in for the file between lstat and open cannot be
// read: the look fails rather than taking it as an empty file.
func TestLookFailsOnAFileSwappedForADirectory(t *testing.T) {
	file, later := settledFile(t)
	ctx := context.Background()
	known, err := later.File(ctx, file)
	if err != nil || known.Stamp == (veto.FileStamp{}) {
		t.Fatalf("settled file: %+v %v", known, err)
	}
	swapped := false
	racy := later
	racy.trusts = func(string) bool { // runs between lstat and open
		if err := os.Remove(file); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(file, 0o755); err != nil {
			t.Fatal(err)
		}
		swapped = true
		return false
	}
	f, err := racy.FileAgain(ctx, file, known)
	if !swapped || err == nil || !strings.Contains(err.Error(), "read failed") {
		t.Fatalf("a directory swapped in: %+v %v (swapped=%v), want a read failure", f, err, swapped)
	}
	if _, _, err := hashFile(filepath.Dir(file), 0, false); err == nil {
		t.Fatal("hashFile read a directory")
	}
}

// A stamp whose change time is the probe's clock exactly is not from the
// future: the known hash is taken.
func TestStampAtTheClockIsTrusted(t *testing.T) {
	file, later := settledFile(t)
	ctx := context.Background()
	known, err := later.File(ctx, file)
	if err != nil || known.Stamp == (veto.FileStamp{}) {
		t.Fatalf("settled file: %+v %v", known, err)
	}
	fake := known
	fake.Hash = "feed"
	at := Live{Now: func() time.Time { return time.Unix(0, known.Stamp.Change) }}
	if f, err := at.FileAgain(ctx, file, fake); err != nil || f.Hash != "feed" {
		t.Fatalf("a stamp at the clock: %+v %v, want the known hash", f, err)
	}
	before := Live{Now: func() time.Time { return time.Unix(0, known.Stamp.Change-1) }}
	if f, err := before.FileAgain(ctx, file, fake); err != nil || f.Hash != known.Hash {
		t.Fatalf("a stamp a nanosecond past the clock: %+v %v, want the file read", f, err)
	}
}

// The filesystem is asked once a look, though both the known fact and the
// remembered one are held against the file.
func TestFilesystemAskedOnceALook(t *testing.T) {
	dir := stampDir(t)
	file := filepath.Join(dir, "a.go")
	if err := os.WriteFile(file, []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := NewLive(4)
	l.Now = func() time.Time { return time.Now().Add(time.Minute) }
	ctx := context.Background()
	known, err := l.File(ctx, file) // remembered
	if err != nil || known.Stamp == (veto.FileStamp{}) {
		t.Fatalf("settled file: %+v %v", known, err)
	}
	asked := 0
	l.trusts = func(string) bool { asked++; return false }
	fake := known
	fake.Hash = "feed"
	f, err := l.FileAgain(ctx, file, fake)
	if err != nil || f.Hash != known.Hash {
		t.Fatalf("a filesystem no longer trusted: %+v %v, want the file read", f, err)
	}
	if asked != 1 {
		t.Fatalf("the filesystem was asked %d times in one look, want once", asked)
	}
}

// A file's information without the kernel's stat gives no stamp.
func TestNoStampWithoutAStat(t *testing.T) {
	fi, err := fstest.MapFS{"a": {Data: []byte("x")}}.Stat("a")
	if err != nil {
		t.Fatal(err)
	}
	if st := statStamp(fi); st != (veto.FileStamp{}) {
		t.Fatalf("stamp %+v from a FileInfo with no Stat_t", st)
	}
}

// Only a local filesystem's paths are trusted: procfs answers statfs, but
// is not one; a path that does not exist is not trusted either.
func TestPathTrustedOnlyOnALocalFilesystem(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc")
	}
	if pathTrusted("/proc/self") {
		t.Error("procfs trusted")
	}
	if pathTrusted(filepath.Join(t.TempDir(), "none", "x")) {
		t.Error("a missing path trusted")
	}
	if !pathTrusted(stampDir(t)) {
		t.Error("the stamp directory's filesystem not trusted")
	}
}
