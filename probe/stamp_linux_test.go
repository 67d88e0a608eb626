//go:build linux

package probe

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/vetohq/veto"
)

// TestFileAgainTrustsOnlyAnUnmovedSettledStamp pins when a probe may take
// a known hash without reading the file: a stamp recorded only for a
// settled change on a local filesystem, and found again unmoved, with the
// same size and modification time.
//
// E29
func TestFileAgainTrustsOnlyAnUnmovedSettledStamp(t *testing.T) {
	file, later := settledFile(t)
	dir, ctx := filepath.Dir(file), context.Background()

	// Just written: the change is not settled, so no stamp.
	if f, err := (Live{}).File(ctx, file); err != nil || f.Stamp != (veto.FileStamp{}) || f.Hash == "" {
		t.Fatalf("fresh file: %+v %v", f, err)
	}
	known, err := later.File(ctx, file)
	if err != nil || known.Stamp == (veto.FileStamp{}) || known.Stamp.Ino == 0 {
		t.Fatalf("settled file: %+v %v", known, err)
	}
	real := known.Hash

	// A known hash the file does not have shows whether it was read.
	fake := known
	fake.Hash = "feed"
	again := func(k veto.FileFact) veto.FileFact {
		t.Helper()
		f, err := later.FileAgain(ctx, file, k)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	if f := again(fake); f.Hash != "feed" || f.Stamp != known.Stamp {
		t.Fatalf("unmoved stamp: read again (%+v)", f)
	}
	for name, k := range map[string]func(veto.FileFact) veto.FileFact{
		"no stamp":   func(k veto.FileFact) veto.FileFact { k.Stamp = veto.FileStamp{}; return k },
		"other path": func(k veto.FileFact) veto.FileFact { k.Path += "x"; return k },
		"other size": func(k veto.FileFact) veto.FileFact { k.Size++; return k },
		"other time": func(k veto.FileFact) veto.FileFact { k.ModTime = k.ModTime.Add(time.Second); return k },
		"no hash":    func(k veto.FileFact) veto.FileFact { k.Hash = ""; return k },
		"other ino":  func(k veto.FileFact) veto.FileFact { k.Stamp.Ino++; return k },
	} {
		if f := again(k(fake)); f.Hash != real {
			t.Errorf("%s: hash %q, want the file's", name, f.Hash)
		}
	}
	// Unsettled by the real clock, an unmoved stamp is still trusted: it
	// was settled when it was recorded.
	if f, _ := (Live{}).FileAgain(ctx, file, fake); f.Hash != "feed" {
		t.Fatalf("recorded settled stamp not trusted later: %+v", f)
	}

	// Other content of the same size, the modification time put back: the
	// change time moves, and the file is read.
	fi, _ := os.Stat(file)
	if err := os.WriteFile(file, []byte("package b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if f := again(fake); f.Hash == "feed" || f.Hash == real || f.Same(known) {
		t.Fatalf("changed file taken from its stamp: %+v", f)
	}

	// The same content swapped in as another file: another inode.
	swap := filepath.Join(dir, "b.go")
	if err := os.WriteFile(swap, []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(swap, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(swap, file); err != nil {
		t.Fatal(err)
	}
	if f := again(fake); f.Hash != real || !f.Same(known) {
		t.Fatalf("swapped file: %+v", f)
	}

	// A stamp is not believed once the filesystem no longer keeps stamps
	// (a device number freed and taken by another).
	now, err := later.File(ctx, file)
	if err != nil || now.Stamp == (veto.FileStamp{}) {
		t.Fatalf("%+v %v", now, err)
	}
	poisoned := now
	poisoned.Hash = "feed"
	if f := again(poisoned); f.Hash != "feed" {
		t.Fatalf("the swapped-in file's own stamp not believed: %+v", f)
	}
	elsewhere := later
	elsewhere.trusts = func(string) bool { return false }
	if f, err := elsewhere.FileAgain(ctx, file, poisoned); err != nil || f.Hash != now.Hash {
		t.Fatalf("stamp believed on an untrusted filesystem: %+v %v", f, err)
	}

	t.Run("open for writing", noStampWhileOpenForWriting)
	t.Run("clock set back", stampNotTrustedFromTheFuture)
	t.Run("swapped between lstat and open", noStampForAFileSwappedWhileLooking)
}

// stampNotTrustedFromTheFuture: a stamp whose change time is later than
// the probe's clock (the clock was set back) is not believed, and a file
// changed "in the future" is not settled.
func stampNotTrustedFromTheFuture(t *testing.T) {
	file, later := settledFile(t)
	ctx := context.Background()
	known, err := later.File(ctx, file)
	if err != nil || known.Stamp == (veto.FileStamp{}) {
		t.Fatalf("settled file: %+v %v", known, err)
	}
	fake := known
	fake.Hash = "feed"
	back := Live{Now: func() time.Time { return time.Now().Add(-time.Hour) }}
	f, err := back.FileAgain(ctx, file, fake)
	if err != nil || f.Hash != known.Hash {
		t.Fatalf("a stamp newer than the clock was believed: %+v %v", f, err)
	}
	if f.Stamp != (veto.FileStamp{}) {
		t.Fatalf("a change newer than the clock was taken as settled: %+v", f)
	}
	// Just inside and just outside the settling time, by the probe's clock.
	st := known.Stamp.Change
	for _, tc := range []struct {
		after   time.Duration
		stamped bool
	}{{Settle, false}, {Settle + time.Millisecond, true}} {
		at := time.Unix(0, st).Add(tc.after)
		l := Live{Now: func() time.Time { return at }}
		f, err := l.File(ctx, file)
		if err != nil || (f.Stamp != (veto.FileStamp{})) != tc.stamped {
			t.Errorf("%v after the change: stamp %+v, want stamped=%v (%v)", tc.after, f.Stamp, tc.stamped, err)
		}
	}
}

// noStampForAFileSwappedWhileLooking: another file renamed over the path
// after lstat and before open is hashed, but the stamp lstat saw is not
// recorded with its hash.
func noStampForAFileSwappedWhileLooking(t *testing.T) {
	file, later := settledFile(t)
	ctx := context.Background()
	known, err := later.File(ctx, file)
	if err != nil || known.Stamp == (veto.FileStamp{}) {
		t.Fatalf("settled file: %+v %v", known, err)
	}
	fi, _ := os.Stat(file)
	swapped := false
	racy := later
	// The filesystem check runs between lstat and open: swap the file there.
	racy.trusts = func(string) bool {
		swap := filepath.Join(filepath.Dir(file), "swap.go")
		if err := os.WriteFile(swap, []byte("package z\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(swap, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(swap, file); err != nil {
			t.Fatal(err)
		}
		swapped = true
		return false
	}
	f, err := racy.FileAgain(ctx, file, known)
	if err != nil || !swapped {
		t.Fatalf("%+v %v swapped=%v", f, err, swapped)
	}
	if f.Hash == known.Hash {
		t.Fatalf("the swapped-in file was not read: %+v", f)
	}
	if f.Stamp != (veto.FileStamp{}) {
		t.Fatalf("the stamp of the file lstat saw was recorded with the hash of another: %+v", f)
	}
}

func TestNetworkFilesystemsKeepNoStamps(t *testing.T) {
	for _, magic := range []uint32{0x6969 /* nfs */, 0xFF534D42 /* cifs */, 0x65735546 /* fuse */, 0x794C7630 /* overlay */} {
		if trustedFS(magic) {
			t.Errorf("%#x trusted", magic)
		}
	}
	if !trustedFS(0xEF53) || !trustedFS(0x01021994) {
		t.Error("ext4 or tmpfs not trusted")
	}
}

// TestNewLiveRemembersOnlySettledHashes pins the hook server's probe: it
// answers from a hash it took under a settled stamp while the stamp stays
// unmoved, reads a changed file again, and holds at most its bound.
func TestNewLiveRemembersOnlySettledHashes(t *testing.T) {
	dir := stampDir(t)
	ctx := context.Background()
	write := func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	file := write("a.go", "package a\n")

	fresh := NewLive(2)
	if _, err := fresh.File(ctx, file); err != nil || len(fresh.hashes.m) != 0 {
		t.Fatalf("an unsettled file was remembered: %v %v", fresh.hashes.m, err)
	}

	l := NewLive(2)
	l.Now = func() time.Time { return time.Now().Add(time.Minute) }
	first, err := l.File(ctx, file)
	if err != nil || first.Stamp == (veto.FileStamp{}) {
		t.Fatalf("settled file: %+v %v", first, err)
	}
	poisoned := first
	poisoned.Hash = "feed"
	l.hashes.m[file] = poisoned
	if f, _ := l.File(ctx, file); f.Hash != "feed" {
		t.Fatalf("unmoved stamp: the file was read again (%+v)", f)
	}

	fi, _ := os.Stat(file)
	write("a.go", "package b\n")
	if err := os.Chtimes(file, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	changed, _ := l.File(ctx, file)
	if changed.Hash == "feed" || changed.Hash == first.Hash {
		t.Fatalf("a changed file was answered from memory: %+v", changed)
	}

	for _, n := range []string{"b.go", "c.go", "d.go"} {
		if _, err := l.File(ctx, write(n, n)); err != nil {
			t.Fatal(err)
		}
	}
	if len(l.hashes.m) > 2 {
		t.Fatalf("%d remembered, bound 2", len(l.hashes.m))
	}
}

// noStampWhileOpenForWriting: a writer that already holds the file (an
// open descriptor, or a shared writable mapping whose descriptor is
// closed) could change it without moving its change time, so no stamp is
// recorded until it lets go.
func noStampWhileOpenForWriting(t *testing.T) {
	file, later := settledFile(t)
	ctx := context.Background()
	stamped := func() bool {
		t.Helper()
		f, err := later.File(ctx, file)
		if err != nil || f.Hash == "" {
			t.Fatalf("%+v %v", f, err)
		}
		return f.Stamp != (veto.FileStamp{})
	}

	w, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if stamped() {
		t.Fatal("stamped while open for writing")
	}
	m, err := syscall.Mmap(int(w.Fd()), 0, 10, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	m[0] = 'P' // a write through the mapping; later ones to this page move nothing
	if stamped() {
		t.Fatal("stamped while a writable mapping lives")
	}
	if err := syscall.Munmap(m); err != nil {
		t.Fatal(err)
	}
	if !stamped() {
		t.Fatal("no stamp once every writer let go")
	}
}

// settledFile writes a.go in a stampDir and returns it with a probe whose
// clock runs a minute ahead, so that the file counts as long settled.
func settledFile(t *testing.T) (string, Live) {
	t.Helper()
	file := filepath.Join(stampDir(t), "a.go")
	if err := os.WriteFile(file, []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return file, Live{Now: func() time.Time { return time.Now().Add(time.Minute) }}
}

// stampDir returns a temporary directory on a filesystem that keeps
// stamps, or skips the test.
func stampDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var sfs syscall.Statfs_t
	if err := syscall.Statfs(dir, &sfs); err != nil || !trustedFS(uint32(sfs.Type)) {
		t.Skipf("the temporary directory's filesystem (%#x) keeps no stamps", sfs.Type)
	}
	return dir
}

// The hash memory never holds more than its bound, after any look.
func TestHashMemoryBoundAfterEveryLook(t *testing.T) {
	dir := stampDir(t)
	l := NewLive(2)
	l.Now = func() time.Time { return time.Now().Add(time.Minute) }
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := l.File(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		if len(l.hashes.m) > 2 || len(l.hashes.m) == 0 {
			t.Fatalf("after %s: %d remembered, bound 2", n, len(l.hashes.m))
		}
	}
}
